/* GGUF's Q8_0 format in the library: its blocks (34 bytes: an FP16 scale, then 32 int8), the
 * quantisation of FP32 activations to the same form, and the scalar fallback that every Q8_0
 * kernel must match bit for bit (docs/numerics.md, "Q8_0 weights"). */
#ifndef GEMM_RVV_Q8_0_H
#define GEMM_RVV_Q8_0_H

#include <stddef.h>
#include <stdint.h>

#include "fallback.h"
#include "gemm_rvv.h"
#include "gr_contract.h"
#include "q8_0_scale.h"

/* FP32 activations quantised per block of 32 k, the same for every row of X: row r's block b
 * has scale d[r * kb + b] and values q[r * k + 32 * b .. + 32) (kb = k / 32). */
struct gr_q8_x {
    float *d;
    int8_t *q;
};

/* Bytes of the quantised form of `rows` rows of k (the scales first, then the values, then
 * room for the tiles' reads past the last row: gr_contract.h's GR_Q8_X_AHEAD). */
static inline size_t gr_q8_x_bytes(size_t rows, size_t k)
{
    return rows * (k / GR_Q8_BLOCK * sizeof(float) + k) + GR_Q8_X_AHEAD;
}

/* Lays the quantised form of `rows` rows out in mem (gr_q8_x_bytes() bytes). */
static inline struct gr_q8_x gr_q8_x_at(void *mem, size_t rows, size_t k)
{
    float *d = mem;
    return (struct gr_q8_x){d, (int8_t *)(d + rows * (k / GR_Q8_BLOCK))};
}

/* Quantises rows [0, rows) of X (row stride ldx floats, k a multiple of 32) into out, per
 * block, as ggml's CPU backend quantises a Q8_0 product's activations: gr_q8_x_scale of
 * amax = max |x| (an FP16 scale d; q = x * (1 / (amax / 127)) rounded to nearest, ties to
 * even), every q 0 where d is 0; a block holding an Inf or a NaN gets d = NaN and every q 0,
 * so that its outputs are NaN, as a BF16 call's would be. One rule for the fallback and every
 * kernel: this code, and the vector quantiser's the same operations. */
void gr_q8_quantize_rows(const float *x, size_t rows, size_t ldx, size_t k,
                         const struct gr_q8_x *out);

/* Y = X W^T (+ bias) for m quantised rows and the columns [col_begin, col_end) of Q8_0 weights,
 * packed (w->packed, w->panel_width) or in GGUF blocks (w->q8_blocks): each output as ggml's
 * ggml_vec_dot_q8_0_q8_0 sums it, from acc = +0.0f, over the blocks in increasing k,
 * acc = fmaf((float)isum, d_w * d_x, acc), isum the exact int32 sum of the block's 32
 * products; bias after. d_buf holds k / 32 floats (one column's scales). */
void gr_q8_fallback(const struct gr_q8_x *x, size_t m, const struct gr_weight_view *w,
                    const float *bias, void *y, size_t ldy, int y_bf16, size_t col_begin,
                    size_t col_end, float *d_buf);

#endif
