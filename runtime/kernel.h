/* The contract between generated kernels and the runtime (internal: engines never see it).
 *
 * A kernel computes Y[m, n] = sum over k of X[m, k] * W[n, k] (+ bias[n]) for the columns
 * [col_begin, col_end) of one call. Each output sums its K products in increasing k, one FMA at
 * a time, starting from +0.0f; the bias is added after the sum. The scalar fallback does the
 * same, which makes the two agree bit for bit (a BF16 product is exact in FP32). */
#ifndef GEMM_RVV_KERNEL_H
#define GEMM_RVV_KERNEL_H

#include <stddef.h>
#include <stdint.h>

struct gr_kernel_args {
    /* Activations widened to FP32 once per call, k-major: X[m, k] is x[k * bucket + m], where
     * bucket is the kernel's M bucket (1 for GEMV). Rows m >= M are never read. */
    const float *x;
    size_t m; /* rows, 1 .. bucket */

    /* Packed weights: panels of panel_width columns (gr_panel_width()), each holding K/2
     * rounded up k-pairs of panel_width 32-bit words; word (p, j) of panel q is
     * W[q*panel_width + j, 2p] | W[q*panel_width + j, 2p+1] << 16, zero past N and K. */
    const uint32_t *packed;
    size_t panel_width;

    /* Plain weights: PyTorch's [N, K] BF16 row-major, row stride ldw elements (>= K). */
    const uint16_t *plain;
    size_t ldw;

    const float *bias; /* N values added after the sum, or NULL */
    void *y;           /* output rows, row stride ldy elements */
    size_t ldy;
    int y_bf16;        /* 0: FP32 output; 1: BF16, rounded to nearest even, NaN kept NaN */
};

/* Computes the columns [col_begin, col_end) of every row. For packed weights col_begin is a
 * multiple of panel_width. */
typedef void (*gr_kernel_fn)(const struct gr_kernel_args *a, size_t col_begin, size_t col_end);

/* One row of the generated registry. */
struct gr_kernel_entry {
    uint32_t bucket; /* 1 for GEMV */
    uint64_t n, k;
    gr_kernel_fn packed;
    gr_kernel_fn plain;
    const char *name;
};

extern const struct gr_kernel_entry gr_registry[];
extern const size_t gr_registry_count; /* entries sorted by (n, k, bucket) */

#endif
