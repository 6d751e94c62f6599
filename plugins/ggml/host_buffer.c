/* GEMM_RVV's host buffer type: plain host memory, each buffer a mapping of its own, so that
 * freed it goes back to the system at once. llama.cpp loading without mmap (-lm none) reads
 * each weight bound for GEMM_RVV's buffer through a few such 1 MiB buffers; taken from the
 * heap instead, their pages would stay resident in it once freed. */
#define _DEFAULT_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "plugin.h"

struct host_buffer {
    void *base;
    size_t mapped;
};

static void host_free(ggml_backend_buffer_t buf)
{
    struct host_buffer *h = buf->context;
    munmap(h->base, h->mapped);
    free(h);
}

static void *host_base(ggml_backend_buffer_t buf)
{
    return ((struct host_buffer *)buf->context)->base;
}

static void host_memset(ggml_backend_buffer_t buf, struct ggml_tensor *t, uint8_t value,
                        size_t offset, size_t size)
{
    (void)buf;
    memset((char *)t->data + offset, value, size);
}

static void host_set(ggml_backend_buffer_t buf, struct ggml_tensor *t, const void *data,
                     size_t offset, size_t size)
{
    (void)buf;
    memcpy((char *)t->data + offset, data, size);
}

static void host_get(ggml_backend_buffer_t buf, const struct ggml_tensor *t, void *data,
                     size_t offset, size_t size)
{
    (void)buf;
    memcpy(data, (const char *)t->data + offset, size);
}

static bool host_cpy(ggml_backend_buffer_t buf, const struct ggml_tensor *src,
                     struct ggml_tensor *dst)
{
    (void)buf;
    if (!src->buffer || !ggml_backend_buffer_is_host(src->buffer))
        return false;
    memcpy(dst->data, src->data, ggml_nbytes(src));
    return true;
}

static void host_clear(ggml_backend_buffer_t buf, uint8_t value)
{
    memset(host_base(buf), value, buf->size);
}

static const struct ggml_backend_buffer_i host_iface = {
    .free_buffer = host_free,
    .base = host_base,
    .memset_tensor = host_memset,
    .set_tensor = host_set,
    .get_tensor = host_get,
    .cpy_tensor = host_cpy,
    .clear = host_clear,
};

static const char *host_name(ggml_backend_buffer_type_t buft)
{
    (void)buft;
    return GRG_NAME "_Host";
}

static ggml_backend_buffer_t host_alloc(ggml_backend_buffer_type_t buft, size_t size)
{
    struct host_buffer *h = calloc(1, sizeof *h);
    if (h) {
        h->mapped = size ? size : 1;
        h->base = mmap(NULL, h->mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (h->base == MAP_FAILED) {
            free(h);
            h = NULL;
        }
    }
    if (!h) {
        grg_log(GGML_LOG_LEVEL_ERROR, "%s: cannot allocate a host buffer of %zu bytes\n",
                GRG_NAME, size);
        return NULL;
    }
    return ggml_backend_buffer_init(buft, host_iface, h, size);
}

static size_t host_alignment(ggml_backend_buffer_type_t buft)
{
    (void)buft;
    return GEMM_RVV_WEIGHT_ALIGN;
}

static bool host_is_host(ggml_backend_buffer_type_t buft)
{
    (void)buft;
    return true;
}

static struct ggml_backend_buffer_type host_buffer_type = {
    .iface = {.name = host_name,
              .alloc_buffer = host_alloc,
              .alignment = host_alignment,
              .is_host = host_is_host},
};

ggml_backend_buffer_type_t grg_host_buffer_type(void)
{
    return &host_buffer_type;
}
