#include "fallback.h"

#include <math.h>

#include "bf16.h"
#include "pack.h"

static void widen_column(const struct gr_weight_view *w, size_t n, float *col)
{
    for (size_t k = 0; k < w->k; k++)
        col[k] = gr_bf16_to_f32(w->packed ? gr_packed_get(w->packed, w->k, w->panel_width, n, k)
                                          : w->plain[n * w->ldw + k]);
}

void gr_fallback(const uint16_t *x, size_t m, size_t ldx, const struct gr_weight_view *w,
                 const float *bias, void *y, size_t ldy, int y_bf16, size_t col_begin,
                 size_t col_end, float *col_buf)
{
    for (size_t n = col_begin; n < col_end; n++) {
        widen_column(w, n, col_buf);
        for (size_t r = 0; r < m; r++) {
            const uint16_t *xr = x + r * ldx;
            /* The kernels' order and roundings: one rounded product, then fused multiply-adds
             * (vfmacc). A plain `acc += a * b` would round the product first, which differs
             * when a product of two tiny BF16 values falls below FP32's normal range. */
            float acc = gr_bf16_to_f32(xr[0]) * col_buf[0];
            for (size_t k = 1; k < w->k; k++)
                acc = fmaf(gr_bf16_to_f32(xr[k]), col_buf[k], acc);
            if (bias)
                acc += bias[n];
            if (y_bf16)
                ((uint16_t *)y)[r * ldy + n] = gr_f32_to_bf16(acc);
            else
                ((float *)y)[r * ldy + n] = acc;
        }
    }
}
