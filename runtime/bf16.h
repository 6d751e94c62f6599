/* BF16 <-> FP32 as the kernels do it, for the scalar paths. */
#ifndef GEMM_RVV_BF16_H
#define GEMM_RVV_BF16_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Exact: a BF16 is the top half of an FP32. */
static inline float gr_bf16_to_f32(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* Round to nearest even; a NaN stays NaN (quiet), where plain rounding could carry it to Inf. */
static inline uint16_t gr_f32_to_bf16(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    if ((bits & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((bits | 0x00400000u) >> 16);
    bits += 0x7fffu + ((bits >> 16) & 1u);
    return (uint16_t)(bits >> 16);
}

/* One output from its sum, as the tiles finish it: bias (bias[n], when there is one), then
 * FP32 or BF16, into element i of y. */
static inline void gr_store_output(void *y, size_t i, int y_bf16, float acc, const float *bias,
                                   size_t n)
{
    if (bias)
        acc += bias[n];
    if (y_bf16)
        ((uint16_t *)y)[i] = gr_f32_to_bf16(acc);
    else
        ((float *)y)[i] = acc;
}

/* A run of `count` outputs from their sums, as gr_store_output each, into elements i .. of y:
 * the tests of bias and type once a run, not once an output (the driver writes Y's lines so). */
static inline void gr_store_outputs(void *y, size_t i, int y_bf16, const float *sums,
                                    size_t count, const float *bias, size_t n)
{
    if (bias && y_bf16)
        for (size_t c = 0; c < count; c++)
            ((uint16_t *)y)[i + c] = gr_f32_to_bf16(sums[c] + bias[n + c]);
    else if (y_bf16)
        for (size_t c = 0; c < count; c++)
            ((uint16_t *)y)[i + c] = gr_f32_to_bf16(sums[c]);
    else if (bias)
        for (size_t c = 0; c < count; c++)
            ((float *)y)[i + c] = sums[c] + bias[n + c];
    else
        for (size_t c = 0; c < count; c++)
            ((float *)y)[i + c] = sums[c];
}

#endif
