#include "check.h"

/* Elements a row-major [rows, cols] array with row stride ld spans, or 0 on overflow. */
static size_t span(size_t rows, size_t cols, size_t ld, size_t elem)
{
    size_t n;
    if (__builtin_mul_overflow(rows - 1, ld, &n) || __builtin_add_overflow(n, cols, &n) ||
        n > (size_t)PTRDIFF_MAX / elem)
        return 0;
    return n;
}

gemm_rvv_status gr_check_matrix(int64_t rows, int64_t cols, int64_t ld, size_t elem)
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

static size_t y_elem(gemm_rvv_type y_type)
{
    return y_type == GEMM_RVV_F32 ? sizeof(float) : sizeof(uint16_t);
}

gemm_rvv_status gr_check_call(const void *x, size_t x_elem, int64_t m, int64_t ldx, int64_t n,
                              int64_t k, const void *y, int64_t ldy, gemm_rvv_type y_type)
{
    gemm_rvv_status s;
    if (!x || !y)
        return GEMM_RVV_ERR_NULL;
    if (y_type != GEMM_RVV_F32 && y_type != GEMM_RVV_BF16)
        return GEMM_RVV_ERR_TYPE;
    if ((s = gr_check_matrix(m, k, ldx, x_elem)) != GEMM_RVV_OK)
        return s;
    return gr_check_matrix(m, n, ldy, y_elem(y_type));
}

/* Whether the bytes from a's first element to its last meet b's. */
static int overlap(const void *a, size_t a_rows, size_t a_cols, size_t a_ld, size_t a_elem,
                   const void *b, size_t b_rows, size_t b_cols, size_t b_ld, size_t b_elem)
{
    uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
    uintptr_t a1 = a0 + span(a_rows, a_cols, a_ld, a_elem) * a_elem;
    uintptr_t b1 = b0 + span(b_rows, b_cols, b_ld, b_elem) * b_elem;
    return a0 < b1 && b0 < a1;
}

gemm_rvv_status gr_check_alias(const void *x, size_t x_elem, size_t m, size_t ldx,
                               const uint16_t *w, size_t n, size_t k, size_t ldw,
                               const float *bias, const void *y, size_t ldy,
                               gemm_rvv_type y_type)
{
    const size_t ye = y_elem(y_type);
    if (overlap(y, m, n, ldy, ye, x, m, k, ldx, x_elem) ||
        (w && overlap(y, m, n, ldy, ye, w, n, k, ldw, sizeof *w)) ||
        (bias && overlap(y, m, n, ldy, ye, bias, 1, n, n, sizeof *bias)))
        return GEMM_RVV_ERR_ALIAS;
    return GEMM_RVV_OK;
}

gemm_rvv_status gr_check_alias_bytes(const void *y, size_t m, size_t n, size_t ldy,
                                     gemm_rvv_type y_type, const void *mem, size_t bytes)
{
    return overlap(y, m, n, ldy, y_elem(y_type), mem, 1, bytes, bytes, 1) ? GEMM_RVV_ERR_ALIAS
                                                                         : GEMM_RVV_OK;
}
