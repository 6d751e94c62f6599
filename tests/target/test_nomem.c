/* Out of memory on every path: each allocation a call makes fails in turn (malloc, calloc,
 * realloc and aligned_alloc are wrapped at link time, -Wl,--wrap), and every such call must
 * return GEMM_RVV_ERR_NOMEM with Y untouched and the call not counted; and a call in the
 * steady state allocates nothing at all. Kernel and fallback paths, packed and plain weights,
 * one and several row blocks, one and four threads. */
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

void *__real_malloc(size_t size);
void *__real_calloc(size_t count, size_t size);
void *__real_realloc(void *p, size_t size);
void *__real_aligned_alloc(size_t align, size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t count, size_t size);
void *__wrap_realloc(void *p, size_t size);
void *__wrap_aligned_alloc(size_t align, size_t size);

static size_t allocations; /* made since the last reset */
static size_t fail_at;     /* the allocation that fails (1-based); 0: none */

static int fails(void) { return ++allocations == fail_at; }

void *__wrap_malloc(size_t size) { return fails() ? NULL : __real_malloc(size); }
void *__wrap_calloc(size_t count, size_t size) { return fails() ? NULL : __real_calloc(count, size); }
void *__wrap_realloc(void *p, size_t size) { return fails() ? NULL : __real_realloc(p, size); }
void *__wrap_aligned_alloc(size_t align, size_t size)
{
    return fails() ? NULL : __real_aligned_alloc(align, size);
}

/* Shapes of tests/target/shapes-test.yaml: 1025 x 31 has plans up to M = 128; 50 x 50 none. */
struct shape {
    int64_t n, k;
};
static const struct shape shapes[] = {{1025, 31}, {50, 50}};
static const int64_t ms[] = {1, 5, 200};

#define SENTINEL 0xa5

/* Calls the counters hold for (n, k), kernel and fallback, every bucket. */
static uint64_t counted(int64_t n, int64_t k)
{
    gemm_rvv_counter rows[64];
    size_t count = gemm_rvv_counters(rows, 64);
    uint64_t calls = 0;
    for (size_t i = 0; i < count && i < 64; i++)
        if (rows[i].n == n && rows[i].k == k)
            calls += rows[i].kernel_calls + rows[i].fallback_calls;
    return calls;
}

/* The outputs of the calls that succeed, the same bits in every configuration. */
static uint64_t outputs_digest = DIGEST_INIT;

static void check_every_failure(const struct shape *sh, int64_t m, int plain, int threads)
{
    uint16_t *x = __real_malloc((size_t)(m * sh->k) * 2), *w = __real_malloc((size_t)(sh->n * sh->k) * 2);
    size_t ybytes = (size_t)(m * sh->n) * sizeof(float);
    unsigned char *y = __real_malloc(ybytes);
    assert_non_null(x);
    assert_non_null(w);
    assert_non_null(y);
    struct rng r = {77};
    fill_bf16(&r, x, (size_t)(m * sh->k), 0);
    fill_bf16(&r, w, (size_t)(sh->n * sh->k), 0);
    assert_int_equal(gemm_rvv_set_threads(threads), GEMM_RVV_OK);
    gemm_rvv_weight *obj = NULL;
    if (!plain)
        assert_int_equal(gemm_rvv_weight_create(w, sh->n, sh->k, sh->k, &obj), GEMM_RVV_OK);
    size_t n;
    for (n = 1;; n++) {
        gemm_rvv_release_memory();
        memset(y, SENTINEL, ybytes);
        uint64_t calls_before = counted(sh->n, sh->k);
        allocations = 0;
        fail_at = n;
        gemm_rvv_status s =
            plain ? gemm_rvv_linear_plain(x, m, sh->k, w, sh->n, sh->k, sh->k, NULL, y, sh->n,
                                          GEMM_RVV_F32)
                  : gemm_rvv_linear(x, m, sh->k, obj, NULL, y, sh->n, GEMM_RVV_F32);
        fail_at = 0;
        if (allocations < n) { /* no allocation failed: the call must have worked */
            assert_int_equal(s, GEMM_RVV_OK);
            assert_int_equal(counted(sh->n, sh->k), calls_before + 1);
            break;
        }
        if (counted(sh->n, sh->k) != calls_before)
            fail_msg("N=%lld K=%lld M=%lld %s: allocation %zu failed and the call was counted",
                     (long long)sh->n, (long long)sh->k, (long long)m,
                     plain ? "plain" : "packed", n);
        if (s != GEMM_RVV_ERR_NOMEM)
            fail_msg("N=%lld K=%lld M=%lld %s, %d threads: allocation %zu failed, status %d",
                     (long long)sh->n, (long long)sh->k, (long long)m, plain ? "plain" : "packed",
                     threads, n, (int)s);
        for (size_t i = 0; i < ybytes; i++)
            if (y[i] != SENTINEL)
                fail_msg("N=%lld K=%lld M=%lld %s: allocation %zu failed and byte %zu of Y was "
                         "written", (long long)sh->n, (long long)sh->k, (long long)m,
                         plain ? "plain" : "packed", n, i);
    }
    /* Warm now: the same call again allocates nothing. */
    allocations = 0;
    gemm_rvv_status s = plain ? gemm_rvv_linear_plain(x, m, sh->k, w, sh->n, sh->k, sh->k, NULL,
                                                      y, sh->n, GEMM_RVV_F32)
                              : gemm_rvv_linear(x, m, sh->k, obj, NULL, y, sh->n, GEMM_RVV_F32);
    assert_int_equal(s, GEMM_RVV_OK);
    outputs_digest = digest_add(outputs_digest, y, ybytes);
    if (allocations != 0)
        fail_msg("N=%lld K=%lld M=%lld %s, %d threads: a steady-state call made %zu allocations",
                 (long long)sh->n, (long long)sh->k, (long long)m, plain ? "plain" : "packed",
                 threads, allocations);
    gemm_rvv_weight_free(obj);
    free(x);
    free(w);
    free(y);
}

static void test_nothing_written_on_nomem(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (size_t j = 0; j < sizeof ms / sizeof ms[0]; j++)
            for (int plain = 0; plain < 2; plain++)
                for (int threads = 1; threads <= 4; threads += 3)
                    check_every_failure(&shapes[i], ms[j], plain, threads);
}

/* Create fails cleanly too: no object, *out untouched. */
static void test_create_nomem(void **state)
{
    (void)state;
    uint16_t w[1025 * 31] = {0};
    for (size_t n = 1; n <= 3; n++) {
        gemm_rvv_weight *obj = (gemm_rvv_weight *)w; /* a value that must survive */
        allocations = 0;
        fail_at = n;
        gemm_rvv_status s = gemm_rvv_weight_create(w, 1025, 31, 31, &obj);
        fail_at = 0;
        if (allocations < n) {
            assert_int_equal(s, GEMM_RVV_OK);
            gemm_rvv_weight_free(obj);
            break;
        }
        assert_int_equal(s, GEMM_RVV_ERR_NOMEM);
        assert_ptr_equal(obj, (gemm_rvv_weight *)w);
    }
}

/* Q8_0 objects (gemm_rvv_linear_f32x): a plan's shape (67 x 96) and one with none (50 x 64),
 * one and several row blocks, one and four threads: every failed allocation of create or
 * call gives GEMM_RVV_ERR_NOMEM, *out or Y untouched, nothing counted; a warm call allocates
 * nothing. */
static void test_q8_0_nomem(void **state)
{
    (void)state;
    static const struct shape q8_shapes[] = {{67, 96}, {50, 64}};
    for (size_t i = 0; i < 2; i++) {
        const struct shape *sh = &q8_shapes[i];
        const size_t blocks = (size_t)(sh->n * sh->k / GEMM_RVV_Q8_0_BLOCK);
        unsigned char *b = __real_malloc(blocks * GEMM_RVV_Q8_0_BLOCK_BYTES);
        assert_non_null(b);
        struct rng r = {88};
        for (size_t j = 0; j < blocks * GEMM_RVV_Q8_0_BLOCK_BYTES; j++)
            b[j] = j % GEMM_RVV_Q8_0_BLOCK_BYTES == 1 ? 0x24 : (unsigned char)rng_next(&r);
        gemm_rvv_weight *obj = NULL;
        for (size_t n = 1;; n++) {
            gemm_rvv_weight *keep = (gemm_rvv_weight *)b;
            obj = keep;
            allocations = 0;
            fail_at = n;
            gemm_rvv_status s = gemm_rvv_weight_create_q8_0(b, sh->n, sh->k, &obj);
            fail_at = 0;
            if (allocations < n) {
                assert_int_equal(s, GEMM_RVV_OK);
                break;
            }
            assert_int_equal(s, GEMM_RVV_ERR_NOMEM);
            assert_ptr_equal(obj, keep);
        }
        for (size_t j = 0; j < sizeof ms / sizeof ms[0]; j++)
            for (int threads = 1; threads <= 4; threads += 3) {
                const int64_t m = ms[j];
                float *x = __real_malloc((size_t)(m * sh->k) * sizeof *x);
                size_t ybytes = (size_t)(m * sh->n) * sizeof(float);
                unsigned char *y = __real_malloc(ybytes);
                assert_non_null(x);
                assert_non_null(y);
                for (size_t e = 0; e < (size_t)(m * sh->k); e++)
                    x[e] = (float)(rng_next(&r) % 2001) / 1000.0f - 1.0f;
                assert_int_equal(gemm_rvv_set_threads(threads), GEMM_RVV_OK);
                for (size_t n = 1;; n++) {
                    gemm_rvv_release_memory();
                    memset(y, SENTINEL, ybytes);
                    uint64_t calls_before = counted(sh->n, sh->k);
                    allocations = 0;
                    fail_at = n;
                    gemm_rvv_status s =
                        gemm_rvv_linear_f32x(x, m, sh->k, obj, NULL, y, sh->n, GEMM_RVV_F32);
                    fail_at = 0;
                    if (allocations < n) {
                        assert_int_equal(s, GEMM_RVV_OK);
                        assert_int_equal(counted(sh->n, sh->k), calls_before + 1);
                        break;
                    }
                    if (s != GEMM_RVV_ERR_NOMEM || counted(sh->n, sh->k) != calls_before)
                        fail_msg("Q8_0 N=%lld K=%lld M=%lld, %d threads: allocation %zu failed, "
                                 "status %d, counted %d", (long long)sh->n, (long long)sh->k,
                                 (long long)m, threads, n, (int)s,
                                 counted(sh->n, sh->k) != calls_before);
                    for (size_t e = 0; e < ybytes; e++)
                        if (y[e] != SENTINEL)
                            fail_msg("Q8_0 N=%lld K=%lld M=%lld: allocation %zu failed and byte "
                                     "%zu of Y was written", (long long)sh->n, (long long)sh->k,
                                     (long long)m, n, e);
                }
                allocations = 0;
                assert_int_equal(gemm_rvv_linear_f32x(x, m, sh->k, obj, NULL, y, sh->n,
                                                      GEMM_RVV_F32),
                                 GEMM_RVV_OK);
                assert_int_equal(allocations, 0);
                outputs_digest = digest_add(outputs_digest, y, ybytes);
                free(x);
                free(y);
            }
        gemm_rvv_weight_free(obj);
        free(b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_nomem),
        cmocka_unit_test(test_nothing_written_on_nomem),
        cmocka_unit_test(test_q8_0_nomem),
    };
    int failed = cmocka_run_group_tests_name("out of memory", tests, NULL, NULL);
    digest_print("outputs", outputs_digest);
    return failed;
}
