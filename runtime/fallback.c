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

/* One output from its sum: bias, then FP32 or BF16. */
static void store(void *y, size_t i, int y_bf16, float acc, const float *bias, size_t n)
{
    if (bias)
        acc += bias[n];
    if (y_bf16)
        ((uint16_t *)y)[i] = gr_f32_to_bf16(acc);
    else
        ((float *)y)[i] = acc;
}

/* The kernels' order and roundings: one rounded product, then fused multiply-adds (vfmacc).
 * A plain `acc += a * b` would round the product first, which differs when a product of two
 * tiny BF16 values falls below FP32's normal range. */
static float dot(const float *x, const float *w, size_t k)
{
    float acc = x[0] * w[0];
    for (size_t j = 1; j < k; j++)
        acc = fmaf(x[j], w[j], acc);
    return acc;
}

void gr_fallback(const float *x_f, size_t m, const struct gr_weight_view *w, const float *bias,
                 void *y, size_t ldy, int y_bf16, size_t col_begin, size_t col_end,
                 float *col_buf)
{
    const size_t k = w->k;
    size_t n = col_begin;
    /* Four columns at a time: the same four sums as dot(), interleaved. */
    for (; n + GR_FALLBACK_COLS <= col_end; n += GR_FALLBACK_COLS) {
        const float *c0 = col_buf, *c1 = col_buf + k, *c2 = col_buf + 2 * k, *c3 = col_buf + 3 * k;
        for (size_t c = 0; c < GR_FALLBACK_COLS; c++)
            widen_column(w, n + c, col_buf + c * k);
        for (size_t r = 0; r < m; r++) {
            const float *xr = x_f + r * k;
            float a0 = xr[0] * c0[0], a1 = xr[0] * c1[0], a2 = xr[0] * c2[0], a3 = xr[0] * c3[0];
            for (size_t j = 1; j < k; j++) {
                a0 = fmaf(xr[j], c0[j], a0);
                a1 = fmaf(xr[j], c1[j], a1);
                a2 = fmaf(xr[j], c2[j], a2);
                a3 = fmaf(xr[j], c3[j], a3);
            }
            store(y, r * ldy + n, y_bf16, a0, bias, n);
            store(y, r * ldy + n + 1, y_bf16, a1, bias, n + 1);
            store(y, r * ldy + n + 2, y_bf16, a2, bias, n + 2);
            store(y, r * ldy + n + 3, y_bf16, a3, bias, n + 3);
        }
    }
    for (; n < col_end; n++) {
        widen_column(w, n, col_buf);
        for (size_t r = 0; r < m; r++)
            store(y, r * ldy + n, y_bf16, dot(x_f + r * k, col_buf, k), bias, n);
    }
}
