/* The GEMM_RVV buffer type. A buffer is one allocation. A weight the library has plans for
 * (grg_packs) holds only its packed form there: its allocation size is the packed size, a
 * gemm_rvv weight object is made over that memory when the tensor is placed, writes pack into
 * it and reads give back the BF16 bits written. Every other tensor (activations, norms,
 * weights without plans) is plain bytes as ggml lays them out. The buffer lists its packed
 * weights by address: ggml's RPC server makes a new tensor for each command it gets, never
 * calls init_tensor on BF16 weights and refuses a tensor->extra, so a weight is placed by its
 * first write there (when the packed form fits the space ggml's layout gives it). */
#define _DEFAULT_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "plugin.h"

/* A buffer's memory is its own mapping: freed, it goes back to the system at once (a heap
 * block of a model's size may stay in malloc's heap, and a server's memory would not come
 * down when its client leaves). Pages are zero until written. */
struct grg_buffer {
    void *base;
    size_t mapped; /* bytes mapped at base */
    struct grg_packed *packed; /* the packed tensors placed in it */
};

static bool compute_buffer(ggml_backend_buffer_t buf)
{
    return buf->usage == GGML_BACKEND_BUFFER_USAGE_COMPUTE;
}

static void buffer_free(ggml_backend_buffer_t buf);

/* A buffer of this file's (not a multi-buffer ggml made of several). */
static struct grg_buffer *own_buffer(ggml_backend_buffer_t buf)
{
    return buf && buf->iface.free_buffer == buffer_free ? buf->context : NULL;
}

static struct grg_packed *packed_at(struct grg_buffer *b, const void *data)
{
    for (struct grg_packed *p = b ? b->packed : NULL; p; p = p->next)
        if (p->data == data)
            return p;
    return NULL;
}

/* The packed tensor a tensor's bytes belong to (itself or the tensor it views), or NULL. */
static struct grg_packed *packed_of(const struct ggml_tensor *t)
{
    const struct ggml_tensor *base = t->view_src ? t->view_src : t;
    return base->data ? packed_at(own_buffer(base->buffer), base->data) : NULL;
}

struct grg_packed *grg_packed_weight(const struct ggml_tensor *t)
{
    return t->view_src ? NULL : packed_of(t);
}

static void drop(struct grg_buffer *b, struct grg_packed *gone)
{
    for (struct grg_packed **p = &b->packed; *p; p = &(*p)->next)
        if (*p == gone) {
            *p = gone->next;
            break;
        }
    gemm_rvv_weight_free(gone->weight);
    free(gone);
}

static void drop_all(struct grg_buffer *b)
{
    while (b->packed)
        drop(b, b->packed);
}

/* Makes the weight object of an [n, k] packed tensor over its place in the buffer. */
static enum ggml_status place_packed(struct grg_buffer *b, void *data, int64_t n, int64_t k,
                                     size_t bytes, const char *name)
{
    struct grg_packed *p = calloc(1, sizeof *p);
    gemm_rvv_status s = p ? gemm_rvv_weight_create_in(n, k, data, bytes, &p->weight)
                          : GEMM_RVV_ERR_NOMEM;
    if (s != GEMM_RVV_OK) {
        grg_log(GGML_LOG_LEVEL_ERROR, "%s: cannot place %s: %s\n", GRG_NAME, name,
                gemm_rvv_strerror(s));
        free(p);
        return s == GEMM_RVV_ERR_NOMEM ? GGML_STATUS_ALLOC_FAILED : GGML_STATUS_FAILED;
    }
    p->data = data;
    p->bytes = bytes;
    p->n = n;
    p->k = k;
    p->next = b->packed;
    b->packed = p;
    return GGML_STATUS_SUCCESS;
}

/* A tensor placed anew: a packed one gets its weight object (one left from an earlier
 * placement at the same address is dropped). */
static enum ggml_status buffer_init_tensor(ggml_backend_buffer_t buf, struct ggml_tensor *t)
{
    struct grg_buffer *b = buf->context;
    if (t->view_src)
        return GGML_STATUS_SUCCESS;
    struct grg_packed *old = packed_at(b, t->data);
    if (old)
        drop(b, old);
    if (compute_buffer(buf) || !grg_packs(t))
        return GGML_STATUS_SUCCESS;
    size_t bytes;
    if (gemm_rvv_weight_bytes(t->ne[1], t->ne[0], &bytes) != GEMM_RVV_OK)
        return GGML_STATUS_FAILED;
    return place_packed(b, t->data, t->ne[1], t->ne[0], bytes, t->name);
}

/* A write to a weight that was never placed (init_tensor not called: ggml's RPC server, whose
 * client lays the buffer out with ggml_nbytes): placed packed when the packed form fits the
 * tensor's bytes rounded to the buffer's alignment, else it stays plain (served unpacked). */
static struct grg_packed *place_on_write(ggml_backend_buffer_t buf, struct ggml_tensor *t)
{
    struct grg_buffer *b = buf->context;
    struct ggml_tensor *base = t->view_src ? t->view_src : t;
    size_t bytes, room = (ggml_nbytes(base) + GEMM_RVV_WEIGHT_ALIGN - 1) /
                         GEMM_RVV_WEIGHT_ALIGN * GEMM_RVV_WEIGHT_ALIGN;
    if (compute_buffer(buf) || !grg_packs(base) || base->buffer != buf ||
        (uintptr_t)base->data % GEMM_RVV_WEIGHT_ALIGN != 0 ||
        gemm_rvv_weight_bytes(base->ne[1], base->ne[0], &bytes) != GEMM_RVV_OK || bytes > room ||
        (char *)base->data + bytes > (char *)b->base + buf->size)
        return NULL;
    if (place_packed(b, base->data, base->ne[1], base->ne[0], bytes, base->name) !=
        GGML_STATUS_SUCCESS)
        return NULL;
    return b->packed;
}

/* ---- bytes of a packed tensor, in ggml's layout ------------------------------------------ */

/* Where a write or read of [offset, offset + size) of tensor t falls in its packed tensor's
 * own bytes (t may be a view of it). */
static size_t packed_offset(const struct ggml_tensor *t, const struct grg_packed *p,
                            size_t offset)
{
    return (size_t)((const char *)t->data - (const char *)p->data) + offset;
}

static void read_bytes(const struct grg_packed *p, size_t from, size_t size, unsigned char *out)
{
    size_t first = from / 2, end = (from + size + 1) / 2;
    uint16_t chunk[1024];
    for (size_t e = first; e < end; e += 1024) {
        size_t count = end - e < 1024 ? end - e : 1024;
        gemm_rvv_weight_read(p->weight, chunk, e, count);
        /* the bytes of this chunk inside [from, from + size) */
        size_t lo = e * 2 > from ? e * 2 : from;
        size_t hi = (e + count) * 2 < from + size ? (e + count) * 2 : from + size;
        memcpy(out + (lo - from), (unsigned char *)chunk + (lo - e * 2), hi - lo);
    }
}

/* Writes bytes into a packed tensor: whole elements straight from the source, an element cut
 * by the range's ends merged with the byte it keeps. */
static void write_bytes(struct grg_packed *p, size_t from, size_t size, const unsigned char *in)
{
    if (size == 0)
        return;
    if (from % 2) {
        uint16_t e;
        read_bytes(p, from - 1, 1, (unsigned char *)&e);
        ((unsigned char *)&e)[1] = in[0];
        gemm_rvv_weight_write(p->weight, &e, from / 2, 1);
        from++, in++, size--;
    }
    size_t whole = size / 2;
    if (whole && (uintptr_t)in % 2 == 0) {
        gemm_rvv_weight_write(p->weight, (const uint16_t *)(const void *)in, from / 2, whole);
    } else {
        uint16_t chunk[1024];
        for (size_t done = 0; done < whole; done += 1024) {
            size_t count = whole - done < 1024 ? whole - done : 1024;
            memcpy(chunk, in + 2 * done, count * 2);
            gemm_rvv_weight_write(p->weight, chunk, from / 2 + done, count);
        }
    }
    if (size % 2) {
        uint16_t e;
        size_t at = from + 2 * whole;
        read_bytes(p, at, 2, (unsigned char *)&e);
        ((unsigned char *)&e)[0] = in[2 * whole];
        gemm_rvv_weight_write(p->weight, &e, at / 2, 1);
    }
}

static void buffer_set(ggml_backend_buffer_t buf, struct ggml_tensor *t, const void *data,
                       size_t offset, size_t size)
{
    struct grg_packed *p = packed_of(t);
    if (!p)
        p = place_on_write(buf, t);
    if (!p) {
        memcpy((char *)t->data + offset, data, size);
        return;
    }
    write_bytes(p, packed_offset(t, p, offset), size, data);
    grg_release_source(data, size);
}

static void buffer_get(ggml_backend_buffer_t buf, const struct ggml_tensor *t, void *data,
                       size_t offset, size_t size)
{
    (void)buf;
    const struct grg_packed *p = packed_of(t);
    if (p)
        read_bytes(p, packed_offset(t, p, offset), size, data);
    else
        memcpy(data, (const char *)t->data + offset, size);
}

static void buffer_memset(ggml_backend_buffer_t buf, struct ggml_tensor *t, uint8_t value,
                          size_t offset, size_t size)
{
    (void)buf;
    struct grg_packed *p = packed_of(t);
    if (!p) {
        memset((char *)t->data + offset, value, size);
        return;
    }
    unsigned char pattern[2048];
    memset(pattern, value, sizeof pattern);
    size_t at = packed_offset(t, p, offset);
    for (size_t done = 0; done < size; done += sizeof pattern)
        write_bytes(p, at + done, size - done < sizeof pattern ? size - done : sizeof pattern,
                    pattern);
}

/* Every byte of every tensor set to value: packed tensors get their objects anew (padding
 * zeroed) and every element set to it. */
static void buffer_clear(ggml_backend_buffer_t buf, uint8_t value)
{
    struct grg_buffer *b = buf->context;
    struct grg_packed *was = b->packed;
    b->packed = NULL;
    memset(b->base, value, buf->size);
    unsigned char pattern[2048];
    memset(pattern, value, sizeof pattern);
    while (was) {
        struct grg_packed *next = was->next;
        int64_t n = was->n, k = was->k;
        void *data = was->data;
        size_t bytes = was->bytes;
        gemm_rvv_weight_free(was->weight);
        free(was);
        if (place_packed(b, data, n, k, bytes, "a weight") == GGML_STATUS_SUCCESS)
            for (size_t done = 0; done < (size_t)(n * k) * 2; done += sizeof pattern)
                write_bytes(b->packed, done,
                            (size_t)(n * k) * 2 - done < sizeof pattern ? (size_t)(n * k) * 2 - done
                                                                        : sizeof pattern,
                            pattern);
        was = next;
    }
}

/* The tensors are gone (ggml places new ones): nothing may point at their objects. */
static void buffer_reset(ggml_backend_buffer_t buf)
{
    drop_all(buf->context);
}

static void buffer_free(ggml_backend_buffer_t buf)
{
    struct grg_buffer *b = buf->context;
    drop_all(b);
    munmap(b->base, b->mapped);
    free(b);
}

static void *buffer_base(ggml_backend_buffer_t buf)
{
    return ((struct grg_buffer *)buf->context)->base;
}

static const struct ggml_backend_buffer_i buffer_iface = {
    .free_buffer = buffer_free,
    .base = buffer_base,
    .init_tensor = buffer_init_tensor,
    .memset_tensor = buffer_memset,
    .set_tensor = buffer_set,
    .get_tensor = buffer_get,
    .clear = buffer_clear,
    .reset = buffer_reset,
};

/* ---- buffer type ------------------------------------------------------------------------- */

static const char *buft_name(ggml_backend_buffer_type_t buft)
{
    (void)buft;
    return GRG_NAME;
}

static ggml_backend_buffer_t buft_alloc(ggml_backend_buffer_type_t buft, size_t size)
{
    struct grg_buffer *b = calloc(1, sizeof *b);
    if (b) {
        b->mapped = size ? size : 1;
        b->base = mmap(NULL, b->mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (b->base == MAP_FAILED)
            b->base = NULL;
    }
    if (!b || !b->base) {
        grg_log(GGML_LOG_LEVEL_ERROR, "%s: cannot allocate a buffer of %zu bytes\n", GRG_NAME,
                size);
        free(b);
        return NULL;
    }
    return ggml_backend_buffer_init(buft, buffer_iface, b, size);
}

static size_t buft_alignment(ggml_backend_buffer_type_t buft)
{
    (void)buft;
    return GEMM_RVV_WEIGHT_ALIGN;
}

/* A packed tensor takes its packed size; ggml's allocator asks before placing it. */
static size_t buft_alloc_size(ggml_backend_buffer_type_t buft, const struct ggml_tensor *t)
{
    (void)buft;
    size_t bytes;
    if (grg_packs(t) && gemm_rvv_weight_bytes(t->ne[1], t->ne[0], &bytes) == GEMM_RVV_OK &&
        bytes > ggml_nbytes(t))
        return bytes;
    return ggml_nbytes(t);
}

static struct ggml_backend_buffer_type buffer_type = {
    .iface = {.name = buft_name,
              .alloc_buffer = buft_alloc,
              .alignment = buft_alignment,
              .alloc_size = buft_alloc_size},
};

ggml_backend_buffer_type_t grg_buffer_type(void)
{
    return &buffer_type;
}

bool grg_is_own_buffer_type(ggml_backend_buffer_type_t buft)
{
    return buft == &buffer_type;
}

bool grg_reads_packed(const struct ggml_tensor *t)
{
    const struct ggml_tensor *base = t->view_src ? t->view_src : t;
    if (packed_of(base))
        return true;
    /* Not placed yet (llama.cpp asks before it places weights): packed once placed there. */
    return base->buffer && grg_is_own_buffer_type(base->buffer->buft) && !base->data &&
           !compute_buffer(base->buffer) && grg_packs(base);
}
