#include "q8_0.h"

#include <float.h>
#include <math.h>

#include "bf16.h"
#include "q8_0_pack.h"

/* t rounded to the nearest integer, ties to even (the vector conversion at RNE), whatever the
 * rounding mode: a tie is where roundf (ties away) moved t by exactly 1/2. */
static float round_half_even(float t)
{
    float r = roundf(t);
    if (fabsf(r - t) == 0.5f)
        r = 2.0f * roundf(0.5f * t);
    return r;
}

void gr_q8_quantize_rows(const float *x, size_t rows, size_t ldx, size_t k,
                         const struct gr_q8_x *out)
{
    const size_t kb = k / GR_Q8_BLOCK;
    for (size_t r = 0; r < rows; r++) {
        for (size_t b = 0; b < kb; b++) {
            const float *v = x + r * ldx + b * GR_Q8_BLOCK;
            int8_t *q = out->q + r * k + b * GR_Q8_BLOCK;
            float amax = 0.0f;
            int finite = 1;
            for (size_t j = 0; j < GR_Q8_BLOCK; j++) {
                float a = fabsf(v[j]);
                finite &= a <= FLT_MAX; /* false for Inf and NaN */
                amax = a > amax ? a : amax;
            }
            const struct gr_q8_x_scale s = gr_q8_x_scale(finite ? amax : 0.0f);
            out->d[r * kb + b] = finite ? s.d : NAN;
            for (size_t j = 0; j < GR_Q8_BLOCK; j++)
                q[j] = finite && s.d != 0.0f ? (int8_t)round_half_even(v[j] * s.inv) : 0;
        }
    }
}

/* The exact sum of one block's 32 products (at most 32 * 128 * 127 in magnitude); the
 * weights `stride` bytes apart (1 in GGUF blocks, a panel row in packed ones). */
static int32_t block_sum(const int8_t *w, size_t stride, const int8_t *x)
{
    int32_t s = 0;
    for (size_t j = 0; j < GR_Q8_BLOCK; j++)
        s += (int32_t)w[j * stride] * x[j];
    return s;
}

void gr_q8_fallback(const struct gr_q8_x *x, size_t m, const struct gr_weight_view *w,
                    const float *bias, void *y, size_t ldy, int y_bf16, size_t col_begin,
                    size_t col_end, float *d_buf)
{
    const size_t k = w->k, kb = k / GR_Q8_BLOCK, pw = w->panel_width;
    for (size_t n = col_begin; n < col_end; n++) {
        const unsigned char *row =
            w->packed ? NULL : w->q8_blocks + n * kb * GR_Q8_BLOCK_BYTES;
        for (size_t b = 0; b < kb; b++)
            d_buf[b] = w->packed ? gr_q8_packed_scale(w->packed, k, pw, n, b)
                                 : gr_fp16_to_f32(gr_q8_scale_bits(row + b * GR_Q8_BLOCK_BYTES));
        for (size_t r = 0; r < m; r++) {
            float acc = 0.0f;
            for (size_t b = 0; b < kb; b++) {
                const int8_t *qw = w->packed ? gr_q8_packed_values(w->packed, k, pw, n, b)
                                             : (const int8_t *)(row + b * GR_Q8_BLOCK_BYTES + 2);
                float isum = (float)block_sum(qw, w->packed ? pw : 1,
                                              x->q + r * k + b * GR_Q8_BLOCK);
                /* Its own statement: the product of the scales is rounded before the fma. */
                float s = d_buf[b] * x->d[r * kb + b];
                acc = fmaf(isum, s, acc);
            }
            gr_store_output(y, r * ldy + n, y_bf16, acc, bias, n);
        }
    }
}
