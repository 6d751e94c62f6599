/* The public Linear calls: argument checks, the choice between kernel and fallback, and the
 * per-call activation widening. */
#include <stdlib.h>

#include "activations.h"
#include "cpu.h"
#include "fallback.h"
#include "gemm_rvv.h"
#include "kernel.h"
#include "pack.h"
#include "registry_lookup.h"

struct gemm_rvv_weight {
    size_t n, k;
    size_t panel_width;
    uint32_t *packed;
    /* The registry rows of this (N, K), found once at create: calls do no search. */
    struct gr_shape_kernels kernels;
};

/* ---- argument checks ---------------------------------------------------------------------- */

/* Elements a row-major [rows, cols] array with row stride ld spans, or 0 on overflow. */
static size_t span(size_t rows, size_t cols, size_t ld, size_t elem)
{
    size_t n;
    if (__builtin_mul_overflow(rows - 1, ld, &n) || __builtin_add_overflow(n, cols, &n) ||
        n > (size_t)PTRDIFF_MAX / elem)
        return 0;
    return n;
}

static gemm_rvv_status check_matrix(int64_t rows, int64_t cols, int64_t ld, size_t elem)
{
    if (rows <= 0 || cols <= 0)
        return GEMM_RVV_ERR_SIZE;
    if (ld < cols)
        return GEMM_RVV_ERR_STRIDE;
    if ((uint64_t)rows > SIZE_MAX || (uint64_t)ld > SIZE_MAX ||
        span((size_t)rows, (size_t)cols, (size_t)ld, elem) == 0)
        return GEMM_RVV_ERR_OVERFLOW;
    return GEMM_RVV_OK;
}

static gemm_rvv_status check_call(const uint16_t *x, int64_t m, int64_t ldx, int64_t n,
                                  int64_t k, void *y, int64_t ldy, gemm_rvv_type y_type)
{
    gemm_rvv_status s;
    if (!x || !y)
        return GEMM_RVV_ERR_NULL;
    if (y_type != GEMM_RVV_F32 && y_type != GEMM_RVV_BF16)
        return GEMM_RVV_ERR_TYPE;
    if ((s = check_matrix(m, k, ldx, sizeof(uint16_t))) != GEMM_RVV_OK)
        return s;
    return check_matrix(m, n, ldy, y_type == GEMM_RVV_F32 ? sizeof(float) : sizeof(uint16_t));
}

/* ---- one call ----------------------------------------------------------------------------- */

static gemm_rvv_status run(const uint16_t *x, size_t m, size_t ldx,
                           const struct gr_weight_view *w, const struct gr_kernel_entry *kernel,
                           const float *bias, void *y, size_t ldy, gemm_rvv_type y_type)
{
    int y_bf16 = y_type == GEMM_RVV_BF16;
    if (!kernel || !gr_cpu_has_vector()) {
        float *col = malloc(w->k * sizeof *col);
        if (!col)
            return GEMM_RVV_ERR_NOMEM;
        gr_fallback(x, m, ldx, w, bias, y, ldy, y_bf16, col);
        free(col);
        return GEMM_RVV_OK;
    }
    size_t floats;
    if (__builtin_mul_overflow(w->k, (size_t)kernel->bucket, &floats) ||
        floats > SIZE_MAX / sizeof(float))
        return GEMM_RVV_ERR_OVERFLOW;
    float *x_f = malloc(floats * sizeof *x_f);
    if (!x_f)
        return GEMM_RVV_ERR_NOMEM;
    gr_widen_activations(x, m, ldx, w->k, kernel->bucket, x_f);
    struct gr_kernel_args a = {x_f, m, w->packed, w->panel_width, w->plain, w->ldw,
                               bias, y, ldy, y_bf16};
    (w->packed ? kernel->packed : kernel->plain)(&a, 0, w->n);
    free(x_f);
    return GEMM_RVV_OK;
}

/* ---- the API ------------------------------------------------------------------------------ */

gemm_rvv_status gemm_rvv_weight_create(const uint16_t *w, int64_t n, int64_t k, int64_t ldw,
                                       gemm_rvv_weight **out)
{
    gemm_rvv_status s;
    if (!w || !out)
        return GEMM_RVV_ERR_NULL;
    if ((s = check_matrix(n, k, ldw, sizeof(uint16_t))) != GEMM_RVV_OK)
        return s;
    size_t pw = gr_panel_width();
    size_t words = gr_packed_words((size_t)n, (size_t)k, pw);
    if (words == 0)
        return GEMM_RVV_ERR_OVERFLOW;
    struct gemm_rvv_weight *obj = malloc(sizeof *obj);
    uint32_t *packed = malloc(words * sizeof *packed);
    if (!obj || !packed) {
        free(obj);
        free(packed);
        return GEMM_RVV_ERR_NOMEM;
    }
    obj->n = (size_t)n;
    obj->k = (size_t)k;
    obj->panel_width = pw;
    obj->packed = packed;
    gr_pack(w, obj->n, obj->k, (size_t)ldw, pw, packed);
    gr_find_kernels(obj->n, obj->k, &obj->kernels);
    *out = obj;
    return GEMM_RVV_OK;
}

gemm_rvv_status gemm_rvv_weight_update(gemm_rvv_weight *weight, const uint16_t *w, int64_t ldw)
{
    if (!weight || !w)
        return GEMM_RVV_ERR_NULL;
    gemm_rvv_status s = check_matrix((int64_t)weight->n, (int64_t)weight->k, ldw,
                                     sizeof(uint16_t));
    if (s != GEMM_RVV_OK)
        return s;
    gr_pack(w, weight->n, weight->k, (size_t)ldw, weight->panel_width, weight->packed);
    return GEMM_RVV_OK;
}

void gemm_rvv_weight_free(gemm_rvv_weight *weight)
{
    if (!weight)
        return;
    free(weight->packed);
    free(weight);
}

gemm_rvv_status gemm_rvv_linear(const uint16_t *x, int64_t m, int64_t ldx,
                                const gemm_rvv_weight *weight, const float *bias, void *y,
                                int64_t ldy, gemm_rvv_type y_type)
{
    if (!weight)
        return GEMM_RVV_ERR_NULL;
    gemm_rvv_status s = check_call(x, m, ldx, (int64_t)weight->n, (int64_t)weight->k, y, ldy,
                                   y_type);
    if (s != GEMM_RVV_OK)
        return s;
    struct gr_weight_view view = {weight->packed, weight->panel_width, NULL, 0, weight->n,
                                  weight->k};
    return run(x, (size_t)m, (size_t)ldx, &view, gr_pick_kernel(&weight->kernels, (size_t)m),
               bias, y, (size_t)ldy, y_type);
}

gemm_rvv_status gemm_rvv_linear_plain(const uint16_t *x, int64_t m, int64_t ldx,
                                      const uint16_t *w, int64_t n, int64_t k, int64_t ldw,
                                      const float *bias, void *y, int64_t ldy,
                                      gemm_rvv_type y_type)
{
    if (!w)
        return GEMM_RVV_ERR_NULL;
    gemm_rvv_status s = check_call(x, m, ldx, n, k, y, ldy, y_type);
    if (s == GEMM_RVV_OK)
        s = check_matrix(n, k, ldw, sizeof(uint16_t));
    if (s != GEMM_RVV_OK)
        return s;
    struct gr_shape_kernels kernels;
    gr_find_kernels((uint64_t)n, (uint64_t)k, &kernels);
    struct gr_weight_view view = {NULL, 0, w, (size_t)ldw, (size_t)n, (size_t)k};
    return run(x, (size_t)m, (size_t)ldx, &view, gr_pick_kernel(&kernels, (size_t)m), bias, y,
               (size_t)ldy, y_type);
}
