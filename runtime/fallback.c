#include "fallback.h"

#include <math.h>

#include "bf16.h"
#include "pack.h"

static void widen_column(const struct gr_weight_view *w, size_t n, float *col)
{
    const size_t k = w->k;
    const size_t pw = w->panel_width, pairs = (k + 1) / 2;
    if (w->packed && w->layout == GR_LAYOUT_PAIRS) {
        /* Column n's words: one per k-pair, a panel row apart. */
        const uint32_t *word = (const uint32_t *)w->packed + n / pw * pairs * pw + n % pw;
        for (size_t j = 0; j < k; j += 2, word += pw) {
            col[j] = gr_bf16_to_f32((uint16_t)*word);
            if (j + 1 < k)
                col[j + 1] = gr_bf16_to_f32((uint16_t)(*word >> 16));
        }
    } else if (w->packed) {
        /* Column n's weights: one per k, a panel row apart. */
        const uint16_t *half = (const uint16_t *)w->packed + n / pw * 2 * pairs * pw + n % pw;
        for (size_t j = 0; j < k; j++, half += pw)
            col[j] = gr_bf16_to_f32(*half);
    } else {
        const uint16_t *row = w->plain + n * w->ldw;
        for (size_t j = 0; j < k; j++)
            col[j] = gr_bf16_to_f32(row[j]);
    }
}

/* The kernels' order and roundings: fused multiply-adds (vfmacc) from -0.0f, whose first
 * gives the rounded product's bits for every product, +-0 included. A plain `acc += a * b`
 * would round each product first, which differs when a product of two tiny BF16 values
 * falls below FP32's normal range. */
static float dot(const float *x, const float *w, size_t k)
{
    float acc = -0.0f;
    for (size_t j = 0; j < k; j++)
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
            float a0 = -0.0f, a1 = -0.0f, a2 = -0.0f, a3 = -0.0f;
            for (size_t j = 0; j < k; j++) {
                a0 = fmaf(xr[j], c0[j], a0);
                a1 = fmaf(xr[j], c1[j], a1);
                a2 = fmaf(xr[j], c2[j], a2);
                a3 = fmaf(xr[j], c3[j], a3);
            }
            gr_store_output(y, r * ldy + n, y_bf16, a0, bias, n);
            gr_store_output(y, r * ldy + n + 1, y_bf16, a1, bias, n + 1);
            gr_store_output(y, r * ldy + n + 2, y_bf16, a2, bias, n + 2);
            gr_store_output(y, r * ldy + n + 3, y_bf16, a3, bias, n + 3);
        }
    }
    for (; n < col_end; n++) {
        widen_column(w, n, col_buf);
        for (size_t r = 0; r < m; r++)
            gr_store_output(y, r * ldy + n, y_bf16, dot(x_f + r * k, col_buf, k), bias, n);
    }
}
