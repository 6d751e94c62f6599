/* The runtime on the host (plans with the host's plain C tiles, tests/host-runtime/shapes-host.yaml,
 * and the fallback for 190 x 150), run under ThreadSanitizer and under AddressSanitizer + UBSan: the first calls racing to start the worker pool, every thread
 * count on its own, several callers on one weight object, weight updates and pool resizes
 * while calls run, and many callers on a pool of many threads at once (no limit but memory).
 * Every result is compared bit for bit with reference.c. Only gemm_rvv.h is used, as an
 * engine would. Checks inside threads are counted and asserted by the main thread
 * (cmocka's asserts must not run on other threads). */
#include <dirent.h>
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

#include "gemm_rvv.h"
#include "reference.h"
#include "testdata.h"

/* The pool size the environment asks for before the first call (see main). */
#define ENV_THREADS 3
#define CALLERS 4
#define SENTINEL 0x7fa5a5a5u /* a NaN no computation makes: marks Y's padding */

/* One Linear problem: inputs, and the reference result for each of two weight values. */
struct problem {
    size_t m, n, k, ldx, ldw, ldy;
    uint16_t *x, *w[2];
    float *bias;   /* NULL or N values */
    float *want[2]; /* the reference Y (m rows of ldy) for w[0] and for w[1] */
};

static void *checked_malloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    assert_non_null(p);
    return p;
}

static void fill_sentinel(float *y, size_t count)
{
    for (size_t i = 0; i < count; i++)
        memcpy(&y[i], &(uint32_t){SENTINEL}, sizeof y[i]);
}

/* A problem with padded strides (pad extra elements per row) and seeded values. */
static struct problem *problem_new(size_t m, size_t n, size_t k, size_t pad, int with_bias,
                                   uint64_t seed)
{
    struct problem *p = checked_malloc(sizeof *p);
    struct rng r = {seed * 0x9E3779B97F4A7C15ull + 1};
    *p = (struct problem){m, n, k, k + pad, k + pad, n + pad, NULL, {NULL, NULL}, NULL,
                          {NULL, NULL}};
    p->x = checked_malloc(m * p->ldx * sizeof *p->x);
    fill_bf16(&r, p->x, m * p->ldx, 0);
    if (with_bias) {
        p->bias = checked_malloc(n * sizeof *p->bias);
        for (size_t i = 0; i < n; i++)
            p->bias[i] = (float)((int)(rng_next(&r) % 2001) - 1000) / 256.0f;
    }
    for (int v = 0; v < 2; v++) {
        p->w[v] = checked_malloc(n * p->ldw * sizeof *p->w[v]);
        fill_bf16(&r, p->w[v], n * p->ldw, 0);
        p->want[v] = checked_malloc(m * p->ldy * sizeof *p->want[v]);
        fill_sentinel(p->want[v], m * p->ldy);
        ref_linear_f32(p->x, m, p->ldx, p->w[v], n, k, p->ldw, p->bias, p->want[v], p->ldy);
    }
    return p;
}

/* The same weights and bias with other activations and rows. */
static struct problem *problem_rows(const struct problem *base, size_t m, uint64_t seed)
{
    struct problem *p = checked_malloc(sizeof *p);
    struct rng r = {seed * 0x9E3779B97F4A7C15ull + 1};
    *p = *base;
    p->m = m;
    p->x = checked_malloc(m * p->ldx * sizeof *p->x);
    fill_bf16(&r, p->x, m * p->ldx, 0);
    for (int v = 0; v < 2; v++) {
        p->w[v] = NULL; /* borrowed from base */
        p->want[v] = checked_malloc(m * p->ldy * sizeof *p->want[v]);
        fill_sentinel(p->want[v], m * p->ldy);
        ref_linear_f32(p->x, m, p->ldx, base->w[v], p->n, p->k, p->ldw, p->bias, p->want[v],
                       p->ldy);
    }
    p->bias = NULL; /* borrowed too: base->bias is used by the calls */
    return p;
}

static void problem_free(struct problem *p)
{
    free(p->x);
    free(p->w[0]);
    free(p->w[1]);
    free(p->bias);
    free(p->want[0]);
    free(p->want[1]);
    free(p);
}

/* 0 when Y (padding included) has want's bits, else 1 + the index of the first difference. */
static size_t first_difference(const float *y, const float *want, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (memcmp(&y[i], &want[i], sizeof y[i]) != 0)
            return i + 1;
    return 0;
}

/* One call on a weight object into y (a fresh sentinel-filled buffer): which reference it
 * matched (0 or 1), -1 for neither, -2 for a status other than OK. */
static int call_packed(const struct problem *p, const float *bias, const gemm_rvv_weight *wt,
                       float *y)
{
    fill_sentinel(y, p->m * p->ldy);
    if (gemm_rvv_linear(p->x, (int64_t)p->m, (int64_t)p->ldx, wt, bias, y, (int64_t)p->ldy,
                        GEMM_RVV_F32) != GEMM_RVV_OK)
        return -2;
    for (int v = 0; v < 2; v++)
        if (first_difference(y, p->want[v], p->m * p->ldy) == 0)
            return v;
    return -1;
}

/* ---- the first calls start the pool ------------------------------------------------------- */

struct first_call {
    const struct problem *p;
    pthread_barrier_t *start;
    int result; /* as call_packed, for the plain call on w[0] */
};

static void *first_call_main(void *arg)
{
    struct first_call *fc = arg;
    const struct problem *p = fc->p;
    float *y = malloc(p->m * p->ldy * sizeof *y);
    fc->result = -2;
    if (!y)
        return NULL;
    fill_sentinel(y, p->m * p->ldy);
    pthread_barrier_wait(fc->start);
    if (gemm_rvv_linear_plain(p->x, (int64_t)p->m, (int64_t)p->ldx, p->w[0], (int64_t)p->n,
                              (int64_t)p->k, (int64_t)p->ldw, p->bias, y, (int64_t)p->ldy,
                              GEMM_RVV_F32) == GEMM_RVV_OK)
        fc->result = first_difference(y, p->want[0], p->m * p->ldy) == 0 ? 0 : -1;
    free(y);
    return NULL;
}

/* Must run first: no call has started the pool yet. Several threads make the first call at the
 * same moment; the pool they start has GEMM_RVV_THREADS threads. */
static void test_first_calls_start_the_pool(void **state)
{
    (void)state;
    struct problem *p = problem_new(6, 150, 70, 2, 1, 1);
    pthread_barrier_t start;
    pthread_t t[CALLERS];
    struct first_call fc[CALLERS];
    assert_int_equal(pthread_barrier_init(&start, NULL, CALLERS), 0);
    for (int i = 0; i < CALLERS; i++) {
        fc[i] = (struct first_call){p, &start, -2};
        assert_int_equal(pthread_create(&t[i], NULL, first_call_main, &fc[i]), 0);
    }
    for (int i = 0; i < CALLERS; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(fc[i].result, 0);
    }
    pthread_barrier_destroy(&start);
    assert_int_equal(gemm_rvv_get_threads(), ENV_THREADS);
    problem_free(p);
}

/* ---- each thread count -------------------------------------------------------------------- */

static const struct {
    size_t m, n, k, pad;
    int bias;
} shapes[] = {
    {1, 1, 1, 0, 0},     {1, 200, 96, 0, 1},  {5, 131, 77, 3, 0}, {2, 64, 128, 0, 1},
    {70, 67, 33, 1, 1},  {130, 9, 250, 5, 0}, {3, 300, 130, 8, 1},
};

static void check_every_shape(int threads)
{
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        struct problem *p = problem_new(shapes[s].m, shapes[s].n, shapes[s].k, shapes[s].pad,
                                        shapes[s].bias, 100 + s);
        float *y = checked_malloc(p->m * p->ldy * sizeof *y);
        uint16_t *y16 = checked_malloc(p->m * p->ldy * sizeof *y16);
        gemm_rvv_weight *wt = NULL;
        assert_int_equal(gemm_rvv_weight_create(p->w[0], (int64_t)p->n, (int64_t)p->k,
                                                (int64_t)p->ldw, &wt), GEMM_RVV_OK);
        if (call_packed(p, p->bias, wt, y) != 0)
            fail_msg("threads %d, M %zu N %zu K %zu: packed result differs from the reference",
                     threads, p->m, p->n, p->k);

        fill_sentinel(y, p->m * p->ldy);
        assert_int_equal(gemm_rvv_linear_plain(p->x, (int64_t)p->m, (int64_t)p->ldx, p->w[0],
                                               (int64_t)p->n, (int64_t)p->k, (int64_t)p->ldw,
                                               p->bias, y, (int64_t)p->ldy, GEMM_RVV_F32),
                         GEMM_RVV_OK);
        size_t d = first_difference(y, p->want[0], p->m * p->ldy);
        if (d)
            fail_msg("threads %d, M %zu N %zu K %zu: plain result differs at element %zu",
                     threads, p->m, p->n, p->k, d - 1);

        /* BF16 output: the reference rounded; the padding keeps its marker. */
        for (size_t i = 0; i < p->m * p->ldy; i++)
            y16[i] = 0xa5a5;
        assert_int_equal(gemm_rvv_linear(p->x, (int64_t)p->m, (int64_t)p->ldx, wt, p->bias,
                                         y16, (int64_t)p->ldy, GEMM_RVV_BF16), GEMM_RVV_OK);
        for (size_t r = 0; r < p->m; r++)
            for (size_t c = 0; c < p->ldy; c++) {
                size_t i = r * p->ldy + c;
                uint16_t want = c < p->n ? ref_bf16_from_f32(p->want[0][i]) : 0xa5a5;
                if (y16[i] != want)
                    fail_msg("threads %d, M %zu N %zu K %zu: BF16 Y[%zu, %zu] is 0x%04x, "
                             "expected 0x%04x", threads, p->m, p->n, p->k, r, c, y16[i], want);
            }
        gemm_rvv_weight_free(wt);
        free(y);
        free(y16);
        problem_free(p);
    }
}

static void test_thread_counts(void **state)
{
    (void)state;
    static const int counts[] = {1, 2, 3, 8};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        assert_int_equal(gemm_rvv_set_threads(counts[i]), GEMM_RVV_OK);
        assert_int_equal(gemm_rvv_get_threads(), counts[i]);
        check_every_shape(counts[i]);
    }
}

/* ---- callers running at the same time ----------------------------------------------------- */

/* A caller thread: calls on one weight object with each of its problems in turn, at least
 * `rounds` times and until *stop is set, and counts what it saw. */
struct caller {
    gemm_rvv_weight *wt;
    struct problem *p[3];
    const float *bias;
    int rounds;
    const atomic_int *stop;
    int calls, saw[2], wrong, bad_status;
};

static void *caller_main(void *arg)
{
    struct caller *c = arg;
    size_t most = 0;
    for (int i = 0; i < 3; i++)
        most = c->p[i]->m * c->p[i]->ldy > most ? c->p[i]->m * c->p[i]->ldy : most;
    float *y = malloc(most * sizeof *y);
    if (!y) {
        c->bad_status++;
        return NULL;
    }
    for (int round = 0; round < c->rounds || (c->stop && !atomic_load(c->stop)); round++) {
        for (int i = 0; i < 3; i++) {
            int r = call_packed(c->p[i], c->bias, c->wt, y);
            c->calls++;
            if (r >= 0)
                c->saw[r]++;
            else if (r == -1)
                c->wrong++;
            else
                c->bad_status++;
        }
    }
    free(y);
    return NULL;
}

/* CALLERS threads sharing base's weights, each with rows of its own. */
struct crowd {
    struct problem *base;
    gemm_rvv_weight *wt;
    struct caller c[CALLERS];
    pthread_t t[CALLERS];
};

static void crowd_start(struct crowd *cr, struct problem *base, int rounds, const atomic_int *stop)
{
    static const size_t rows[3] = {1, 7, 33};
    cr->base = base;
    assert_int_equal(gemm_rvv_weight_create(base->w[0], (int64_t)base->n, (int64_t)base->k,
                                            (int64_t)base->ldw, &cr->wt), GEMM_RVV_OK);
    for (int i = 0; i < CALLERS; i++) {
        cr->c[i] = (struct caller){cr->wt, {NULL}, base->bias, rounds, stop, 0, {0, 0}, 0, 0};
        for (int j = 0; j < 3; j++)
            cr->c[i].p[j] = problem_rows(base, rows[j] + (size_t)i, 1000 + 10 * i + j);
        assert_int_equal(pthread_create(&cr->t[i], NULL, caller_main, &cr->c[i]), 0);
    }
}

/* Joins the callers; returns how many calls they made. */
static int crowd_finish(struct crowd *cr, int allow_second_weights)
{
    int calls = 0;
    for (int i = 0; i < CALLERS; i++) {
        pthread_join(cr->t[i], NULL);
        struct caller *c = &cr->c[i];
        if (c->bad_status || c->wrong || (!allow_second_weights && c->saw[1]))
            fail_msg("caller %d: %d calls, %d failed, %d wrong results, %d with the old weights,"
                     " %d with the new", i, c->calls, c->bad_status, c->wrong, c->saw[0],
                     c->saw[1]);
        calls += c->calls;
        for (int j = 0; j < 3; j++)
            problem_free(c->p[j]);
    }
    gemm_rvv_weight_free(cr->wt);
    return calls;
}

/* Calls the counters say went to the fallback and to kernels for one (N, K). */
static void counted_calls(const struct problem *p, uint64_t *fallback, uint64_t *kernel)
{
    gemm_rvv_counter rows[64];
    size_t count = gemm_rvv_counters(rows, 64);
    assert_true(count <= 64);
    *fallback = *kernel = 0;
    for (size_t i = 0; i < count; i++)
        if (rows[i].n == (int64_t)p->n && rows[i].k == (int64_t)p->k) {
            *fallback += rows[i].fallback_calls;
            *kernel += rows[i].kernel_calls;
        }
}

static void test_callers_share_one_weight_object(void **state)
{
    (void)state;
    assert_int_equal(gemm_rvv_set_threads(3), GEMM_RVV_OK);
    gemm_rvv_counters_reset();
    struct problem *base = problem_new(1, 190, 150, 2, 1, 7);
    struct crowd cr;
    crowd_start(&cr, base, 4, NULL);
    int calls = crowd_finish(&cr, 0);
    /* Every call was counted once, as a fallback call: 190 x 150 has no plan. */
    uint64_t fallback, kernel;
    counted_calls(base, &fallback, &kernel);
    assert_int_equal(fallback, (uint64_t)calls);
    assert_int_equal(kernel, 0);
    problem_free(base);
}

/* The threads of this process (/proc/self/task): how many, and a sum of their ids, which
 * changes when one is replaced by a new one. */
static int process_threads(long *id_sum)
{
    DIR *d = opendir("/proc/self/task");
    assert_non_null(d);
    int n = 0;
    *id_sum = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.') {
            n++;
            *id_sum += atol(e->d_name);
        }
    closedir(d);
    return n;
}

/* Setting the count that runs keeps the workers (engines set it before every graph): the
 * same threads, not new ones; another count changes them. */
static void test_same_count_keeps_workers(void **state)
{
    (void)state;
    long ids, ids_after;
    assert_int_equal(gemm_rvv_set_threads(3), GEMM_RVV_OK);
    int before = process_threads(&ids);
    for (int i = 0; i < 5; i++)
        assert_int_equal(gemm_rvv_set_threads(3), GEMM_RVV_OK);
    assert_int_equal(process_threads(&ids_after), before);
    assert_int_equal(ids_after, ids);
    assert_int_equal(gemm_rvv_get_threads(), 3);
    assert_int_equal(gemm_rvv_set_threads(4), GEMM_RVV_OK);
    assert_int_equal(process_threads(&ids_after), before + 1);
}

/* ---- weights updated, pool resized while calls run ---------------------------------------- */

/* Updates alternate between the two weight values; after each, this thread's own call must see
 * the values it just set (every call that starts after update returns sees them). */
struct updater {
    gemm_rvv_weight *wt;
    struct problem *p;
    int updates, failed, stale;
    atomic_int done;
};

static void *updater_main(void *arg)
{
    struct updater *u = arg;
    float *y = malloc(u->p->m * u->p->ldy * sizeof *y);
    if (!y)
        u->failed++;
    for (int i = 0; y && i < u->updates; i++) {
        int v = (i + 1) % 2;
        if (gemm_rvv_weight_update(u->wt, u->p->w[v], (int64_t)u->p->ldw) != GEMM_RVV_OK)
            u->failed++;
        else if (call_packed(u->p, u->p->bias, u->wt, y) != v)
            u->stale++;
    }
    free(y);
    atomic_store(&u->done, 1);
    return NULL;
}

/* How long the updates may take while the callers keep calling: an update waits for the calls
 * already running, each a few milliseconds even under the sanitizers, so this is ample. */
#define UPDATES_TIMEOUT_MS 60000

static void test_weight_updates_during_calls(void **state)
{
    (void)state;
    assert_int_equal(gemm_rvv_set_threads(2), GEMM_RVV_OK);
    struct problem *base = problem_new(3, 170, 140, 0, 0, 11);
    atomic_int stop = 0;
    struct crowd cr;
    crowd_start(&cr, base, 2, &stop);
    struct updater u = {cr.wt, base, 24, 0, 0, 0};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, updater_main, &u), 0);
    int waited = 0;
    for (; !atomic_load(&u.done) && waited < UPDATES_TIMEOUT_MS; waited += 10)
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    int finished = atomic_load(&u.done);
    atomic_store(&stop, 1); /* the callers stop, so a starved update gets through */
    pthread_join(t, NULL);
    int calls = crowd_finish(&cr, 1); /* each result is all old or all new values, no mix */
    if (!finished)
        fail_msg("%d weight updates did not finish within %d ms while %d threads kept calling "
                 "on the object: an update must wait only for the calls already running, yet "
                 "new calls kept it out (a lock that prefers readers starves the writer)",
                 u.updates, UPDATES_TIMEOUT_MS, CALLERS);
    assert_int_equal(u.failed, 0);
    assert_int_equal(u.stale, 0);
    assert_true(calls >= CALLERS * 2 * 3);
    problem_free(base);
}

static void test_pool_resized_during_calls(void **state)
{
    (void)state;
    static const int counts[] = {1, 2, 3, 8, 3, 1, 8, 2};
    struct problem *base = problem_new(1, 160, 120, 1, 1, 13);
    atomic_int stop = 0;
    struct crowd cr;
    crowd_start(&cr, base, 2, &stop);
    for (int round = 0; round < 3; round++)
        for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
            assert_int_equal(gemm_rvv_set_threads(counts[i]), GEMM_RVV_OK);
            assert_int_equal(gemm_rvv_get_threads(), counts[i]);
        }
    atomic_store(&stop, 1);
    crowd_finish(&cr, 0);
    problem_free(base);
}

/* ---- many callers on many threads ---------------------------------------------------------- */

/* Each call on MANY_THREADS threads takes scratch for every one of them: MANY_CALLERS callers
 * at once must all get theirs (memory is plentiful here), so every call succeeds. */
#define MANY_THREADS 256
#define MANY_CALLERS 8
#define MANY_ROUNDS 16
#define MANY_TIMEOUT_MS 120000

struct many_caller {
    const struct problem *p;
    pthread_barrier_t *start;
    const atomic_int *stop;
    atomic_int *done; /* callers finished */
    int calls, failed, wrong;
};

static void *many_caller_main(void *arg)
{
    struct many_caller *c = arg;
    const struct problem *p = c->p;
    float *y = malloc(p->m * p->ldy * sizeof *y);
    pthread_barrier_wait(c->start);
    for (int i = 0; y && i < MANY_ROUNDS && !atomic_load(c->stop); i++) {
        fill_sentinel(y, p->m * p->ldy);
        gemm_rvv_status s = gemm_rvv_linear_plain(p->x, (int64_t)p->m, (int64_t)p->ldx, p->w[0],
                                                  (int64_t)p->n, (int64_t)p->k, (int64_t)p->ldw,
                                                  NULL, y, (int64_t)p->ldy, GEMM_RVV_F32);
        c->calls++;
        if (s != GEMM_RVV_OK)
            c->failed++;
        else if (first_difference(y, p->want[0], p->m * p->ldy) != 0)
            c->wrong++;
    }
    free(y);
    atomic_fetch_add(c->done, 1);
    return NULL;
}

static void test_many_callers_on_many_threads(void **state)
{
    (void)state;
    assert_int_equal(gemm_rvv_set_threads(MANY_THREADS), GEMM_RVV_OK);
    assert_int_equal(gemm_rvv_get_threads(), MANY_THREADS);
    gemm_rvv_counters_reset();
    /* N = 64 columns per thread: every call splits into MANY_THREADS pieces. */
    struct problem *p = problem_new(1, 64 * MANY_THREADS, 8, 0, 0, 17);
    pthread_barrier_t start;
    assert_int_equal(pthread_barrier_init(&start, NULL, MANY_CALLERS + 1), 0);
    atomic_int stop = 0, done = 0;
    struct many_caller c[MANY_CALLERS];
    pthread_t t[MANY_CALLERS];
    for (int i = 0; i < MANY_CALLERS; i++) {
        c[i] = (struct many_caller){p, &start, &stop, &done, 0, 0, 0};
        assert_int_equal(pthread_create(&t[i], NULL, many_caller_main, &c[i]), 0);
    }
    pthread_barrier_wait(&start);
    /* Bounded: past the deadline the callers stop after their current call. */
    for (int waited = 0; atomic_load(&done) < MANY_CALLERS; waited += 10) {
        if (waited >= MANY_TIMEOUT_MS)
            atomic_store(&stop, 1);
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    int calls = 0, failed = 0, wrong = 0;
    for (int i = 0; i < MANY_CALLERS; i++) {
        pthread_join(t[i], NULL);
        calls += c[i].calls;
        failed += c[i].failed;
        wrong += c[i].wrong;
    }
    pthread_barrier_destroy(&start);
    if (failed || wrong || atomic_load(&stop))
        fail_msg("%d callers on %d threads: %d calls, %d failed (NOMEM), %d wrong%s",
                 MANY_CALLERS, MANY_THREADS, calls, failed, wrong,
                 atomic_load(&stop) ? ", stopped at the deadline" : "");
    /* Every call was counted once, as served by the plan of 16384 x 8 (shapes-host.yaml). */
    uint64_t fallback, kernel;
    counted_calls(p, &fallback, &kernel);
    assert_int_equal(kernel, (uint64_t)calls);
    assert_int_equal(fallback, 0);
    assert_int_equal(gemm_rvv_set_threads(ENV_THREADS), GEMM_RVV_OK);
    problem_free(p);
}

int main(void)
{
    /* The pool starts on the first call, sized from the environment. */
    char env[16];
    snprintf(env, sizeof env, "%d", ENV_THREADS);
    setenv("GEMM_RVV_THREADS", env, 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_calls_start_the_pool), /* first: nothing started yet */
        cmocka_unit_test(test_thread_counts),
        cmocka_unit_test(test_callers_share_one_weight_object),
        cmocka_unit_test(test_same_count_keeps_workers),
        cmocka_unit_test(test_weight_updates_during_calls),
        cmocka_unit_test(test_pool_resized_during_calls),
        cmocka_unit_test(test_many_callers_on_many_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
