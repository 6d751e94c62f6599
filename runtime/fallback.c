#include "fallback.h"

#include <math.h>

#include "bf16.h"
#include "pack.h"

static void widen_column(const struct gr_weight_view *w, size_t n, float *col)
{
    const size_t k = w->k;
    if (w->packed) {
        for (size_t j = 0; j < k; j++)
            col[j] = gr_bf16_to_f32(gr_packed_get(w->packed, k, w->panel_width, n, j));
    } else {
        const uint16_t *row = w->plain + n * w->ldw;
        for (size_t j = 0; j < k; j++)
            col[j] = gr_bf16_to_f32(row[j]);
    }
}

void gr_fallback(const float *x_f, size_t m, const struct gr_weight_view *w, const float *bias,
                 void *y, size_t ldy, int y_bf16, size_t col_begin, size_t col_end,
                 float *col_buf)
{
    const size_t k = w->k;
    for (size_t n = col_begin; n < col_end; n++) {
        widen_column(w, n, col_buf);
        for (size_t r = 0; r < m; r++) {
            const float *xr = x_f + r * k;
            /* The kernels' order and roundings: one rounded product, then fused multiply-adds
             * (vfmacc). A plain `acc += a * b` would round the product first, which differs
             * when a product of two tiny BF16 values falls below FP32's normal range. */
            float acc = xr[0] * col_buf[0];
#pragma GCC unroll 4
            for (size_t j = 1; j < k; j++)
                acc = fmaf(xr[j], col_buf[j], acc);
            if (bias)
                acc += bias[n];
            if (y_bf16)
                ((uint16_t *)y)[r * ldy + n] = gr_f32_to_bf16(acc);
            else
                ((float *)y)[r * ldy + n] = acc;
        }
    }
}
