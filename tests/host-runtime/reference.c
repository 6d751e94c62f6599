#include "reference.h"

#include <math.h>
#include <string.h>

static float widen(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

void ref_linear_f32(const uint16_t *x, size_t m, size_t ldx, const uint16_t *w, size_t n,
                    size_t k, size_t ldw, const float *bias, float *y, size_t ldy)
{
    for (size_t r = 0; r < m; r++) {
        for (size_t c = 0; c < n; c++) {
            /* An FMA onto -0.0 gives the first product's bits, zero products included. */
            float acc = -0.0f;
            for (size_t j = 0; j < k; j++)
                acc = fmaf(widen(x[r * ldx + j]), widen(w[c * ldw + j]), acc);
            y[r * ldy + c] = bias ? acc + bias[c] : acc;
        }
    }
}

uint16_t ref_bf16_from_f32(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    if (isnan(f))
        return (uint16_t)((bits >> 16) | 0x0040);
    bits += 0x7fff + ((bits >> 16) & 1);
    return (uint16_t)(bits >> 16);
}
