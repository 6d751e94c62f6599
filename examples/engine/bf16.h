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

/* FP32 to IEEE half, rounded to nearest even (as PyTorch's .half()): magnitudes from 65520
 * on give Inf, those below 2^-14 a subnormal or zero; a NaN stays a (quiet) NaN. */
static inline uint16_t f32_to_f16(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
    uint32_t abs = bits & 0x7fffffffu;
    if (abs > 0x7f800000u)
        return (uint16_t)(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));
    if (abs >= 0x477ff000u) /* 65520 = 65504 + half an ulp: rounds to Inf */
        return (uint16_t)(sign | 0x7c00u);
    if (abs >= 0x38800000u) { /* 2^-14 and up: a normal half, exponent rebased by 127 - 15 */
        uint32_t rebased = abs - (112u << 23);
        return (uint16_t)(sign | ((rebased + 0xfffu + ((rebased >> 13) & 1u)) >> 13));
    }
    int exponent = (int)(abs >> 23);
    if (exponent < 102) /* below 2^-25, half the least subnormal: zero */
        return sign;
    /* value = significand * 2^(exponent - 150); in units of 2^-24, shifted right by 126 - e */
    uint32_t significand = (abs & 0x7fffffu) | 0x800000u, shift = (uint32_t)(126 - exponent);
    uint32_t q = significand >> shift, rest = significand & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1);
    q += rest > half || (rest == half && (q & 1u));
    return (uint16_t)(sign | q);
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
