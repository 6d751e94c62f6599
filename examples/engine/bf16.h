/* BF16, F16 and FP32 conversions for the engine (the library takes BF16 as uint16_t). The
 * library's own runtime/bf16.h is internal to it: an engine sees only gemm_rvv.h, so it brings
 * its own, rounding the same way (to nearest even, as PyTorch does). */
#ifndef ENGINE_BF16_H
#define ENGINE_BF16_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline float bf16_to_f32(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* Round to nearest even, as PyTorch's .to(torch.bfloat16); a NaN stays a (quiet) NaN. */
static inline uint16_t f32_to_bf16(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    if ((bits & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((bits | 0x00400000u) >> 16);
    bits += 0x7fffu + ((bits >> 16) & 1u);
    return (uint16_t)(bits >> 16);
}

/* IEEE half to FP32, exact (subnormals, Inf and NaN included). */
static inline float f16_to_f32(uint16_t h)
{
    int exponent = (h >> 10) & 0x1f;
    int mantissa = h & 0x3ff;
    float magnitude;
    if (exponent == 0)
        magnitude = ldexpf((float)mantissa, -24);
    else if (exponent == 31)
        magnitude = mantissa ? NAN : INFINITY;
    else
        magnitude = ldexpf((float)(mantissa | 0x400), exponent - 25);
    return h & 0x8000 ? -magnitude : magnitude;
}

#endif
