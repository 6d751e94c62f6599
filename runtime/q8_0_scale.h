/* Q8_0 blocks and their FP16 scales: the block's size, its scale's bits, FP16 to FP32 and FP32
 * rounded to FP16 in integer code, and the scale of a block of FP32 activations by ggml's rule
 * (docs/numerics.md, "Q8_0 weights"). Scalar code shared by the fallback (runtime/q8_0.c) and
 * the vector quantiser (templates/base/q8_support.c.in), so that both take the same scale from
 * the same amax. */
#ifndef GEMM_RVV_Q8_0_SCALE_H
#define GEMM_RVV_Q8_0_SCALE_H

#include <stdint.h>
#include <string.h>

#include "gemm_rvv.h"

#define GR_Q8_BLOCK GEMM_RVV_Q8_0_BLOCK
#define GR_Q8_BLOCK_BYTES GEMM_RVV_Q8_0_BLOCK_BYTES

/* The scale of a block at p (its first two bytes, little-endian). */
static inline uint16_t gr_q8_scale_bits(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

/* An FP16 value's bits as the FP32 of the same value: exact for every FP16 (subnormals are
 * normal in FP32); Inf stays Inf and a NaN keeps its sign and payload (quiet or signalling),
 * since this is integer code and no FPU converts it. */
static inline uint32_t gr_fp16_to_f32_bits(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    if (exp == 0x1f)
        return sign | 0x7f800000u | mant << 13;
    if (exp == 0) {
        if (mant == 0)
            return sign;
        /* mant * 2^-24: shift the leading one up to the implicit bit. */
        uint32_t e = 127 - 14;
        while (!(mant & 0x400u)) {
            mant <<= 1;
            e--;
        }
        return sign | e << 23 | (mant & 0x3ffu) << 13;
    }
    return sign | (exp - 15 + 127) << 23 | mant << 13;
}

static inline float gr_fp16_to_f32(uint16_t h)
{
    uint32_t bits = gr_fp16_to_f32_bits(h);
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* f rounded to the nearest FP16 value, ties to even, as IEEE conversion (and ggml's
 * GGML_FP32_TO_FP16) rounds, held as an FP32 (exactly): magnitudes from 65520 up give Inf,
 * those up to 2^-25 give zero (2^-25 itself is the tie with zero), a NaN stays a quiet NaN.
 * Integer code on the FP32 bits (no rounding mode, no Zfh), the FP16 normal range first: it
 * runs once per block of activations. */
static inline float gr_f32_round_fp16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    const uint32_t a = x & 0x7fffffffu;
    uint32_t r;
    if (a - 0x38800000u < 0x477ff000u - 0x38800000u) {
        /* [2^-14, 65520): keep 10 mantissa bits; a carry raises the exponent (to 2^16 at most,
         * from 65504 + half an ulp and up, which the range leaves out) */
        r = (a + 0xfffu + (a >> 13 & 1u)) & ~0x1fffu;
    } else if (a >= 0x38800000u) {
        r = a > 0x7f800000u ? a | 0x400000u : 0x7f800000u; /* NaN (made quiet), else Inf */
    } else {
        /* Subnormal FP16 or zero: |f| rounded to a multiple of 2^-24, m * 2^(e - 150) with
         * m the 24-bit significand; exponents below 102 (|f| < 2^-25) give 0. */
        const uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u;
        uint32_t h = 0;
        if (e >= 102) {
            const uint32_t shift = 126 - e; /* 14 .. 24 */
            const uint32_t half = 1u << (shift - 1), rest = m & ((1u << shift) - 1);
            h = m >> shift;
            h += rest > half || (rest == half && (h & 1u));
        }
        const float v = (float)h * 0x1p-24f; /* exact: h <= 2^10 */
        memcpy(&r, &v, sizeof r);
    }
    r |= x & 0x80000000u;
    memcpy(&f, &r, sizeof f);
    return f;
}

/* A block of FP32 activations quantised as ggml's CPU backend does it for a Q8_0 product
 * (quantize_row_q8_0): from the block's finite amax = max |x|, d = amax / 127 in FP32; the
 * block's scale is d rounded to FP16 (held as the FP32 of that FP16 value), and each
 * q = x * inv, inv = 1 / d from the FP32 d, rounded to nearest, ties to even.
 * |x * inv| <= 127 (1 + 3 * 2^-24) < 127.5 wherever the FP16 scale is not 0, so q fits int8
 * unclamped; where it is 0 (d <= 2^-25) every term of the block is +-0 (or NaN with an Inf or
 * NaN weight scale) whatever q is, so the library sets q = 0 and inv (Inf for d = 0, where
 * ggml takes 0) is not used. */
struct gr_q8_x_scale {
    float d;   /* the FP16 scale's value */
    float inv; /* what x is multiplied by where d is not 0 */
};

static inline struct gr_q8_x_scale gr_q8_x_scale(float amax)
{
    const float d = amax / 127.0f;
    return (struct gr_q8_x_scale){gr_f32_round_fp16(d), 1.0f / d};
}

#endif
