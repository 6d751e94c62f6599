/* Calls in progress, seen through the runtime's count of them (gr_threads_calls), under
 * ThreadSanitizer and AddressSanitizer + UBSan: gemm_rvv_set_threads returns only once the
 * calls running when it was made have returned (their Y whole when it does, read before the
 * caller is joined), and gemm_rvv_weight_free refuses an object a call runs on
 * (GEMM_RVV_ERR_BUSY), which stays as it was. The long call is the fallback's (190 x 150 has
 * no plan in shapes-host.yaml) at M = 640: ten blocks of 64 rows, one job of the pool each,
 * so the pool's queue empties nine times before the call ends. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "gemm_rvv.h"
#include "reference.h"
#include "testdata.h"
#include "threads.h" /* gr_threads_calls */

enum { M = 640, N = 190, K = 150 };

struct long_call {
    uint16_t *x, *w;
    gemm_rvv_weight *obj; /* NULL: the call on plain weights */
    float *y, *want;
    gemm_rvv_status status;
    atomic_int returned;
};

static void *long_call_main(void *arg)
{
    struct long_call *c = arg;
    c->status = c->obj ? gemm_rvv_linear(c->x, M, K, c->obj, NULL, c->y, N, GEMM_RVV_F32)
                       : gemm_rvv_linear_plain(c->x, M, K, c->w, N, K, K, NULL, c->y, N,
                                               GEMM_RVV_F32);
    atomic_store(&c->returned, 1);
    return NULL;
}

static void long_call_init(struct long_call *c, uint64_t seed)
{
    struct rng r = {seed};
    *c = (struct long_call){malloc(M * K * 2), malloc(N * K * 2), NULL, malloc(M * N * 4),
                            malloc(M * N * 4), GEMM_RVV_OK, 0};
    assert_true(c->x && c->w && c->y && c->want);
    fill_bf16(&r, c->x, M * K, 0);
    fill_bf16(&r, c->w, N * K, 0);
    ref_linear_f32(c->x, M, K, c->w, N, K, K, NULL, c->want, N);
}

static void long_call_free(struct long_call *c)
{
    free(c->x);
    free(c->w);
    free(c->y);
    free(c->want);
}

/* Starts the call on a thread of its own and returns once the runtime counts it as running
 * (a call on an object holds it by then). A call that returned before it was seen is made
 * again, a few times. */
static void start_seen(struct long_call *c, pthread_t *t)
{
    for (int tries = 0; tries < 5; tries++) {
        memset(c->y, 0xff, M * N * 4); /* NaN: no call makes it */
        atomic_store(&c->returned, 0);
        assert_int_equal(pthread_create(t, NULL, long_call_main, c), 0);
        while (!atomic_load(&c->returned))
            if (gr_threads_calls() > 0)
                return;
            else
                nanosleep(&(struct timespec){0, 20 * 1000}, NULL);
        pthread_join(*t, NULL);
    }
    fail_msg("the call returned 5 times before it was seen running");
}

static void expect_y(const struct long_call *c, const char *when)
{
    if (memcmp(c->y, c->want, M * N * 4) != 0)
        fail_msg("%s: Y is not the reference's whole", when);
}

/* On plain weights and on an object: when gemm_rvv_set_threads returns, the call is over. */
static void test_set_threads_waits_for_calls(void **state)
{
    (void)state;
    struct long_call c;
    long_call_init(&c, 1);
    for (int on_object = 0; on_object < 2; on_object++) {
        if (on_object)
            assert_int_equal(gemm_rvv_weight_create(c.w, N, K, K, &c.obj), GEMM_RVV_OK);
        for (int count = 2; count <= 3; count++) {
            assert_int_equal(gemm_rvv_set_threads(5 - count), GEMM_RVV_OK);
            pthread_t t;
            start_seen(&c, &t);
            assert_int_equal(gemm_rvv_set_threads(count), GEMM_RVV_OK);
            int running = gr_threads_calls(), whole = memcmp(c.y, c.want, M * N * 4) == 0;
            if (running != 0 || !whole)
                fail_msg("%s: gemm_rvv_set_threads(%d) returned with %d calls running and Y "
                         "%s", on_object ? "object" : "plain weights", count, running,
                         whole ? "whole" : "not yet whole");
            pthread_join(t, NULL);
            assert_int_equal(c.status, GEMM_RVV_OK);
            assert_int_equal(gemm_rvv_get_threads(), count);
        }
    }
    assert_int_equal(gemm_rvv_weight_free(c.obj), GEMM_RVV_OK);
    long_call_free(&c);
}

/* Free on an object a call runs on: refused, the object untouched (the call's result, a later
 * call's and the weights read back are right); once the call returned, freed. */
static void test_free_refused_while_called(void **state)
{
    (void)state;
    struct long_call c;
    long_call_init(&c, 2);
    assert_int_equal(gemm_rvv_set_threads(3), GEMM_RVV_OK);
    assert_int_equal(gemm_rvv_weight_create(c.w, N, K, K, &c.obj), GEMM_RVV_OK);
    pthread_t t;
    start_seen(&c, &t);
    assert_int_equal(gemm_rvv_weight_free(c.obj), GEMM_RVV_ERR_BUSY);
    pthread_join(t, NULL);
    assert_int_equal(c.status, GEMM_RVV_OK);
    expect_y(&c, "the call that ran through the refused free");
    memset(c.y, 0xff, M * N * 4);
    assert_int_equal(gemm_rvv_linear(c.x, M, K, c.obj, NULL, c.y, N, GEMM_RVV_F32),
                     GEMM_RVV_OK);
    expect_y(&c, "a call after the refused free");
    uint16_t *back = malloc(N * K * 2);
    assert_non_null(back);
    assert_int_equal(gemm_rvv_weight_read(c.obj, back, 0, N * K), GEMM_RVV_OK);
    assert_memory_equal(back, c.w, N * K * 2);
    free(back);
    assert_int_equal(gemm_rvv_weight_free(c.obj), GEMM_RVV_OK);
    assert_int_equal(gemm_rvv_weight_free(NULL), GEMM_RVV_OK);
    long_call_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_threads_waits_for_calls),
        cmocka_unit_test(test_free_refused_while_called),
    };
    return cmocka_run_group_tests_name("running calls", tests, NULL, NULL);
}
