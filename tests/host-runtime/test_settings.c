/* Settings and locks, each case in a child process of its own (the environment is read once,
 * and the pool starts once): environment values outside the documented ones are reported once
 * on stderr, in one bounded line, and leave the default in place; the documented ones are taken
 * silently; a first call that meets gemm_rvv_set_threads keeps the count set; a count above
 * GEMM_RVV_MAX_THREADS is refused; a weight lock the system refuses fails the call cleanly.
 * The library's pthread_mutex_lock and pthread_rwlock_{rd,wr}lock go through the wrappers
 * below (-Wl,--wrap), which can delay or refuse them. This process never calls the library
 * itself, so every child starts from nothing. */
#include <errno.h>
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
#include <unistd.h>

#include <cmocka.h>

#include "child.h"
#include "gemm_rvv.h"
#include "reference.h"
#include "testdata.h"

#define CHILD_TIMEOUT_MS 60000

/* ---- the lock wrappers ---------------------------------------------------------------------- */

int __real_pthread_mutex_lock(pthread_mutex_t *m);
int __real_pthread_rwlock_rdlock(pthread_rwlock_t *l);
int __real_pthread_rwlock_wrlock(pthread_rwlock_t *l);
int __wrap_pthread_mutex_lock(pthread_mutex_t *m);
int __wrap_pthread_rwlock_rdlock(pthread_rwlock_t *l);
int __wrap_pthread_rwlock_wrlock(pthread_rwlock_t *l);

static _Thread_local int slow_lock_at; /* this thread's mutex lock that sleeps first; 0: none */
static _Thread_local int locks_taken;
static atomic_int slow_lock_sleeping;
static atomic_int refuse_rwlocks; /* rdlock and wrlock fail with EAGAIN */

int __wrap_pthread_mutex_lock(pthread_mutex_t *m)
{
    if (slow_lock_at && ++locks_taken == slow_lock_at) {
        atomic_store(&slow_lock_sleeping, 1);
        nanosleep(&(struct timespec){0, 300 * 1000 * 1000}, NULL);
    }
    return __real_pthread_mutex_lock(m);
}

int __wrap_pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
    return atomic_load(&refuse_rwlocks) ? EAGAIN : __real_pthread_rwlock_rdlock(l);
}

int __wrap_pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
    return atomic_load(&refuse_rwlocks) ? EAGAIN : __real_pthread_rwlock_wrlock(l);
}

/* ---- children ----------------------------------------------------------------------------- */

/* The case a child runs: the variable to set, and the checks. */
struct child_case {
    int (*fn)(void);
    const char *name, *value; /* name NULL: nothing set */
};

static int child_main(void *arg)
{
    const struct child_case *c = arg;
    if (c->name)
        setenv(c->name, c->value, 1);
    return c->fn();
}

/* Runs fn with name=value; the child must exit 0 and write exactly `want` to stderr. */
static void expect_child(int (*fn)(void), const char *name, const char *value, const char *want)
{
    char err[4096];
    struct child_case c = {fn, name, value};
    int status = run_child(child_main, &c, err, sizeof err, CHILD_TIMEOUT_MS);
    if (status != 0 || strcmp(err, want) != 0)
        fail_msg("%s=\"%.60s\": child exit status %d (0 wanted; -1: hung), stderr:\n%s\n"
                 "wanted:\n%s", name ? name : "(nothing)", value ? value : "", status, err, want);
}

static int online_threads(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus < 1 ? 1 : cpus > GEMM_RVV_MAX_THREADS ? GEMM_RVV_MAX_THREADS : (int)cpus;
}

/* One small call on plain weights that must give the reference's bits. */
static int call_is_right(void)
{
    enum { M = 2, N = 70, K = 33 };
    uint16_t x[M * K], w[N * K];
    float y[M * N], want[M * N];
    struct rng r = {5};
    fill_bf16(&r, x, M * K, 0);
    fill_bf16(&r, w, N * K, 0);
    ref_linear_f32(x, M, K, w, N, K, K, NULL, want, N);
    return gemm_rvv_linear_plain(x, M, K, w, N, K, K, NULL, y, N, GEMM_RVV_F32) == GEMM_RVV_OK &&
           memcmp(y, want, sizeof y) == 0;
}

/* Every entry point that reads a setting, each twice: a report must still come once. */
static int touch_every_setting(void)
{
    for (int i = 0; i < 2; i++) {
        if (!call_is_right())
            return 10;
        (void)gemm_rvv_get_threads();
        (void)gemm_rvv_get_affinity();
        (void)gemm_rvv_kernels_active();
    }
    return 0;
}

/* ---- GEMM_RVV_THREADS --------------------------------------------------------------------- */

static int threads_are_default(void)
{
    int rc = touch_every_setting();
    return rc ? rc : gemm_rvv_get_threads() == online_threads() ? 0 : 2;
}

static int threads_are_three(void)
{
    int rc = touch_every_setting();
    return rc ? rc : gemm_rvv_get_threads() == 3 ? 0 : 2;
}

static void test_threads_env(void **state)
{
    (void)state;
    static const char *const refused[] = {"99999999999999999999", "1025", "4x", "-3", "0",
                                          " 3", "3 ", "0x10"};
    char want[256];
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        snprintf(want, sizeof want,
                 "gemm_rvv: GEMM_RVV_THREADS=\"%s\" ignored: expected a whole number from 1 to "
                 "1024; using the number of online CPUs\n", refused[i]);
        expect_child(threads_are_default, "GEMM_RVV_THREADS", refused[i], want);
    }
    expect_child(threads_are_three, "GEMM_RVV_THREADS", "3", "");
    expect_child(threads_are_three, "GEMM_RVV_THREADS", "003", "");
    expect_child(threads_are_default, "GEMM_RVV_THREADS", "", "");
}

/* ---- GEMM_RVV_DISABLE, GEMM_RVV_AFFINITY, GEMM_RVV_BLOCKING ------------------------------ */

static int affinity_is_none(void)
{
    int rc = touch_every_setting();
    return rc ? rc : gemm_rvv_get_affinity() == GEMM_RVV_AFFINITY_NONE ? 0 : 2;
}

static int affinity_is_compact(void)
{
    int rc = touch_every_setting();
    return rc ? rc : gemm_rvv_get_affinity() == GEMM_RVV_AFFINITY_COMPACT ? 0 : 2;
}

static void test_switches_env(void **state)
{
    (void)state;
    /* The host has no V, so whether kernels serve is seen on the target (test_env_disable). */
    expect_child(touch_every_setting, "GEMM_RVV_DISABLE", "false",
                 "gemm_rvv: GEMM_RVV_DISABLE=\"false\" ignored: expected 1 or 0; kernels stay "
                 "enabled\n");
    expect_child(touch_every_setting, "GEMM_RVV_DISABLE", "yes",
                 "gemm_rvv: GEMM_RVV_DISABLE=\"yes\" ignored: expected 1 or 0; kernels stay "
                 "enabled\n");
    expect_child(touch_every_setting, "GEMM_RVV_DISABLE", "1", "");
    expect_child(touch_every_setting, "GEMM_RVV_DISABLE", "0", "");
    expect_child(touch_every_setting, "GEMM_RVV_BLOCKING", "both",
                 "gemm_rvv: GEMM_RVV_BLOCKING=\"both\" ignored: expected alone or shared; "
                 "chosen by the thread count\n");
    expect_child(touch_every_setting, "GEMM_RVV_BLOCKING", "alone", "");
    expect_child(affinity_is_compact, "GEMM_RVV_AFFINITY", "compact", "");
    expect_child(affinity_is_none, "GEMM_RVV_AFFINITY", "spread\n",
                 "gemm_rvv: GEMM_RVV_AFFINITY=\"spread?\" ignored: expected compact, spread or "
                 "none; using none\n");
    /* A long value is cut to 40 characters. */
    char value[201], want[256];
    memset(value, 'x', 200);
    value[200] = '\0';
    snprintf(want, sizeof want,
             "gemm_rvv: GEMM_RVV_AFFINITY=\"%.40s...\" ignored: expected compact, spread or "
             "none; using none\n", value);
    expect_child(affinity_is_none, "GEMM_RVV_AFFINITY", value, want);
}

/* ---- thread counts -------------------------------------------------------------------------- */

static void *set_five_slowly(void *arg)
{
    (void)arg;
    /* Its second mutex lock is the pool's, taken again after the old workers were stopped:
     * the sleep before it leaves the pool half set for the first call to find. */
    slow_lock_at = 2;
    return (void *)(intptr_t)gemm_rvv_set_threads(5);
}

/* GEMM_RVV_THREADS=2: the first call, made while gemm_rvv_set_threads(5) is under way, must
 * not start the pool again at 2 once the 5 are running. */
static int first_call_meets_set_threads(void)
{
    pthread_t t;
    void *status;
    if (pthread_create(&t, NULL, set_five_slowly, NULL) != 0)
        return 9;
    while (!atomic_load(&slow_lock_sleeping))
        nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
    int right = call_is_right();
    pthread_join(t, &status);
    if (!right || (intptr_t)status != GEMM_RVV_OK)
        return 2;
    return gemm_rvv_get_threads() == 5 ? 0 : 3;
}

static int too_many_threads(void)
{
    if (gemm_rvv_set_threads(GEMM_RVV_MAX_THREADS + 1) != GEMM_RVV_ERR_THREADS)
        return 2;
    if (gemm_rvv_get_threads() != GEMM_RVV_MAX_THREADS || !call_is_right())
        return 3;
    return gemm_rvv_set_threads(1) == GEMM_RVV_OK ? 0 : 4;
}

static void test_thread_counts(void **state)
{
    (void)state;
    expect_child(first_call_meets_set_threads, "GEMM_RVV_THREADS", "2", "");
    expect_child(too_many_threads, NULL, NULL, "");
}

/* ---- a refused weight lock ------------------------------------------------------------------ */

/* rdlock refused: the call fails with GEMM_RVV_ERR_THREADS, writes and counts nothing; wrlock
 * refused: the update fails and the object keeps its values. */
static int refused_weight_lock(void)
{
    enum { M = 2, N = 40, K = 20 };
    uint16_t x[M * K], w[2][N * K];
    float y[M * N], untouched[M * N], want[M * N];
    struct rng r = {6};
    fill_bf16(&r, x, M * K, 0);
    fill_bf16(&r, w[0], N * K, 0);
    fill_bf16(&r, w[1], N * K, 0);
    ref_linear_f32(x, M, K, w[0], N, K, K, NULL, want, N);
    gemm_rvv_weight *obj;
    if (gemm_rvv_weight_create(w[0], N, K, K, &obj) != GEMM_RVV_OK)
        return 9;
    memset(y, 0x5a, sizeof y);
    memcpy(untouched, y, sizeof y);
    atomic_store(&refuse_rwlocks, 1);
    gemm_rvv_status call = gemm_rvv_linear(x, M, K, obj, NULL, y, N, GEMM_RVV_F32);
    gemm_rvv_status update = gemm_rvv_weight_update(obj, w[1], K);
    atomic_store(&refuse_rwlocks, 0);
    if (call != GEMM_RVV_ERR_THREADS || memcmp(y, untouched, sizeof y) != 0)
        return 2;
    gemm_rvv_counter row;
    if (gemm_rvv_counters(&row, 1) != 0)
        return 3;
    if (update != GEMM_RVV_ERR_THREADS)
        return 4;
    if (gemm_rvv_linear(x, M, K, obj, NULL, y, N, GEMM_RVV_F32) != GEMM_RVV_OK ||
        memcmp(y, want, sizeof y) != 0)
        return 5;
    gemm_rvv_weight_free(obj);
    return 0;
}

static void test_refused_weight_lock(void **state)
{
    (void)state;
    expect_child(refused_weight_lock, NULL, NULL, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads_env),
        cmocka_unit_test(test_switches_env),
        cmocka_unit_test(test_thread_counts),
        cmocka_unit_test(test_refused_weight_lock),
    };
    return cmocka_run_group_tests_name("settings", tests, NULL, NULL);
}
