/* vfwmaccbf16 (Zvfbfwma) against the scalar fallback's arithmetic, bit for bit.
 *
 * The Zvfbfwma kernels may only replace the base ones if every output keeps the fallback's bits:
 * each step of a sum must equal fmaf((float)a, (float)b, acc), for .vv and .vf alike, over
 * random and special inputs (±0, subnormal products, overflow, Inf, NaN); and a sum that starts
 * from −0.0 with an FMA (Zvfbfwma has no plain widening multiply) must equal one that starts from
 * the first rounded product, the fallback's way, for every product, ±0 included.
 *
 * Built with -march=rv64gcv_zvfbfwma (mk/isa.mk). On a core without the extension it says so and
 * passes, unless GEMM_RVV_TEST_EXPECT_ISA=zvfbfwma says the extension must be there. */
#include <math.h>
#include <riscv_vector.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bf16.h"
#include "gemm_rvv.h"
#include "isa.h"
#include "testdata.h"

#define ALL_BF16 65536u

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float f32_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static __bf16 bf16_of(uint16_t bits)
{
    __bf16 h;
    memcpy(&h, &bits, sizeof h);
    return h;
}

/* The fallback's step: widen exactly, one fused multiply-add. */
static float scalar_fma(uint16_t a, uint16_t b, float acc)
{
    return fmaf(gr_bf16_to_f32(a), gr_bf16_to_f32(b), acc);
}

/* The fallback's first step: the rounded product (this file is built with -ffp-contract=off). */
static float scalar_product(uint16_t a, uint16_t b)
{
    return gr_bf16_to_f32(a) * gr_bf16_to_f32(b);
}

/* acc[i] += a[i] * b[i] by vfwmaccbf16.vv, strip by strip at whatever VLEN this is. */
static void vector_fma_vv(float *acc, const __bf16 *a, const __bf16 *b, size_t n)
{
    for (size_t i = 0; i < n;) {
        const size_t vl = __riscv_vsetvl_e16m1(n - i);
        vfloat32m2_t c = __riscv_vle32_v_f32m2(acc + i, vl);
        c = __riscv_vfwmaccbf16_vv_f32m2(c, __riscv_vle16_v_bf16m1(a + i, vl),
                                         __riscv_vle16_v_bf16m1(b + i, vl), vl);
        __riscv_vse32_v_f32m2(acc + i, c, vl);
        i += vl;
    }
}

/* acc[i] += s * a[i] by vfwmaccbf16.vf, the scalar as the kernels pass an activation. */
static void vector_fma_vf(float *acc, __bf16 s, const __bf16 *a, size_t n)
{
    for (size_t i = 0; i < n;) {
        const size_t vl = __riscv_vsetvl_e16m1(n - i);
        vfloat32m2_t c = __riscv_vle32_v_f32m2(acc + i, vl);
        c = __riscv_vfwmaccbf16_vf_f32m2(c, s, __riscv_vle16_v_bf16m1(a + i, vl), vl);
        __riscv_vse32_v_f32m2(acc + i, c, vl);
        i += vl;
    }
}

/* ---- Inputs ---- */

/* BF16 values where rounding, underflow and overflow happen. */
static const uint16_t special_bf16[] = {
    0x0000, 0x8000,                 /* ±0 */
    0x0001, 0x8001, 0x007f, 0x0055, /* subnormals */
    0x0080, 0x8080,                 /* smallest normals */
    0x3f80, 0xbf80, 0x3f81, 0xbfff, /* ±1 and neighbours */
    0x1f80, 0x9f80, 0x1fab, 0x1e55, /* about 2^-64: products fall below FP32's normal range */
    0x1c80, 0x20cd, 0x2000,         /* 2^-70 .. 2^-63: subnormal and tiny normal products */
    0x5f80, 0xdf80, 0x5f7f, 0x5fc1, /* about 2^64: products overflow or nearly */
    0x7f7f, 0xff7f,                 /* ±max */
    0x7f80, 0xff80,                 /* ±Inf */
    0x7fc0, 0xffc0, 0x7f81, 0x7fff, /* quiet and signalling NaNs with payloads */
};
#define N_SPECIAL_BF16 (sizeof special_bf16 / sizeof special_bf16[0])

/* Accumulators that meet those products: ±0, tiny, huge, Inf, NaN. */
static const uint32_t special_acc[] = {
    0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x3f800001, 0x00000001, 0x80000001,
    0x007fffff, 0x00800000, 0x80800000, 0x00400000, 0x1f000000, 0x7f7fffff, 0xff7fffff,
    0x7f000000, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 0xffc00123,
};
#define N_SPECIAL_ACC (sizeof special_acc / sizeof special_acc[0])

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t next_random(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

/* Working arrays, large enough for every a value. */
static __bf16 va[ALL_BF16], vb[ALL_BF16];
static uint16_t ua[ALL_BF16], ub[ALL_BF16];
static float acc_v[ALL_BF16], acc_f[ALL_BF16];

static void set_pair(size_t i, uint16_t a, uint16_t b)
{
    ua[i] = a;
    ub[i] = b;
    va[i] = bf16_of(a);
    vb[i] = bf16_of(b);
}

/* How many of n results differ from fmaf; prints the first few. */
static size_t count_mismatches(const char *what, const float *acc_in, size_t n,
                               const float *got)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        const float want = scalar_fma(ua[i], ub[i], acc_in[i]);
        if (f32_bits(got[i]) != f32_bits(want)) {
            if (bad < 5)
                printf("  %s: a %04x b %04x acc %08x: vector %08x, fmaf %08x\n", what, ua[i],
                       ub[i], f32_bits(acc_in[i]), f32_bits(got[i]), f32_bits(want));
            bad++;
        }
    }
    return bad;
}

/* The vector results' bits of every test, the same at every VLEN. */
static uint64_t results_digest = DIGEST_INIT;

/* Runs .vv over pairs [0, n) and .vf over the runs of equal b, from accumulators acc_in. */
static size_t check_pairs(const char *what, const float *acc_in, size_t n)
{
    memcpy(acc_v, acc_in, n * sizeof *acc_v);
    vector_fma_vv(acc_v, va, vb, n);
    results_digest = digest_add(results_digest, acc_v, n * sizeof *acc_v);
    size_t bad = count_mismatches(what, acc_in, n, acc_v);
    memcpy(acc_v, acc_in, n * sizeof *acc_v);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && ub[j] == ub[i])
            j++;
        vector_fma_vf(acc_v + i, vb[i], va + i, j - i);
        i = j;
    }
    results_digest = digest_add(results_digest, acc_v, n * sizeof *acc_v);
    return bad + count_mismatches(what, acc_in, n, acc_v);
}

/* ---- Tests ---- */

static void test_special_inputs(void **state)
{
    (void)state;
    size_t n = 0;
    for (size_t i = 0; i < N_SPECIAL_BF16; i++)
        for (size_t j = 0; j < N_SPECIAL_BF16; j++)
            for (size_t c = 0; c < N_SPECIAL_ACC; c++) {
                set_pair(n, special_bf16[j], special_bf16[i]); /* b constant over runs */
                acc_f[n++] = f32_of(special_acc[c]);
            }
    assert_true(n <= ALL_BF16);
    assert_int_equal(check_pairs("special", acc_f, n), 0);
}

static void test_random_bits(void **state)
{
    (void)state;
    for (int round = 0; round < 4; round++) {
        for (size_t i = 0; i < ALL_BF16; i++) {
            const uint32_t r = next_random();
            set_pair(i, (uint16_t)r, (uint16_t)(r >> 16));
            acc_f[i] = f32_of(next_random() ^ (next_random() << 16));
        }
        assert_int_equal(check_pairs("random", acc_f, ALL_BF16), 0);
    }
}

/* Every BF16 value a, against the special b values and some random ones. */
static void test_every_a(void **state)
{
    (void)state;
    for (size_t j = 0; j < N_SPECIAL_BF16 + 8; j++) {
        const uint16_t b = j < N_SPECIAL_BF16 ? special_bf16[j] : (uint16_t)next_random();
        for (size_t i = 0; i < ALL_BF16; i++) {
            set_pair(i, (uint16_t)i, b);
            acc_f[i] = j % 2 ? f32_of(special_acc[i % N_SPECIAL_ACC])
                             : f32_of(next_random() ^ (next_random() << 16));
        }
        assert_int_equal(check_pairs("every a", acc_f, ALL_BF16), 0);
    }
}

/* An FMA onto −0.0 gives the rounded product's bits, for every a and many b, ±0 included. Onto
 * +0.0 it would not: an exact −0 product (a zero factor) turns +0, which shows the comparison
 * can tell them apart. (A tiny negative product that rounds to −0 stays −0 either way: the sign
 * rule for zero sums applies to exact zeros only.) */
static void test_sum_from_negative_zero(void **state)
{
    (void)state;
    size_t plus_zero_differs = 0, exact_negative_zeros = 0;
    for (size_t j = 0; j < N_SPECIAL_BF16 + 8; j++) {
        const uint16_t b = j < N_SPECIAL_BF16 ? special_bf16[j] : (uint16_t)next_random();
        for (size_t i = 0; i < ALL_BF16; i++) {
            set_pair(i, (uint16_t)i, b);
            acc_v[i] = -0.0f;
        }
        vector_fma_vf(acc_v, vb[0], va, ALL_BF16);
        memcpy(acc_f, acc_v, sizeof acc_f);
        for (size_t i = 0; i < ALL_BF16; i++)
            acc_v[i] = -0.0f;
        vector_fma_vv(acc_v, va, vb, ALL_BF16);
        for (size_t i = 0; i < ALL_BF16; i++) {
            const float product = scalar_product(ua[i], ub[i]);
            if (f32_bits(acc_f[i]) != f32_bits(product) || f32_bits(acc_v[i]) != f32_bits(product))
                fail_msg("a %04x b %04x: product %08x, .vf from -0 %08x, .vv from -0 %08x", ua[i],
                         ub[i], f32_bits(product), f32_bits(acc_f[i]), f32_bits(acc_v[i]));
            assert_int_equal(f32_bits(scalar_fma(ua[i], ub[i], -0.0f)), f32_bits(product));
            exact_negative_zeros += f32_bits(product) == 0x80000000u &&
                                    ((ua[i] & 0x7fff) == 0 || (ub[i] & 0x7fff) == 0);
            plus_zero_differs +=
                f32_bits(scalar_fma(ua[i], ub[i], 0.0f)) != f32_bits(product);
        }
    }
    assert_true(exact_negative_zeros > 0);
    assert_int_equal(plus_zero_differs, exact_negative_zeros);
}

/* The inputs above do reach the cases where fused and unfused differ: a test that compared
 * against round(round(a*b) + acc) would fail on these. */
static void test_inputs_tell_fused_from_unfused(void **state)
{
    (void)state;
    size_t subnormal = 0, overflow = 0;
    for (size_t i = 0; i < N_SPECIAL_BF16; i++)
        for (size_t j = 0; j < N_SPECIAL_BF16; j++)
            for (size_t c = 0; c < N_SPECIAL_ACC; c++) {
                const uint16_t a = special_bf16[i], b = special_bf16[j];
                const float acc = f32_of(special_acc[c]);
                const float fused = scalar_fma(a, b, acc);
                const float split = scalar_product(a, b) + acc;
                if (f32_bits(fused) == f32_bits(split) || isnan(fused))
                    continue;
                if (isinf(split))
                    overflow++;
                else
                    subnormal++;
            }
    assert_true(subnormal > 0);
    assert_true(overflow > 0);
    /* 2^64 * 2^64 - FLT_MAX: the exact product overflows FP32 but the fused sum is 2^104. */
    set_pair(0, 0x5f80, 0x5f80);
    acc_v[0] = -f32_of(0x7f7fffff);
    vector_fma_vv(acc_v, va, vb, 1);
    assert_true(acc_v[0] == ldexpf(1.0f, 104));
}

/* A whole dot product as a Zvfbfwma GEMV kernel would run it (.vf with the activation, K in
 * order, from −0.0) against the fallback's (first rounded product, then fmaf). */
static void test_dot_products_in_fallback_order(void **state)
{
    (void)state;
    enum { K = 67, N = 200 };
    static __bf16 w[K][N];
    static uint16_t w_bits[K][N], x_bits[K];
    static float y[N];
    for (int rep = 0; rep < 20; rep++) {
        for (size_t k = 0; k < K; k++) {
            /* Mostly modest values, so sums do not all end as Inf or NaN, with specials mixed in. */
            const uint32_t r = next_random();
            x_bits[k] = r % 16 == 0 ? special_bf16[r / 16 % N_SPECIAL_BF16]
                                    : (uint16_t)(0x3c00 + r % 0x0700) ^ (uint16_t)(r & 0x8000);
            for (size_t n = 0; n < N; n++) {
                const uint32_t s = next_random();
                w_bits[k][n] = s % 32 == 0 ? special_bf16[s / 32 % N_SPECIAL_BF16]
                                           : (uint16_t)(0x3c00 + s % 0x0700) ^ (uint16_t)(s & 0x8000);
                w[k][n] = bf16_of(w_bits[k][n]);
            }
        }
        for (size_t n = 0; n < N; n++)
            y[n] = -0.0f;
        for (size_t k = 0; k < K; k++)
            vector_fma_vf(y, bf16_of(x_bits[k]), w[k], N);
        results_digest = digest_add(results_digest, y, sizeof y);
        for (size_t n = 0; n < N; n++) {
            float acc = scalar_product(x_bits[0], w_bits[0][n]);
            for (size_t k = 1; k < K; k++)
                acc = scalar_fma(x_bits[k], w_bits[k][n], acc);
            if (f32_bits(y[n]) != f32_bits(acc))
                fail_msg("column %zu: vector %08x, fallback %08x", n, f32_bits(y[n]),
                         f32_bits(acc));
        }
    }
}

int main(void)
{
    const char *expect = getenv("GEMM_RVV_TEST_EXPECT_ISA");
    const int expected = expect != NULL && strcmp(expect, "zvfbfwma") == 0;
    if (!gr_isa_caps()->zvfbfwma) {
        printf("bf16_fma: this core has no Zvfbfwma (%s)%s\n", gr_isa_reason(),
               expected ? ", but GEMM_RVV_TEST_EXPECT_ISA=zvfbfwma: FAILED" : ": nothing to test");
        return expected ? 1 : 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_special_inputs),
        cmocka_unit_test(test_random_bits),
        cmocka_unit_test(test_every_a),
        cmocka_unit_test(test_sum_from_negative_zero),
        cmocka_unit_test(test_inputs_tell_fused_from_unfused),
        cmocka_unit_test(test_dot_products_in_fallback_order),
    };
    int failed = cmocka_run_group_tests_name("bf16_fma", tests, NULL, NULL);
    digest_print("results", results_digest);
    return failed;
}
