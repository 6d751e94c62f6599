/* gemm_rvv_round_bf16: every FP32 class rounded as the library's rule says (nearest even,
 * NaNs kept quiet with their sign and top half), at lengths around every vector length, the
 * kernels' path and the forced fallback giving the same bits, bad arguments rejected with
 * nothing written, and no element written past the end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gemm_rvv.h"
#include "testdata.h"

#define MAX_N 1100 /* past four VLEN-1024 m8 strips (256 values each) */
#define GUARD 16   /* elements after the output, which no call may write */

/* The rule spelled out on the halves: the top half, plus one when the bottom half is over
 * the tie, or at the tie with an odd top half; a NaN's top half with the quiet bit. */
static uint16_t expected(uint32_t bits)
{
    uint32_t top = bits >> 16, bottom = bits & 0xffffu;
    if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu))
        return (uint16_t)(top | 0x40u);
    if (bottom > 0x8000u || (bottom == 0x8000u && (top & 1u)))
        top++;
    return (uint16_t)top;
}

static float from_bits(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* Every class: zeros, subnormals, ties either way, carries into the exponent and to Inf, the
 * largest finite, Inf, quiet and signalling NaNs of both signs and payloads. */
static const uint32_t specials[] = {
    0x00000000u, 0x80000000u, 0x00000001u, 0x807fffffu, 0x00008000u, 0x00018000u,
    0x3f808000u, 0x3f818000u, 0x3f808001u, 0x3f807fffu, 0xbf818000u, 0x3f7fffffu,
    0x7f7f8000u, 0x7f7fffffu, 0xff7fffffu, 0x7f800000u, 0xff800000u, 0x7fc00000u,
    0xffc00000u, 0x7f800001u, 0xff800001u, 0x7fbfffffu, 0x7fffffffu, 0xffffffffu,
    0x7f80ffffu, 0x00ff8000u, 0x4b7fffffu, 0x3f800000u,
};
#define SPECIALS (sizeof specials / sizeof specials[0])

/* n values: the specials first, then random bit patterns (every class), then moderate ones. */
static void fill(struct rng *r, float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t bits = (uint32_t)rng_next(r);
        if (i < SPECIALS)
            bits = specials[i];
        else if (i % 3 == 0)
            bits = (uint32_t)rng_bf16(r) << 16 | (bits & 0xffffu);
        x[i] = from_bits(bits);
    }
}

/* Rounds x[0 .. n) into a guarded buffer and checks every value and the guard. */
static void check_length(const float *x, size_t n, uint16_t *out)
{
    for (size_t i = 0; i < n + GUARD; i++)
        out[i] = 0x5a5a;
    assert_int_equal(gemm_rvv_round_bf16(x, (int64_t)n, out), GEMM_RVV_OK);
    for (size_t i = 0; i < n; i++) {
        uint32_t bits;
        memcpy(&bits, &x[i], sizeof bits);
        if (out[i] != expected(bits))
            fail_msg("n = %zu, element %zu: 0x%08x gave 0x%04x, not 0x%04x", n, i,
                     (unsigned)bits, out[i], expected(bits));
    }
    for (size_t i = n; i < n + GUARD; i++)
        if (out[i] != 0x5a5a)
            fail_msg("n = %zu: element %zu past the end was written", n, i);
}

static void test_every_length(void **state)
{
    (void)state;
    struct rng r = {0x9e3779b97f4a7c15ull};
    float *x = malloc(MAX_N * sizeof *x);
    uint16_t *out = malloc((MAX_N + GUARD) * sizeof *out);
    assert_non_null(x);
    assert_non_null(out);
    fill(&r, x, MAX_N);
    uint64_t h = DIGEST_INIT;
    for (int fallback = 0; fallback < 2; fallback++) {
        gemm_rvv_force_fallback(fallback);
        for (size_t n = 0; n <= MAX_N; n += n < 70 ? 1 : 31) {
            check_length(x, n, out);
            if (!fallback)
                h = digest_add(h, out, n * sizeof *out);
        }
        /* Unaligned starts: the vector loads take any element offset. */
        for (size_t off = 1; off < 4; off++)
            check_length(x + off, MAX_N - off, out + off);
    }
    gemm_rvv_force_fallback(0);
    digest_print("rounded", h);
    free(x);
    free(out);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    float x[8] = {1.5f, 2.5f, -3.25f, 0, 0, 0, 0, 0};
    uint16_t out[8] = {0x1111, 0x1111, 0x1111, 0x1111};
    assert_int_equal(gemm_rvv_round_bf16(NULL, 3, out), GEMM_RVV_ERR_NULL);
    assert_int_equal(gemm_rvv_round_bf16(x, 3, NULL), GEMM_RVV_ERR_NULL);
    assert_int_equal(gemm_rvv_round_bf16(x, -1, out), GEMM_RVV_ERR_SIZE);
    assert_int_equal(gemm_rvv_round_bf16(x, INT64_MAX, out), GEMM_RVV_ERR_OVERFLOW);
    /* out inside x's values, and x's last value over out's first */
    assert_int_equal(gemm_rvv_round_bf16(x, 3, (uint16_t *)(x + 2)), GEMM_RVV_ERR_ALIAS);
    assert_int_equal(gemm_rvv_round_bf16(x + 1, 4, (uint16_t *)x), GEMM_RVV_ERR_ALIAS);
    for (int i = 0; i < 4; i++)
        assert_int_equal(out[i], 0x1111);
    assert_int_equal(x[2], -3.25f);
    /* Nothing to round: no pointer is read. */
    assert_int_equal(gemm_rvv_round_bf16(NULL, 0, NULL), GEMM_RVV_OK);
    assert_int_equal(gemm_rvv_round_bf16(x, 3, out), GEMM_RVV_OK);
    assert_int_equal(out[0], 0x3fc0);
    assert_int_equal(out[1], 0x4020);
    assert_int_equal(out[2], 0xc050);
    assert_int_equal(out[3], 0x1111);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_length),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
