/* The scalar fallback: any shape, any machine; the reference the kernels must match. */
#ifndef GEMM_RVV_FALLBACK_H
#define GEMM_RVV_FALLBACK_H

#include <stddef.h>
#include <stdint.h>

/* Where the fallback reads W: packed weights (packed != NULL, in the layout of the variant
 * that packed them: enum gr_layout) or a plain [n, k] array; for Q8_0 weights (format
 * GR_FORMAT_Q8_0) packed Q8_0 weights or the plain GGUF blocks at q8_blocks. */
struct gr_weight_view {
    const void *packed;
    uint32_t layout;
    size_t panel_width;
    const uint16_t *plain;
    size_t ldw;
    size_t n, k;
    uint32_t format; /* enum gr_format */
    const unsigned char *q8_blocks;
};

/* Columns of W the fallback widens and sums at a time: four independent sums share each load
 * of X and keep the FPU busy. */
#define GR_FALLBACK_COLS 4

/* Y = X W^T (+ bias) for m rows and the columns [col_begin, col_end), each sum in increasing
 * k, one fmaf at a time from -0.0f, as the kernels do. x_f holds the m rows of X widened to
 * FP32, row after row (gr_widen_rows); col_buf holds GR_FALLBACK_COLS * k floats. */
void gr_fallback(const float *x_f, size_t m, const struct gr_weight_view *w, const float *bias,
                 void *y, size_t ldy, int y_bf16, size_t col_begin, size_t col_end,
                 float *col_buf);

#endif
