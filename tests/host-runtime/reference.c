#include "reference.h"

#include <math.h>
#include <string.h>

#include "testdata.h"

void ref_linear_f32(const uint16_t *x, size_t m, size_t ldx, const uint16_t *w, size_t n,
                    size_t k, size_t ldw, const float *bias, float *y, size_t ldy)
{
    for (size_t r = 0; r < m; r++) {
        for (size_t c = 0; c < n; c++) {
            /* An FMA onto -0.0 gives the first product's bits, zero products included. */
            float acc = -0.0f;
            for (size_t j = 0; j < k; j++)
                acc = fmaf(bf16_value(x[r * ldx + j]), bf16_value(w[c * ldw + j]), acc);
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
