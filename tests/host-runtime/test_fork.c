/* fork() while other threads call: callers on a weight object and on plain weights, a weight
 * updater and a pool resizer keep running while the main thread forks CHILDREN children, one
 * after another. Each child must find a usable library: its first call gives the right bits,
 * gemm_rvv_set_threads starts a pool of its own (the parent's workers do not exist there and
 * must not be joined), a weight update and a call after it work. A child that has not exited
 * within CHILD_TIMEOUT_MS counts as hung and is killed. Only gemm_rvv.h is used. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "child.h"
#include "gemm_rvv.h"
#include "reference.h"
#include "testdata.h"

#define CHILDREN 40
/* GCC 12's ThreadSanitizer cannot start threads in a child of a threaded process (it reports a
 * "dup thread"), and its AddressSanitizer's threads allocate as they start, which hangs where a
 * lock of its allocator was held at fork() (seen: the child's workers waiting for ever on the
 * lock of one size class, about 1 run in 5 under load): under either the child sets one
 * thread before its first call, and stays there. The run without a sanitizer starts them. */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define CHILD_THREADS 1
#else
#define CHILD_THREADS 3
#endif
/* GCC 12's AddressSanitizer does not hold its allocator's locks across fork(): a thread the
 * parent is just starting (it allocates as it starts) can leave one locked for ever in the
 * child. Under it the parent's pool is not resized while children are forked. */
#ifdef __SANITIZE_ADDRESS__
#define RESIZE_DURING_FORKS 0
#else
#define RESIZE_DURING_FORKS 1
#endif
#define CHILD_TIMEOUT_MS 20000
#define M 3
#define N 190
#define K 150

static uint16_t x[M * K], w[2][N * K];
static float want[2][M * N];
static gemm_rvv_weight *object;
static atomic_int stop;
static atomic_int parent_wrong; /* calls in the parent with a bad status or wrong bits */

/* Which weights y's bits come from: 0 or 1, or -1 for neither. */
static int matches(const float *y)
{
    for (int v = 0; v < 2; v++)
        if (memcmp(y, want[v], sizeof want[v]) == 0)
            return v;
    return -1;
}

static void *packed_caller(void *arg)
{
    (void)arg;
    float y[M * N];
    while (!atomic_load(&stop))
        if (gemm_rvv_linear(x, M, K, object, NULL, y, N, GEMM_RVV_F32) != GEMM_RVV_OK ||
            matches(y) < 0)
            atomic_fetch_add(&parent_wrong, 1);
    return NULL;
}

static void *plain_caller(void *arg)
{
    (void)arg;
    float y[M * N];
    while (!atomic_load(&stop))
        if (gemm_rvv_linear_plain(x, M, K, w[0], N, K, K, NULL, y, N, GEMM_RVV_F32) !=
                GEMM_RVV_OK ||
            matches(y) != 0)
            atomic_fetch_add(&parent_wrong, 1);
    return NULL;
}

static void *updater(void *arg)
{
    (void)arg;
    for (int i = 0; !atomic_load(&stop); i++)
        if (gemm_rvv_weight_update(object, w[i % 2], K) != GEMM_RVV_OK)
            atomic_fetch_add(&parent_wrong, 1);
    return NULL;
}

static void *resizer(void *arg)
{
    (void)arg;
    for (int i = 0; !atomic_load(&stop); i++)
        if (gemm_rvv_set_threads(2 + i % 3) != GEMM_RVV_OK)
            atomic_fetch_add(&parent_wrong, 1);
    return NULL;
}

/* The child's checks; its exit status says which failed (0: none). */
static int child_main(void *unused)
{
    (void)unused;
    float y[M * N];
    if (CHILD_THREADS == 1 && gemm_rvv_set_threads(1) != GEMM_RVV_OK)
        return 3;
    if (gemm_rvv_linear(x, M, K, object, NULL, y, N, GEMM_RVV_F32) != GEMM_RVV_OK ||
        matches(y) < 0)
        return 2;
    if (gemm_rvv_set_threads(CHILD_THREADS) != GEMM_RVV_OK ||
        gemm_rvv_get_threads() != CHILD_THREADS)
        return 3;
    if (gemm_rvv_linear_plain(x, M, K, w[1], N, K, K, NULL, y, N, GEMM_RVV_F32) !=
            GEMM_RVV_OK ||
        matches(y) != 1)
        return 4;
    if (gemm_rvv_weight_update(object, w[0], K) != GEMM_RVV_OK ||
        gemm_rvv_linear(x, M, K, object, NULL, y, N, GEMM_RVV_F32) != GEMM_RVV_OK ||
        matches(y) != 0)
        return 5;
    if (gemm_rvv_set_threads(1) != GEMM_RVV_OK)
        return 6;
    return 0;
}

static void test_children_forked_during_calls(void **state)
{
    (void)state;
    struct rng r = {42};
    fill_bf16(&r, x, M * K, 0);
    for (int v = 0; v < 2; v++) {
        fill_bf16(&r, w[v], N * K, 0);
        ref_linear_f32(x, M, K, w[v], N, K, K, NULL, want[v], N);
    }
    assert_int_equal(gemm_rvv_set_threads(4), GEMM_RVV_OK);
    assert_int_equal(gemm_rvv_weight_create(w[0], N, K, K, &object), GEMM_RVV_OK);
    void *(*mains[])(void *) = {packed_caller, packed_caller, plain_caller, updater, resizer};
    enum { THREADS = sizeof mains / sizeof mains[0] - !RESIZE_DURING_FORKS };
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, mains[i], NULL), 0);

    int hung = 0, failed = 0, first_status = 0;
    /* Bounded: the forks stop at the first hung or failed child. */
    for (int c = 0; c < CHILDREN && !hung && !failed; c++) {
        nanosleep(&(struct timespec){0, 2 * 1000 * 1000}, NULL); /* let the threads get going */
        char err[1024];
        int status = run_child(child_main, NULL, err, sizeof err, CHILD_TIMEOUT_MS);
        if (status == -1)
            hung++;
        else if (status != 0 && failed++ == 0)
            first_status = status;
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    gemm_rvv_weight_free(object);
    if (hung || failed)
        fail_msg("a child forked while calls ran %s (exit status %d: 2 first call, 3 "
                 "set_threads, 4 plain call, 5 update, 6 last set_threads, 100+ signal)",
                 hung ? "hung: killed after the deadline" : "failed", first_status);
    assert_int_equal(atomic_load(&parent_wrong), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_children_forked_during_calls),
    };
    return cmocka_run_group_tests_name("fork", tests, NULL, NULL);
}
