/* Worker affinity: GEMM_RVV_AFFINITY read at the pool's start, compact and spread placing each
 * worker on the CPU the header promises (read back from the system), none undoing it, new
 * workers pinned too, an unknown mode refused, and the same bits whatever the placement. */
#define _GNU_SOURCE /* sched_getaffinity */
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gemm_rvv.h"
#include "testdata.h"
#include "threads.h"

static int allowed[CPU_SETSIZE], allowed_count;

static void read_allowed(void)
{
    cpu_set_t set;
    assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
    allowed_count = 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set))
            allowed[allowed_count++] = c;
}

/* What the header says participant i of n gets. */
static int expected_cpu(gemm_rvv_affinity mode, int i, int n)
{
    int slot = mode == GEMM_RVV_AFFINITY_SPREAD && n <= allowed_count
                   ? (int)((long)i * allowed_count / n)
                   : i;
    return allowed[slot % allowed_count];
}

static void expect_pinned(gemm_rvv_affinity mode, int threads)
{
    for (int w = 0; w < threads - 1; w++)
        assert_int_equal(gr_threads_worker_cpu(w), expected_cpu(mode, w + 1, threads));
    assert_int_equal(gr_threads_worker_cpu(threads - 1), -1); /* no such worker */
}

static void test_env_sets_the_start(void **state)
{
    (void)state;
    read_allowed();
    assert_int_equal(gemm_rvv_get_affinity(), GEMM_RVV_AFFINITY_SPREAD);
    assert_int_equal(gemm_rvv_set_threads(3), GEMM_RVV_OK);
    expect_pinned(GEMM_RVV_AFFINITY_SPREAD, 3);
}

static void test_compact_and_new_workers(void **state)
{
    (void)state;
    assert_int_equal(gemm_rvv_set_affinity(GEMM_RVV_AFFINITY_COMPACT), GEMM_RVV_OK);
    assert_int_equal(gemm_rvv_get_affinity(), GEMM_RVV_AFFINITY_COMPACT);
    expect_pinned(GEMM_RVV_AFFINITY_COMPACT, 3);
    assert_int_equal(gemm_rvv_set_threads(5), GEMM_RVV_OK); /* more threads than CPUs here */
    expect_pinned(GEMM_RVV_AFFINITY_COMPACT, 5);
}

static void test_none_lets_them_move(void **state)
{
    (void)state;
    assert_int_equal(gemm_rvv_set_affinity(GEMM_RVV_AFFINITY_NONE), GEMM_RVV_OK);
    if (allowed_count == 1)
        skip(); /* one CPU: "any allowed CPU" is that one */
    for (int w = 0; w < gemm_rvv_get_threads() - 1; w++)
        assert_int_equal(gr_threads_worker_cpu(w), -1);
}

static void test_unknown_mode(void **state)
{
    (void)state;
    assert_int_equal(gemm_rvv_set_affinity((gemm_rvv_affinity)7), GEMM_RVV_ERR_THREADS);
    assert_int_equal(gemm_rvv_get_affinity(), GEMM_RVV_AFFINITY_NONE);
}

/* 50 x 50 runs the fallback, whose columns are split over the workers like a kernel's. */
static void test_same_bits_pinned(void **state)
{
    (void)state;
    enum { M = 3, N = 50, K = 50 };
    struct rng r = {42};
    uint16_t x[M * K], w[N * K];
    float y_free[M * N], y_pinned[M * N];
    fill_bf16(&r, x, M * K, 0);
    fill_bf16(&r, w, N * K, 0);
    assert_int_equal(gemm_rvv_set_threads(4), GEMM_RVV_OK);
    assert_int_equal(gemm_rvv_set_affinity(GEMM_RVV_AFFINITY_NONE), GEMM_RVV_OK);
    assert_int_equal(gemm_rvv_linear_plain(x, M, K, w, N, K, K, NULL, y_free, N, GEMM_RVV_F32),
                     GEMM_RVV_OK);
    assert_int_equal(gemm_rvv_set_affinity(GEMM_RVV_AFFINITY_COMPACT), GEMM_RVV_OK);
    assert_int_equal(gemm_rvv_linear_plain(x, M, K, w, N, K, K, NULL, y_pinned, N, GEMM_RVV_F32),
                     GEMM_RVV_OK);
    assert_memory_equal(y_free, y_pinned, sizeof y_free);
    digest_print("outputs", digest_add(DIGEST_INIT, y_pinned, sizeof y_pinned));
}

int main(void)
{
    setenv("GEMM_RVV_AFFINITY", "spread", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_env_sets_the_start),
        cmocka_unit_test(test_compact_and_new_workers),
        cmocka_unit_test(test_none_lets_them_move),
        cmocka_unit_test(test_unknown_mode),
        cmocka_unit_test(test_same_bits_pinned),
    };
    return cmocka_run_group_tests_name("affinity", tests, NULL, NULL);
}
