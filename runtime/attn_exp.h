/* The one FP32 exponential (and the tanh built on it) of attention's softmax: fixed operations
 * that vector code repeats element by element for the same bits at every VLEN
 * (docs/numerics.md, "Attention"). Included by the runtime's fallback and by generated kernels;
 * the constants are the rule, the scalar functions its reference. No libm: every step is an
 * IEEE operation (fmaf is one fused multiply-add: fmadd.s, vfmacc/vfmadd). */
#ifndef GEMM_RVV_ATTN_EXP_H
#define GEMM_RVV_ATTN_EXP_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Inputs below GR_EXP_MIN give +0 (exp(-104) is below half the smallest subnormal); above
 * GR_EXP_MAX +Inf (exp(89) is above FLT_MAX). */
#define GR_EXP_MIN -104.0f
#define GR_EXP_MAX 89.0f
/* n = x * log2(e) rounded to nearest even by adding and subtracting 1.5 * 2^23. */
#define GR_EXP_LOG2E 0x1.715476p+0f
#define GR_EXP_ROUND 0x1.8p23f
/* ln 2 = LN2_HI + LN2_LO; LN2_HI has 16 significant bits, so x - n * LN2_HI is exact. */
#define GR_EXP_LN2_HI 0x1.62e4p-1f
#define GR_EXP_LN2_LO 0x1.7f7d1cp-20f
/* exp(r) = 1 + r + r^2 * (C2 + r * (C3 + r * (C4 + r * (C5 + r * C6)))) on |r| <= ln2 / 2,
 * a weighted least-squares fit (relative error of the polynomial 3.6e-9 in FP64). */
#define GR_EXP_C2 0x1.fffff8p-2f
#define GR_EXP_C3 0x1.55548ep-3f
#define GR_EXP_C4 0x1.555b58p-5f
#define GR_EXP_C5 0x1.123b8ep-7f
#define GR_EXP_C6 0x1.687c22p-10f

static inline float gr_attn_bits_f32(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* e^x in FP32. NaN gives the same NaN. In range, n = round(x * log2e) (the FMA with
 * GR_EXP_ROUND, then its subtraction), r = fmaf(-n, LN2_LO, x - n * LN2_HI), p = 1 + (r + r^2 *
 * q(r)) by Horner's rule in fmaf, and the result p * 2^n rounded once: p * 2^(n / 2) is exact,
 * then times 2^(n - n / 2), which rounds (to a subnormal or Inf where the value is one). */
static inline float gr_exp_f32(float x)
{
    if (x != x)
        return x;
    if (x < GR_EXP_MIN)
        return 0.0f;
    if (x > GR_EXP_MAX)
        return INFINITY;
    const float nf = fmaf(x, GR_EXP_LOG2E, GR_EXP_ROUND) - GR_EXP_ROUND;
    float r = fmaf(-nf, GR_EXP_LN2_HI, x);
    r = fmaf(-nf, GR_EXP_LN2_LO, r);
    float q = fmaf(GR_EXP_C6, r, GR_EXP_C5);
    q = fmaf(q, r, GR_EXP_C4);
    q = fmaf(q, r, GR_EXP_C3);
    q = fmaf(q, r, GR_EXP_C2);
    const float p = fmaf(q, r * r, r) + 1.0f;
    const int32_t n = (int32_t)nf, n1 = n / 2, n2 = n - n1; /* both in [-75, 64] */
    return p * gr_attn_bits_f32((uint32_t)(n1 + 127) << 23) *
           gr_attn_bits_f32((uint32_t)(n2 + 127) << 23);
}

/* tanh(y) = sign(y) * (1 - e) / (1 + e) with e = gr_exp_f32(-2 |y|): two roundings for 1 - e
 * and 1 + e, one for the division; Inf gives +-1, NaN stays NaN. */
static inline float gr_tanh_f32(float y)
{
    const float e = gr_exp_f32(-2.0f * fabsf(y));
    return copysignf((1.0f - e) / (1.0f + e), y);
}

#endif
