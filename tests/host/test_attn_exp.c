/* Attention's exponential and tanh (runtime/attn_exp.h) against FP64 exp and tanh, within the
 * bounds of docs/numerics.md ("Attention"): every 16th FP32 input of the exponential's range
 * (every 64th of tanh's) here; with GEMM_RVV_TEST_EXP_ALL=1 (make test-attn-exp-all, part of
 * make test-full) every input of the exponential's and every 4th of tanh's. The loops run
 * with the host's FMA where it has one (fmaf is otherwise a slow library call). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../runtime/attn_exp.h"

#define U 0x1p-24
#define EXP_REL_BOUND (1.5 * U)  /* results of 2^-126 and up */
#define EXP_ABS_BOUND 0x1p-149   /* below: subnormal results, rounded once */
#define TANH_ABS_BOUND (2.0 * U) /* |computed - tanh(y)| */

static uint32_t bits_of(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

static uint32_t step(void)
{
    const char *all = getenv("GEMM_RVV_TEST_EXP_ALL");
    return all && strcmp(all, "1") == 0 ? 1 : 16;
}

struct worst {
    double rel, abs; /* largest relative error (normal results) and absolute (the others) */
    float x_rel;
    uint64_t bad; /* inputs over the bound */
    float x_bad;
};

/* exp over the bit patterns first, first + step, ... up to last (same sign). */
#define EXP_LOOP(name)                                                                           \
    static void name(uint32_t first, uint32_t last, uint32_t stride, struct worst *w)            \
    {                                                                                            \
        for (uint64_t b = first; b <= last; b += stride) {                                       \
            const float x = gr_attn_bits_f32((uint32_t)b), y = gr_exp_f32(x);                    \
            const double ref = exp((double)x), err = fabs((double)y - ref);                      \
            int ok;                                                                              \
            if (ref > 0x1.fffffefffffffp+127)                                                    \
                ok = y == INFINITY;                                                              \
            else if (ref >= 0x1p-126) {                                                          \
                ok = err <= EXP_REL_BOUND * ref;                                                 \
                if (err / ref > w->rel) {                                                        \
                    w->rel = err / ref;                                                          \
                    w->x_rel = x;                                                                \
                }                                                                                \
            } else {                                                                             \
                ok = err <= EXP_ABS_BOUND;                                                       \
                w->abs = fmax(w->abs, err);                                                      \
            }                                                                                    \
            ok = ok && (x > 0 || y <= 1.0f);                                                     \
            if (!ok && w->bad++ == 0)                                                            \
                w->x_bad = x;                                                                    \
        }                                                                                        \
    }
__attribute__((target("fma"))) EXP_LOOP(exp_loop_fma)
EXP_LOOP(exp_loop_plain)

static void exp_loop(uint32_t first, uint32_t last, uint32_t stride, struct worst *w)
{
    if (__builtin_cpu_supports("fma"))
        exp_loop_fma(first, last, stride, w);
    else
        exp_loop_plain(first, last, stride, w);
}

static void report(const char *what, const struct worst *w)
{
    printf("%s: largest relative error %.3f x 2^-24 (at %a), absolute below 2^-126 %.3g\n", what,
           w->rel / U, (double)w->x_rel, w->abs);
    if (w->bad)
        fail_msg("%s: %llu inputs over the bound, the first %a", what,
                 (unsigned long long)w->bad, (double)w->x_bad);
}

/* x <= 0, the arguments attention gives it: -0 to GR_EXP_MIN. */
static void test_exp_negative(void **state)
{
    (void)state;
    struct worst w = {0};
    exp_loop(0x80000000u, bits_of(GR_EXP_MIN), step(), &w);
    report("exp on [-104, 0]", &w);
}

static void test_exp_positive(void **state)
{
    (void)state;
    struct worst w = {0};
    exp_loop(0, bits_of(GR_EXP_MAX), step(), &w);
    report("exp on [0, 89]", &w);
}

static void test_exp_special(void **state)
{
    (void)state;
    assert_true(bits_of(gr_exp_f32(0.0f)) == bits_of(1.0f));
    assert_true(bits_of(gr_exp_f32(-0.0f)) == bits_of(1.0f));
    assert_true(bits_of(gr_exp_f32(-INFINITY)) == 0);
    assert_true(bits_of(gr_exp_f32(nextafterf(GR_EXP_MIN, -INFINITY))) == 0);
    assert_true(bits_of(gr_exp_f32(-1e30f)) == 0);
    assert_true(gr_exp_f32(INFINITY) == INFINITY);
    assert_true(gr_exp_f32(nextafterf(GR_EXP_MAX, INFINITY)) == INFINITY);
    assert_true(gr_exp_f32(88.8f) == INFINITY); /* above ln(FLT_MAX) */
    const uint32_t nans[] = {0x7fc00000u, 0xffc00001u, 0x7f800001u};
    for (size_t i = 0; i < 3; i++)
        assert_true(bits_of(gr_exp_f32(gr_attn_bits_f32(nans[i]))) == nans[i]);
}

#define TANH_LOOP(name)                                                                          \
    static void name(uint32_t last, uint32_t stride, double *worst, uint64_t *bad)               \
    {                                                                                            \
        for (uint64_t b = 0; b <= last; b += stride) {                                           \
            const float y = gr_attn_bits_f32((uint32_t)b), t = gr_tanh_f32(y);                   \
            const double err = fabs((double)t - tanh((double)y));                                \
            *worst = fmax(*worst, err);                                                          \
            *bad += !(err <= TANH_ABS_BOUND) ||                                                  \
                    bits_of(gr_tanh_f32(-y)) != (bits_of(t) ^ 0x80000000u);                      \
        }                                                                                        \
    }
__attribute__((target("fma"))) TANH_LOOP(tanh_loop_fma)
TANH_LOOP(tanh_loop_plain)

/* tanh on [0, 20] (beyond, e < 2^-57 and 1 - e rounds to 1) and its odd symmetry. */
static void test_tanh(void **state)
{
    (void)state;
    double worst = 0;
    uint64_t bad = 0;
    if (__builtin_cpu_supports("fma"))
        tanh_loop_fma(bits_of(20.0f), step() * 4, &worst, &bad);
    else
        tanh_loop_plain(bits_of(20.0f), step() * 4, &worst, &bad);
    printf("tanh on [0, 20]: largest absolute error %.3f x 2^-24\n", worst / U);
    assert_int_equal(bad, 0);
    for (float y = 20.0f; y < 1e30f; y *= 3)
        assert_true(gr_tanh_f32(y) == 1.0f && gr_tanh_f32(-y) == -1.0f);
    assert_true(gr_tanh_f32(INFINITY) == 1.0f && gr_tanh_f32(-INFINITY) == -1.0f);
    assert_true(isnan(gr_tanh_f32(NAN)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exp_special),
        cmocka_unit_test(test_exp_negative),
        cmocka_unit_test(test_exp_positive),
        cmocka_unit_test(test_tanh),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
