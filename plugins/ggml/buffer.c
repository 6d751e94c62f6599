/* The GEMM_RVV buffer type. A buffer is plain memory holding each tensor's bytes as ggml lays
 * them out (ggml reads them back, copies them to other backends and keeps activations here);
 * a weight the library has plans for is also packed into a gemm_rvv weight object when a write
 * reaches its last byte, so that MUL_MAT calls never pack. Writes that stop short of the end
 * drop the packed copy, and MUL_MAT then runs on the plain bytes. */
#include <stdlib.h>
#include <string.h>

#include "plugin.h"

#define GRG_ALIGNMENT 64

struct grg_buffer {
    void *base;
    struct grg_packed *packed;
};

static void drop_packed(struct grg_buffer *b, struct ggml_tensor *t)
{
    for (struct grg_packed **p = &b->packed; *p; p = &(*p)->next) {
        if ((*p)->tensor == t) {
            struct grg_packed *gone = *p;
            *p = gone->next;
            gemm_rvv_weight_free(gone->weight);
            free(gone);
            break;
        }
    }
    t->extra = NULL;
}

static void drop_all(struct grg_buffer *b)
{
    while (b->packed) {
        struct grg_packed *gone = b->packed;
        b->packed = gone->next;
        gemm_rvv_weight_free(gone->weight);
        free(gone);
    }
}

/* Packs (or re-packs) the tensor's bytes; on failure the tensor stays plain, which is slower
 * but gives the same results. */
static void pack(ggml_backend_buffer_t buf, struct ggml_tensor *t)
{
    struct grg_buffer *b = buf->context;
    const uint16_t *w = t->data;
    int64_t n = t->ne[1], k = t->ne[0], ldw = (int64_t)(t->nb[1] / sizeof(uint16_t));
    struct grg_packed *p = t->extra;
    if (p && p->tensor == t) {
        gemm_rvv_status s = gemm_rvv_weight_update(p->weight, w, ldw);
        if (s == GEMM_RVV_OK)
            return;
        grg_log(GGML_LOG_LEVEL_WARN, "%s: re-packing %s failed (%s): runs unpacked\n", GRG_NAME,
                t->name, gemm_rvv_strerror(s));
        drop_packed(b, t);
        return;
    }
    p = calloc(1, sizeof *p);
    gemm_rvv_status s = p ? gemm_rvv_weight_create(w, n, k, ldw, &p->weight) : GEMM_RVV_ERR_NOMEM;
    if (s != GEMM_RVV_OK) {
        grg_log(GGML_LOG_LEVEL_WARN, "%s: packing %s failed (%s): runs unpacked\n", GRG_NAME,
                t->name, gemm_rvv_strerror(s));
        free(p);
        return;
    }
    p->tensor = t;
    p->next = b->packed;
    b->packed = p;
    t->extra = p;
    grg_log(GGML_LOG_LEVEL_DEBUG, "%s: packed %s (N = %lld, K = %lld)\n", GRG_NAME, t->name,
            (long long)n, (long long)k);
}

/* After a write of [offset, offset + size): pack when it reached the weight's end, else drop
 * the packed copy, which no longer matches. Compute buffers hold activations: never packed. */
static void written(ggml_backend_buffer_t buf, struct ggml_tensor *t, size_t offset, size_t size)
{
    if (buf->usage == GGML_BACKEND_BUFFER_USAGE_COMPUTE || t->view_src ||
        !grg_weight_has_plans(t))
        return;
    if (offset + size == ggml_nbytes(t))
        pack(buf, t);
    else
        drop_packed(buf->context, t);
}

static void buffer_free(ggml_backend_buffer_t buf)
{
    struct grg_buffer *b = buf->context;
    drop_all(b);
    free(b->base);
    free(b);
}

static void *buffer_base(ggml_backend_buffer_t buf)
{
    return ((struct grg_buffer *)buf->context)->base;
}

/* A tensor placed anew holds no packed copy yet (nor one left from an earlier placement). */
static enum ggml_status buffer_init_tensor(ggml_backend_buffer_t buf, struct ggml_tensor *t)
{
    if (!t->view_src)
        drop_packed(buf->context, t);
    return GGML_STATUS_SUCCESS;
}

static void buffer_memset(ggml_backend_buffer_t buf, struct ggml_tensor *t, uint8_t value,
                          size_t offset, size_t size)
{
    memset((char *)t->data + offset, value, size);
    written(buf, t, offset, size);
}

static void buffer_set(ggml_backend_buffer_t buf, struct ggml_tensor *t, const void *data,
                       size_t offset, size_t size)
{
    memcpy((char *)t->data + offset, data, size);
    written(buf, t, offset, size);
}

static void buffer_get(ggml_backend_buffer_t buf, const struct ggml_tensor *t, void *data,
                       size_t offset, size_t size)
{
    (void)buf;
    memcpy(data, (const char *)t->data + offset, size);
}

static void buffer_clear(ggml_backend_buffer_t buf, uint8_t value)
{
    struct grg_buffer *b = buf->context;
    drop_all(b);
    memset(b->base, value, buf->size);
}

static void buffer_reset(ggml_backend_buffer_t buf)
{
    drop_all(buf->context);
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

static const char *buft_name(ggml_backend_buffer_type_t buft)
{
    (void)buft;
    return GRG_NAME;
}

static ggml_backend_buffer_t buft_alloc(ggml_backend_buffer_type_t buft, size_t size)
{
    struct grg_buffer *b = calloc(1, sizeof *b);
    size_t rounded = (size + GRG_ALIGNMENT - 1) / GRG_ALIGNMENT * GRG_ALIGNMENT;
    if (b)
        b->base = aligned_alloc(GRG_ALIGNMENT, rounded ? rounded : GRG_ALIGNMENT);
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
    return GRG_ALIGNMENT;
}

static struct ggml_backend_buffer_type buffer_type = {
    .iface = {.name = buft_name, .alloc_buffer = buft_alloc, .alignment = buft_alignment},
};

ggml_backend_buffer_type_t grg_buffer_type(void)
{
    return &buffer_type;
}

bool grg_is_own_buffer_type(ggml_backend_buffer_type_t buft)
{
    return buft == &buffer_type;
}
