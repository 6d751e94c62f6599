/* Weights in the caller's memory (gemm_rvv_weight_bytes, _create_in, _write, _read): sizes and
 * alignment, bad sizes and ranges rejected with nothing written, writes in any pieces giving
 * the bits of gemm_rvv_weight_create, reads giving back every bit written, and no byte
 * written outside the caller's block. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cpu.h" /* the panel the packed form pads N to */
#include "gemm_rvv.h"
#include "testdata.h"

/* 1025 x 31 has plans (tests/target/shapes-test.yaml: a panel tail and an odd K); 50 x 50 has
 * none, so its copy is plain rows. */
static const int64_t shapes[2][2] = {{1025, 31}, {50, 50}};
#define GUARD 256 /* bytes after the block, which no call may write */
#define M 5

/* A block of `bytes` for the weight, GEMM_RVV_WEIGHT_ALIGN-aligned, filled with `fill` and
 * followed by GUARD bytes of 0xa5. */
static unsigned char *block(size_t bytes, int fill)
{
    unsigned char *mem = aligned_alloc(GEMM_RVV_WEIGHT_ALIGN, bytes + GUARD);
    assert_non_null(mem);
    memset(mem, fill, bytes);
    memset(mem + bytes, 0xa5, GUARD);
    return mem;
}

static void expect_guard(const unsigned char *mem, size_t bytes)
{
    for (size_t i = 0; i < GUARD; i++)
        if (mem[bytes + i] != 0xa5)
            fail_msg("byte %zu past the block was written", i);
}

static uint16_t *random_weight(size_t count, uint64_t seed)
{
    struct rng r = {seed};
    uint16_t *w = malloc(count * sizeof *w);
    assert_non_null(w);
    fill_bf16(&r, w, count, 1);
    return w;
}

static float *outputs(const gemm_rvv_weight *w, int64_t n, int64_t k)
{
    struct rng r = {99};
    uint16_t x[M * 64];
    fill_bf16(&r, x, (size_t)(M * k), 0);
    float *y = malloc((size_t)(M * n) * sizeof *y);
    assert_non_null(y);
    assert_int_equal(gemm_rvv_linear(x, M, k, w, NULL, y, n, GEMM_RVV_F32), GEMM_RVV_OK);
    return y;
}

static void test_sizes_and_errors(void **state)
{
    (void)state;
    size_t bytes = 0;
    /* A panel is VLEN / 4 columns (256 at VLEN 1024); without V the copy is plain rows. */
    const int64_t panel = gr_cpu_has_vector() ? (int64_t)gr_panel_width() : 1;
    for (int s = 0; s < 2; s++) {
        int64_t n = shapes[s][0], k = shapes[s][1];
        assert_int_equal(gemm_rvv_weight_bytes(n, k, &bytes), GEMM_RVV_OK);
        assert_int_equal(bytes % GEMM_RVV_WEIGHT_ALIGN, 0);
        assert_true(bytes >= (size_t)(n * k) * 2);
        /* Packing pads N to a panel and K to a pair, no more. */
        assert_true(bytes <= (size_t)((n + panel - 1) * (k + 1)) * 2 + GEMM_RVV_WEIGHT_ALIGN);
    }
    assert_int_equal(gemm_rvv_weight_bytes(50, 50, &bytes), GEMM_RVV_OK);
    assert_int_equal(bytes, (50 * 50 * 2 + 63) / 64 * 64); /* no plan: plain rows */
    assert_int_equal(gemm_rvv_weight_bytes(50, 50, NULL), GEMM_RVV_ERR_NULL);
    assert_int_equal(gemm_rvv_weight_bytes(0, 50, &bytes), GEMM_RVV_ERR_SIZE);
    assert_int_equal(gemm_rvv_weight_bytes(50, -1, &bytes), GEMM_RVV_ERR_SIZE);
    assert_int_equal(gemm_rvv_weight_bytes(INT64_MAX / 2, INT64_MAX / 2, &bytes),
                     GEMM_RVV_ERR_OVERFLOW);

    assert_int_equal(gemm_rvv_weight_bytes(1025, 31, &bytes), GEMM_RVV_OK);
    unsigned char *mem = block(bytes + GEMM_RVV_WEIGHT_ALIGN, 0x5a);
    gemm_rvv_weight *obj = (gemm_rvv_weight *)&bytes, *was = obj;
    assert_int_equal(gemm_rvv_weight_create_in(1025, 31, mem, bytes - 1, &obj),
                     GEMM_RVV_ERR_BUFFER);
    assert_int_equal(gemm_rvv_weight_create_in(1025, 31, mem + 2, bytes, &obj),
                     GEMM_RVV_ERR_BUFFER);
    assert_int_equal(gemm_rvv_weight_create_in(1025, 31, NULL, bytes, &obj), GEMM_RVV_ERR_NULL);
    assert_int_equal(gemm_rvv_weight_create_in(1025, 31, mem, bytes, NULL), GEMM_RVV_ERR_NULL);
    assert_int_equal(gemm_rvv_weight_create_in(0, 31, mem, bytes, &obj), GEMM_RVV_ERR_SIZE);
    assert_ptr_equal(obj, was); /* *out untouched on error */
    for (size_t i = 0; i < bytes + GEMM_RVV_WEIGHT_ALIGN; i++)
        if (mem[i] != 0x5a)
            fail_msg("a refused create_in wrote byte %zu", i);

    assert_int_equal(gemm_rvv_weight_create_in(1025, 31, mem, bytes, &obj), GEMM_RVV_OK);
    uint16_t v[4] = {1, 2, 3, 4}, back[4];
    size_t total = 1025 * 31;
    assert_int_equal(gemm_rvv_weight_write(obj, v, total - 3, 4), GEMM_RVV_ERR_RANGE);
    assert_int_equal(gemm_rvv_weight_write(obj, v, total + 1, 0), GEMM_RVV_ERR_RANGE);
    assert_int_equal(gemm_rvv_weight_write(obj, v, SIZE_MAX, 2), GEMM_RVV_ERR_RANGE);
    assert_int_equal(gemm_rvv_weight_write(obj, NULL, 0, 1), GEMM_RVV_ERR_NULL);
    assert_int_equal(gemm_rvv_weight_write(NULL, v, 0, 1), GEMM_RVV_ERR_NULL);
    assert_int_equal(gemm_rvv_weight_read(obj, back, total - 1, 2), GEMM_RVV_ERR_RANGE);
    assert_int_equal(gemm_rvv_weight_read(obj, NULL, 0, 1), GEMM_RVV_ERR_NULL);
    /* An element not yet written holds what the block held (create_in wrote only padding),
     * and a refused write changed none. */
    assert_int_equal(gemm_rvv_weight_write(obj, v, total - 4, 4), GEMM_RVV_OK);
    assert_int_equal(gemm_rvv_weight_read(obj, back, total - 4, 4), GEMM_RVV_OK);
    assert_memory_equal(back, v, sizeof v);
    assert_int_equal(gemm_rvv_weight_read(obj, back, total - 8, 4), GEMM_RVV_OK);
    static const uint16_t untouched[4] = {0x5a5a, 0x5a5a, 0x5a5a, 0x5a5a};
    assert_memory_equal(back, untouched, sizeof back);
    assert_int_equal(gemm_rvv_weight_write(obj, v, total, 0), GEMM_RVV_OK);
    gemm_rvv_weight_free(obj);
    expect_guard(mem, bytes + GEMM_RVV_WEIGHT_ALIGN);
    free(mem); /* free left the block to its owner */
}

/* A call on obj with X of M rows of k (y_over_copy_refused's callback). */
struct bf16_call {
    const gemm_rvv_weight *obj;
    const uint16_t *x;
    int64_t n, k;
};

static int call_bf16(void *ctx, void *y, int bf16)
{
    const struct bf16_call *c = ctx;
    return gemm_rvv_linear(c->x, M, c->k, c->obj, NULL, y, c->n,
                           bf16 ? GEMM_RVV_BF16 : GEMM_RVV_F32);
}

/* With create_in the object's copy is the caller's memory, as plain W is: Y over it is refused
 * with GEMM_RVV_ERR_ALIAS and the copy keeps its bytes; Y right after it is served. Packed
 * (plans) and plain rows. */
static void test_y_over_the_copy(void **state)
{
    (void)state;
    for (int s = 0; s < 2; s++) {
        int64_t n = shapes[s][0], k = shapes[s][1];
        size_t bytes, y_bytes = (size_t)(M * n) * sizeof(float);
        assert_int_equal(gemm_rvv_weight_bytes(n, k, &bytes), GEMM_RVV_OK);
        unsigned char *mem = block(bytes + y_bytes, 0);
        uint16_t *w = random_weight((size_t)(n * k), 30 + (uint64_t)s), x[M * 64];
        struct rng r = {31};
        fill_bf16(&r, x, (size_t)(M * k), 0);
        gemm_rvv_weight *obj;
        assert_int_equal(gemm_rvv_weight_create_in(n, k, mem, bytes, &obj), GEMM_RVV_OK);
        assert_int_equal(gemm_rvv_weight_write(obj, w, 0, (size_t)(n * k)), GEMM_RVV_OK);
        struct bf16_call c = {obj, x, n, k};
        size_t bad = y_over_copy_refused(call_bf16, &c, mem, bytes, GEMM_RVV_ERR_ALIAS);
        if (bad)
            fail_msg("%lld x %lld: Y at byte %zu of the copy not refused, or the copy written",
                     (long long)n, (long long)k, bad - 1);
        float *apart = malloc(y_bytes);
        assert_non_null(apart);
        assert_int_equal(call_bf16(&c, apart, 0), GEMM_RVV_OK);
        assert_int_equal(call_bf16(&c, mem + bytes, 0), GEMM_RVV_OK);
        assert_memory_equal(mem + bytes, apart, y_bytes);
        gemm_rvv_weight_free(obj);
        expect_guard(mem, bytes + y_bytes);
        free(apart);
        free(w);
        free(mem);
    }
}

/* Writes w into obj in pieces of seeded sizes (1 element up to a few rows), in an order that
 * visits every piece once, front to back or back to front. */
static void write_in_pieces(gemm_rvv_weight *obj, const uint16_t *w, size_t total, size_t k,
                            uint64_t seed, int backwards)
{
    struct rng r = {seed};
    size_t cuts[4096], count = 0, at = 0;
    while (at < total && count + 1 < sizeof cuts / sizeof cuts[0]) {
        cuts[count++] = at;
        at += 1 + rng_next(&r) % (3 * k + 5);
    }
    cuts[count] = total;
    for (size_t i = 0; i < count; i++) {
        size_t p = backwards ? count - 1 - i : i;
        assert_int_equal(gemm_rvv_weight_write(obj, w + cuts[p], cuts[p], cuts[p + 1] - cuts[p]),
                         GEMM_RVV_OK);
    }
}

static void test_pieces_match_create(void **state)
{
    (void)state;
    uint64_t h = DIGEST_INIT; /* of the outputs */
    for (int s = 0; s < 2; s++) {
        int64_t n = shapes[s][0], k = shapes[s][1];
        size_t total = (size_t)(n * k), bytes;
        uint16_t *w = random_weight(total, 40 + (uint64_t)s);
        gemm_rvv_weight *whole, *obj;
        assert_int_equal(gemm_rvv_weight_create(w, n, k, k, &whole), GEMM_RVV_OK);
        float *want = outputs(whole, n, k);
        assert_int_equal(gemm_rvv_weight_bytes(n, k, &bytes), GEMM_RVV_OK);
        /* NaN everywhere: padding create_in did not zero would turn the sums into NaN. */
        unsigned char *mem = block(bytes, 0xff);
        for (int pass = 0; pass < 3; pass++) {
            assert_int_equal(gemm_rvv_weight_create_in(n, k, mem, bytes, &obj), GEMM_RVV_OK);
            if (pass == 0)
                assert_int_equal(gemm_rvv_weight_write(obj, w, 0, total), GEMM_RVV_OK);
            else
                write_in_pieces(obj, w, total, (size_t)k, 50 + (uint64_t)pass, pass == 2);
            float *got = outputs(obj, n, k);
            assert_memory_equal(got, want, (size_t)(M * n) * sizeof *got);
            uint16_t *back = malloc(total * sizeof *back);
            assert_non_null(back);
            assert_int_equal(gemm_rvv_weight_read(obj, back, 0, total), GEMM_RVV_OK);
            assert_memory_equal(back, w, total * sizeof *w);
            /* A read of a range inside a row, across rows and panels. */
            size_t from = (size_t)k + 3, count = 2 * (size_t)k + 7;
            assert_int_equal(gemm_rvv_weight_read(obj, back, from, count), GEMM_RVV_OK);
            assert_memory_equal(back, w + from, count * sizeof *w);
            /* update() on a create_in object writes the caller's block too. */
            if (pass == 2) {
                assert_int_equal(gemm_rvv_weight_update(obj, w, k), GEMM_RVV_OK);
                float *again = outputs(obj, n, k);
                assert_memory_equal(again, want, (size_t)(M * n) * sizeof *again);
                free(again);
            }
            gemm_rvv_weight_free(obj);
            expect_guard(mem, bytes);
            h = digest_add(h, got, (size_t)(M * n) * sizeof *got);
            free(got);
            free(back);
        }
        free(mem);
        free(want);
        free(w);
        gemm_rvv_weight_free(whole);
    }
    digest_print("outputs", h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes_and_errors),
        cmocka_unit_test(test_pieces_match_create),
        cmocka_unit_test(test_y_over_the_copy),
    };
    return cmocka_run_group_tests_name("weight_memory", tests, NULL, NULL);
}
