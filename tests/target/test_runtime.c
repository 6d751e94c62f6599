/* The public API: dispatch to kernel or fallback (seen through the counters), the forced
 * fallback, weight updates, thread counts, concurrent callers, large M, bad arguments, and
 * outputs that overlap inputs. */
#include <pthread.h>
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

/* Shapes of tests/target/shapes-test.yaml have kernels (N=1025, K=31 up to M=128); 50 x 50
 * is in no shapes file, so only the fallback serves it. */
#define KN 1025
#define KK 31
#define FN 50
#define FK 50

static uint16_t *random_bf16(size_t count, uint64_t seed)
{
    struct rng r = {seed};
    uint16_t *v = malloc(count * sizeof *v);
    assert_non_null(v);
    fill_bf16(&r, v, count, 0);
    return v;
}

static float *random_bias(size_t n)
{
    float *b = malloc(n * sizeof *b);
    assert_non_null(b);
    for (size_t i = 0; i < n; i++)
        b[i] = (float)(i % 7) - 3.0f;
    return b;
}

static const gemm_rvv_counter *find_counter(gemm_rvv_counter *rows, size_t count, int64_t n,
                                            int64_t k, int64_t bucket)
{
    for (size_t i = 0; i < count; i++)
        if (rows[i].n == n && rows[i].k == k && rows[i].m_bucket == bucket)
            return &rows[i];
    return NULL;
}

/* Whether this core runs kernels (V present). The no-V run sets GEMM_RVV_TEST_NO_V=1, and
 * then every call must be the fallback's, with the same bits. */
static int with_v;

/* Expects the counts a core with V gives; without V every call is the fallback's. */
static void expect_counts(int64_t n, int64_t k, int64_t bucket, uint64_t kernel,
                          uint64_t fallback)
{
    if (!with_v) {
        fallback += kernel;
        kernel = 0;
    }
    gemm_rvv_counter rows[64];
    size_t count = gemm_rvv_counters(rows, 64);
    const gemm_rvv_counter *c = find_counter(rows, count < 64 ? count : 64, n, k, bucket);
    if (!c)
        fail_msg("no counter for N=%lld K=%lld M<=%lld", (long long)n, (long long)k,
                 (long long)bucket);
    if (c->kernel_calls != kernel || c->fallback_calls != fallback)
        fail_msg("N=%lld K=%lld M<=%lld: %llu kernel and %llu fallback calls, want %llu and %llu",
                 (long long)n, (long long)k, (long long)bucket,
                 (unsigned long long)c->kernel_calls, (unsigned long long)c->fallback_calls,
                 (unsigned long long)kernel, (unsigned long long)fallback);
}

/* Y of one call through the API; force selects the fallback. */
static float *linear_f32(const uint16_t *x, int64_t m, const gemm_rvv_weight *w, int64_t n,
                         const float *bias, int force)
{
    float *y = malloc((size_t)(m * n) * sizeof *y);
    assert_non_null(y);
    gemm_rvv_force_fallback(force);
    assert_int_equal(gemm_rvv_linear(x, m, KK, w, bias, y, n, GEMM_RVV_F32), GEMM_RVV_OK);
    gemm_rvv_force_fallback(0);
    return y;
}

static void test_dispatch(void **state)
{
    (void)state;
    gemm_rvv_counters_reset();
    uint16_t *x = random_bf16(5 * FK, 1), *wk = random_bf16(KN * KK, 2);
    uint16_t *wf = random_bf16(FN * FK, 3);
    gemm_rvv_weight *gated, *other;
    assert_int_equal(gemm_rvv_weight_create(wk, KN, KK, KK, &gated), GEMM_RVV_OK);
    assert_int_equal(gemm_rvv_weight_create(wf, FN, FK, FK, &other), GEMM_RVV_OK);
    float y[5 * KN];
    assert_int_equal(gemm_rvv_linear(x, 5, KK, gated, NULL, y, KN, GEMM_RVV_F32), GEMM_RVV_OK);
    assert_int_equal(gemm_rvv_linear(x, 5, FK, other, NULL, y, FN, GEMM_RVV_F32), GEMM_RVV_OK);
    assert_int_equal(gemm_rvv_linear_plain(x, 1, KK, wk, KN, KK, KK, NULL, y, KN, GEMM_RVV_F32),
                     GEMM_RVV_OK);
    expect_counts(KN, KK, 8, 1, 0);   /* M=5: the bucket-8 kernel */
    expect_counts(FN, FK, 8, 0, 1);   /* not in the build: the fallback */
    expect_counts(KN, KK, 1, 1, 0);   /* M=1, plain weights: the GEMV kernel */
    gemm_rvv_counters_print(stdout);
    gemm_rvv_weight_free(gated);
    gemm_rvv_weight_free(other);
    free(x);
    free(wk);
    free(wf);
}

/* The forced fallback is counted as such and gives the kernel's bits. */
static void test_forced_fallback(void **state)
{
    (void)state;
    gemm_rvv_counters_reset();
    uint16_t *x = random_bf16(17 * KK, 4), *w = random_bf16(KN * KK, 5);
    float *bias = random_bias(KN);
    gemm_rvv_weight *obj;
    assert_int_equal(gemm_rvv_weight_create(w, KN, KK, KK, &obj), GEMM_RVV_OK);
    float *kernel = linear_f32(x, 17, obj, KN, bias, 0);
    float *fallback = linear_f32(x, 17, obj, KN, bias, 1);
    assert_memory_equal(kernel, fallback, 17 * KN * sizeof *kernel);
    expect_counts(KN, KK, 32, 1, 1);
    assert_int_equal(gemm_rvv_kernels_active(), with_v);
    free(kernel);
    free(fallback);
    free(bias);
    free(x);
    free(w);
    gemm_rvv_weight_free(obj);
}

/* After an update no call sees the old weights. */
static void test_weight_update(void **state)
{
    (void)state;
    uint16_t *x = random_bf16(4 * KK, 6), *w1 = random_bf16(KN * KK, 7);
    uint16_t *w2 = random_bf16(KN * (KK + 3), 8);
    gemm_rvv_weight *obj, *fresh;
    assert_int_equal(gemm_rvv_weight_create(w1, KN, KK, KK, &obj), GEMM_RVV_OK);
    float *before = linear_f32(x, 4, obj, KN, NULL, 0);
    /* The engine's buffer is reused for the new values: the object must not read it. */
    memset(w1, 0xff, KN * KK * sizeof *w1);
    float *still = linear_f32(x, 4, obj, KN, NULL, 0);
    assert_memory_equal(before, still, 4 * KN * sizeof *before);
    assert_int_equal(gemm_rvv_weight_update(obj, w2, KK + 3), GEMM_RVV_OK);
    assert_int_equal(gemm_rvv_weight_create(w2, KN, KK, KK + 3, &fresh), GEMM_RVV_OK);
    float *after = linear_f32(x, 4, obj, KN, NULL, 0);
    float *want = linear_f32(x, 4, fresh, KN, NULL, 1);
    assert_memory_equal(after, want, 4 * KN * sizeof *after);
    assert_memory_not_equal(after, before, 4 * KN * sizeof *after);
    free(before);
    free(still);
    free(after);
    free(want);
    free(x);
    free(w1);
    free(w2);
    gemm_rvv_weight_free(obj);
    gemm_rvv_weight_free(fresh);
}

/* 1, 2, 3 and 8 threads: the same bits, for kernels and for the fallback. */
static void test_thread_counts(void **state)
{
    (void)state;
    static const int counts[] = {1, 2, 3, 8};
    uint16_t *x = random_bf16(13 * FK, 9), *w = random_bf16(KN * KK, 10);
    uint16_t *wf = random_bf16(FN * FK, 11);
    float *bias = random_bias(KN);
    gemm_rvv_weight *obj, *other;
    assert_int_equal(gemm_rvv_weight_create(w, KN, KK, KK, &obj), GEMM_RVV_OK);
    assert_int_equal(gemm_rvv_weight_create(wf, FN, FK, FK, &other), GEMM_RVV_OK);
    uint16_t first[13 * KN], firstf[13 * FN];
    for (size_t t = 0; t < 4; t++) {
        assert_int_equal(gemm_rvv_set_threads(counts[t]), GEMM_RVV_OK);
        assert_int_equal(gemm_rvv_get_threads(), counts[t]);
        uint16_t y[13 * KN], yf[13 * FN], yp[13 * KN];
        assert_int_equal(gemm_rvv_linear(x, 13, KK, obj, bias, y, KN, GEMM_RVV_BF16), GEMM_RVV_OK);
        assert_int_equal(gemm_rvv_linear(x, 13, FK, other, NULL, yf, FN, GEMM_RVV_BF16),
                         GEMM_RVV_OK);
        assert_int_equal(gemm_rvv_linear_plain(x, 13, KK, w, KN, KK, KK, bias, yp, KN,
                                               GEMM_RVV_BF16), GEMM_RVV_OK);
        assert_memory_equal(y, yp, sizeof y);
        if (t == 0) {
            memcpy(first, y, sizeof y);
            memcpy(firstf, yf, sizeof yf);
        }
        assert_memory_equal(y, first, sizeof y);
        assert_memory_equal(yf, firstf, sizeof yf);
    }
    free(x);
    free(w);
    free(wf);
    free(bias);
    gemm_rvv_weight_free(obj);
    gemm_rvv_weight_free(other);
}

/* M = 100 on N = 1025, K = 31, X's rows 512 bytes apart: on several threads the plan's
 * blocking for the cores of a cluster copies X once for the call (each thread a share of the
 * rows) and walks the column blocks in rounds. 1, 2, 3, 4 and 8 threads, packed and plain
 * weights: the fallback's bits. */
static void test_shared_x_threads(void **state)
{
    (void)state;
    static const int counts[] = {1, 2, 3, 4, 8};
    enum { M = 100, LDX = 256 };
    uint16_t *x = random_bf16(M * LDX, 21), *w = random_bf16(KN * KK, 22);
    float *bias = random_bias(KN);
    float *want = malloc(M * KN * sizeof *want), *y = malloc(M * KN * sizeof *y);
    assert_non_null(want);
    assert_non_null(y);
    gemm_rvv_weight *obj;
    assert_int_equal(gemm_rvv_weight_create(w, KN, KK, KK, &obj), GEMM_RVV_OK);
    gemm_rvv_force_fallback(1);
    assert_int_equal(gemm_rvv_linear(x, M, LDX, obj, bias, want, KN, GEMM_RVV_F32), GEMM_RVV_OK);
    gemm_rvv_force_fallback(0);
    for (size_t t = 0; t < sizeof counts / sizeof counts[0]; t++) {
        assert_int_equal(gemm_rvv_set_threads(counts[t]), GEMM_RVV_OK);
        memset(y, 0xa5, M * KN * sizeof *y);
        assert_int_equal(gemm_rvv_linear(x, M, LDX, obj, bias, y, KN, GEMM_RVV_F32), GEMM_RVV_OK);
        assert_memory_equal(y, want, M * KN * sizeof *y);
        memset(y, 0xa5, M * KN * sizeof *y);
        assert_int_equal(gemm_rvv_linear_plain(x, M, LDX, w, KN, KK, KK, bias, y, KN,
                                               GEMM_RVV_F32), GEMM_RVV_OK);
        assert_memory_equal(y, want, M * KN * sizeof *y);
    }
    free(x);
    free(w);
    free(bias);
    free(want);
    free(y);
    gemm_rvv_weight_free(obj);
}

/* Four engine threads calling on one weight object at once, each checking its own answers. */
struct caller {
    const gemm_rvv_weight *w;
    const uint16_t *x;
    const float *want;
    int bad;
};

static void *call_repeatedly(void *arg)
{
    struct caller *c = arg;
    float *y = malloc(3 * KN * sizeof *y);
    for (int i = 0; i < 10 && y; i++) {
        if (gemm_rvv_linear(c->x, 3, KK, c->w, NULL, y, KN, GEMM_RVV_F32) != GEMM_RVV_OK ||
            memcmp(y, c->want, 3 * KN * sizeof *y) != 0)
            c->bad++;
    }
    free(y);
    return NULL;
}

static void test_concurrent_callers(void **state)
{
    (void)state;
    uint16_t *w = random_bf16(KN * KK, 12);
    gemm_rvv_weight *obj;
    assert_int_equal(gemm_rvv_weight_create(w, KN, KK, KK, &obj), GEMM_RVV_OK);
    assert_int_equal(gemm_rvv_set_threads(3), GEMM_RVV_OK);
    struct caller callers[4];
    pthread_t threads[4];
    uint16_t *xs[4];
    float *wants[4];
    for (int i = 0; i < 4; i++) {
        xs[i] = random_bf16(3 * KK, 100 + (uint64_t)i);
        wants[i] = linear_f32(xs[i], 3, obj, KN, NULL, 1);
        callers[i] = (struct caller){obj, xs[i], wants[i], 0};
    }
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&threads[i], NULL, call_repeatedly, &callers[i]), 0);
    for (int i = 0; i < 4; i++) {
        pthread_join(threads[i], NULL);
        assert_int_equal(callers[i].bad, 0);
        free(xs[i]);
        free(wants[i]);
    }
    gemm_rvv_weight_free(obj);
    free(w);
}

/* M above the largest bucket runs the bucket-128 kernel on blocks of rows. */
static void test_m_above_buckets(void **state)
{
    (void)state;
    gemm_rvv_counters_reset();
    uint16_t *x = random_bf16(300 * KK, 13), *w = random_bf16(KN * KK, 14);
    gemm_rvv_weight *obj;
    assert_int_equal(gemm_rvv_weight_create(w, KN, KK, KK, &obj), GEMM_RVV_OK);
    float *kernel = linear_f32(x, 300, obj, KN, NULL, 0);
    float *fallback = linear_f32(x, 300, obj, KN, NULL, 1);
    assert_memory_equal(kernel, fallback, 300 * KN * sizeof *kernel);
    expect_counts(KN, KK, 512, 1, 1);
    free(kernel);
    free(fallback);
    free(x);
    free(w);
    gemm_rvv_weight_free(obj);
}

/* Every bad argument returns its status and leaves the output as it was. */
static void test_bad_arguments(void **state)
{
    (void)state;
    uint16_t *x = random_bf16(4 * KK, 15), *w = random_bf16(KN * KK, 16);
    gemm_rvv_weight *obj;
    assert_int_equal(gemm_rvv_weight_create(w, KN, KK, KK, &obj), GEMM_RVV_OK);
    float y[4 * KN], untouched[4 * KN];
    for (size_t i = 0; i < 4 * KN; i++)
        y[i] = untouched[i] = -7.0f;
    const int64_t huge = INT64_MAX / 2;
    struct {
        gemm_rvv_status got, want;
        const char *what;
    } cases[] = {
        {gemm_rvv_linear(NULL, 4, KK, obj, NULL, y, KN, GEMM_RVV_F32), GEMM_RVV_ERR_NULL, "x"},
        {gemm_rvv_linear(x, 4, KK, NULL, NULL, y, KN, GEMM_RVV_F32), GEMM_RVV_ERR_NULL, "w"},
        {gemm_rvv_linear(x, 4, KK, obj, NULL, NULL, KN, GEMM_RVV_F32), GEMM_RVV_ERR_NULL, "y"},
        {gemm_rvv_linear(x, 0, KK, obj, NULL, y, KN, GEMM_RVV_F32), GEMM_RVV_ERR_SIZE, "m=0"},
        {gemm_rvv_linear(x, -3, KK, obj, NULL, y, KN, GEMM_RVV_F32), GEMM_RVV_ERR_SIZE, "m<0"},
        {gemm_rvv_linear(x, 4, KK - 1, obj, NULL, y, KN, GEMM_RVV_F32), GEMM_RVV_ERR_STRIDE,
         "ldx"},
        {gemm_rvv_linear(x, 4, KK, obj, NULL, y, KN - 1, GEMM_RVV_F32), GEMM_RVV_ERR_STRIDE,
         "ldy"},
        {gemm_rvv_linear(x, 4, KK, obj, NULL, y, KN, (gemm_rvv_type)9), GEMM_RVV_ERR_TYPE,
         "type"},
        {gemm_rvv_linear(x, huge, KK, obj, NULL, y, KN, GEMM_RVV_F32), GEMM_RVV_ERR_OVERFLOW,
         "huge m"},
        {gemm_rvv_linear(x, 4, huge, obj, NULL, y, KN, GEMM_RVV_F32), GEMM_RVV_ERR_OVERFLOW,
         "huge ldx"},
        {gemm_rvv_linear_plain(x, 4, KK, NULL, KN, KK, KK, NULL, y, KN, GEMM_RVV_F32),
         GEMM_RVV_ERR_NULL, "plain w"},
        {gemm_rvv_linear_plain(x, 4, KK, w, 0, KK, KK, NULL, y, KN, GEMM_RVV_F32),
         GEMM_RVV_ERR_SIZE, "plain n=0"},
        {gemm_rvv_linear_plain(x, 4, KK, w, KN, -1, KK, NULL, y, KN, GEMM_RVV_F32),
         GEMM_RVV_ERR_SIZE, "plain k<0"},
        {gemm_rvv_linear_plain(x, 4, KK, w, KN, KK, KK - 1, NULL, y, KN, GEMM_RVV_F32),
         GEMM_RVV_ERR_STRIDE, "plain ldw"},
        {gemm_rvv_linear_plain(x, 4, KK, w, huge, KK, KK, NULL, y, huge, GEMM_RVV_F32),
         GEMM_RVV_ERR_OVERFLOW, "plain huge n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (cases[i].got != cases[i].want)
            fail_msg("%s: status %d (%s), want %d", cases[i].what, cases[i].got,
                     gemm_rvv_strerror(cases[i].got), cases[i].want);
        assert_memory_equal(y, untouched, sizeof y);
    }
    gemm_rvv_weight *none = (gemm_rvv_weight *)&none;
    assert_int_equal(gemm_rvv_weight_create(NULL, KN, KK, KK, &none), GEMM_RVV_ERR_NULL);
    assert_int_equal(gemm_rvv_weight_create(w, KN, KK, KK, NULL), GEMM_RVV_ERR_NULL);
    assert_int_equal(gemm_rvv_weight_create(w, 0, KK, KK, &none), GEMM_RVV_ERR_SIZE);
    assert_int_equal(gemm_rvv_weight_create(w, KN, KK, 3, &none), GEMM_RVV_ERR_STRIDE);
    assert_int_equal(gemm_rvv_weight_create(w, huge, huge, huge, &none), GEMM_RVV_ERR_OVERFLOW);
    assert_ptr_equal(none, (gemm_rvv_weight *)&none); /* untouched on error */
    assert_int_equal(gemm_rvv_weight_update(NULL, w, KK), GEMM_RVV_ERR_NULL);
    assert_int_equal(gemm_rvv_weight_update(obj, NULL, KK), GEMM_RVV_ERR_NULL);
    assert_int_equal(gemm_rvv_weight_update(obj, w, KK - 1), GEMM_RVV_ERR_STRIDE);
    gemm_rvv_weight_free(NULL);
    gemm_rvv_weight_free(obj);
    free(x);
    free(w);
}

/* The build's plans by shape, as shapes-test.yaml makes them: 1025 x 1025 has the GEMV and
 * the buckets of M = 3, 13, 31; 50 x 50 and bad sizes have none. */
static void test_plan_buckets(void **state)
{
    (void)state;
    int64_t b[8] = {0};
    assert_int_equal(gemm_rvv_plan_buckets(1025, 1025, b, 8), 4);
    assert_int_equal(b[0], 1);
    assert_int_equal(b[1], 4);
    assert_int_equal(b[2], 16);
    assert_int_equal(b[3], 32);
    int64_t two[2] = {0, 0}, guard[3] = {0, 0, -7};
    assert_int_equal(gemm_rvv_plan_buckets(1025, 1025, two, 2), 4);
    assert_int_equal(two[1], 4);
    assert_int_equal(gemm_rvv_plan_buckets(1025, 1025, guard, 2), 4);
    assert_int_equal(guard[2], -7); /* nothing past capacity */
    assert_int_equal(gemm_rvv_plan_buckets(4096, 4096, NULL, 0), 2);
    assert_int_equal(gemm_rvv_plan_buckets(FN, FK, b, 8), 0);
    assert_int_equal(gemm_rvv_plan_buckets(1025, 1024, b, 8), 0);
    assert_int_equal(gemm_rvv_plan_buckets(0, 1025, b, 8), 0);
    assert_int_equal(gemm_rvv_plan_buckets(-1025, 1025, b, 8), 0);
    assert_int_equal(gemm_rvv_plan_buckets(1025 + ((int64_t)1 << 32), 1025, b, 8), 0);
}

/* Y overlapping X, W (plain) or the bias is refused before anything is written: the inputs
 * and Y keep their bytes. A fallback shape (16 x 16, M = 8) and a kernel one. */
static void check_refused(gemm_rvv_status got, const unsigned char *buf, const unsigned char *was,
                          size_t bytes, const char *what)
{
    if (got != GEMM_RVV_ERR_ALIAS)
        fail_msg("%s: status %d (%s), want GEMM_RVV_ERR_ALIAS", what, got,
                 gemm_rvv_strerror(got));
    if (memcmp(buf, was, bytes) != 0)
        fail_msg("%s: refused, yet the buffer was written", what);
}

static void test_aliasing(void **state)
{
    (void)state;
    enum { M = 8, N = 16, K = 16, BYTES = 4096 };
    /* One buffer holds W (or X) and Y at chosen places. */
    unsigned char *buf = malloc(BYTES), *was = malloc(BYTES);
    assert_non_null(buf);
    assert_non_null(was);
    struct rng r = {21};
    fill_bf16(&r, (uint16_t *)(void *)buf, BYTES / 2, 0);
    memcpy(was, buf, BYTES);
    uint16_t *w = (uint16_t *)(void *)buf, *x = random_bf16(M * K, 22);
    float *bias = random_bias(N);
    void *y_on_w = buf;                           /* Y (512 bytes of F32) exactly on W */
    void *y_tail = buf + (N * K - 1) * 2;         /* BF16 Y from W's last element on */
    check_refused(gemm_rvv_linear_plain(x, M, K, w, N, K, K, NULL, y_on_w, N, GEMM_RVV_F32), buf,
                  was, BYTES, "plain, Y on W");
    check_refused(gemm_rvv_linear_plain(x, M, K, w, N, K, K, NULL, y_tail, N, GEMM_RVV_BF16), buf,
                  was, BYTES, "plain, Y on W's last element");
    /* Y on X, on the bias: refused for a weight object too. */
    uint16_t *x_in_buf = (uint16_t *)(void *)(buf + 1024);
    gemm_rvv_weight *obj;
    assert_int_equal(gemm_rvv_weight_create(w, N, K, K, &obj), GEMM_RVV_OK);
    check_refused(gemm_rvv_linear(x_in_buf, M, K, obj, NULL, buf + 1024 + 100, N, GEMM_RVV_BF16),
                  buf, was, BYTES, "object, Y inside X");
    float *bias_in_buf = (float *)(void *)(buf + 2048);
    check_refused(gemm_rvv_linear(x, M, K, obj, bias_in_buf, buf + 2048 - M * N * 4 + 4, N,
                                  GEMM_RVV_F32), buf, was, BYTES, "object, Y's end on the bias");
    /* A kernel shape: Y over the plain weights' middle rows. */
    uint16_t *kw = random_bf16(KN * KK, 23), *kx = random_bf16(4 * KK, 24);
    uint16_t *kw_was = malloc(KN * KK * 2);
    assert_non_null(kw_was);
    memcpy(kw_was, kw, KN * KK * 2);
    check_refused(gemm_rvv_linear_plain(kx, 4, KK, kw, KN, KK, KK, NULL, kw + 100 * KK, KN,
                                        GEMM_RVV_BF16), (unsigned char *)kw,
                  (unsigned char *)kw_was, KN * KK * 2, "kernel shape, Y inside W");
    /* Next to each other, not overlapping: served, with the same bits as apart. */
    float *y_apart = malloc(M * N * sizeof(float));
    assert_non_null(y_apart);
    assert_int_equal(gemm_rvv_linear_plain(x, M, K, w, N, K, K, bias, y_apart, N, GEMM_RVV_F32),
                     GEMM_RVV_OK);
    float *y_next = (float *)(void *)(buf + N * K * 2); /* right after W's last element */
    assert_int_equal(gemm_rvv_linear_plain(x, M, K, w, N, K, K, bias, y_next, N, GEMM_RVV_F32),
                     GEMM_RVV_OK);
    assert_memory_equal(y_next, y_apart, M * N * sizeof(float));
    /* Inputs may overlap each other: X on W. */
    assert_int_equal(gemm_rvv_linear_plain(w, M, K, w, N, K, K, NULL, y_apart, N, GEMM_RVV_F32),
                     GEMM_RVV_OK);
    gemm_rvv_weight_free(obj);
    free(y_apart);
    free(kw_was);
    free(kw);
    free(kx);
    free(bias);
    free(x);
    free(was);
    free(buf);
}

static void test_strings(void **state)
{
    (void)state;
    assert_string_equal(gemm_rvv_version(), GEMM_RVV_VERSION_STRING);
    for (int s = GEMM_RVV_OK; s <= GEMM_RVV_ERR_BUSY; s++) {
        assert_true(strlen(gemm_rvv_strerror((gemm_rvv_status)s)) > 5);
        for (int t = GEMM_RVV_OK; t < s; t++)
            assert_string_not_equal(gemm_rvv_strerror((gemm_rvv_status)s),
                                    gemm_rvv_strerror((gemm_rvv_status)t));
    }
    assert_string_equal(gemm_rvv_strerror((gemm_rvv_status)99), "unknown status");
}

/* A digest of many calls' output bits (kernel shapes and a fallback one, F32 and BF16,
 * bias or not), printed as "digest: HEX": the runner checks it is the same in every QEMU
 * configuration, the one without V included. */
static void test_output_digest(void **state)
{
    (void)state;
    static const int64_t ms[] = {1, 2, 5, 17, 130};
    uint64_t h = DIGEST_INIT;
    uint16_t *x = random_bf16(130 * FK, 21), *wk = random_bf16(KN * KK, 22);
    uint16_t *wf = random_bf16(FN * FK, 23);
    float *bias = random_bias(KN);
    gemm_rvv_weight *objs[2];
    assert_int_equal(gemm_rvv_weight_create(wk, KN, KK, KK, &objs[0]), GEMM_RVV_OK);
    assert_int_equal(gemm_rvv_weight_create(wf, FN, FK, FK, &objs[1]), GEMM_RVV_OK);
    int64_t ns[2] = {KN, FN}, ks[2] = {KK, FK};
    float *y = malloc(130 * KN * sizeof *y);
    assert_non_null(y);
    for (int o = 0; o < 2; o++)
        for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++)
            for (int t = 0; t < 2; t++) {
                gemm_rvv_type type = t ? GEMM_RVV_BF16 : GEMM_RVV_F32;
                assert_int_equal(gemm_rvv_linear(x, ms[i], ks[o], objs[o], t ? bias : NULL, y,
                                                 ns[o], type),
                                 GEMM_RVV_OK);
                h = digest_add(h, y, (size_t)(ms[i] * ns[o]) * (t ? 2 : 4));
            }
    digest_print("outputs", h);
    gemm_rvv_weight_free(objs[0]);
    gemm_rvv_weight_free(objs[1]);
    free(y);
    free(bias);
    free(x);
    free(wk);
    free(wf);
}

int main(void)
{
    const char *no_v = getenv("GEMM_RVV_TEST_NO_V");
    with_v = gemm_rvv_kernels_active();
    if (no_v && *no_v == '1' && with_v) {
        fprintf(stderr, "GEMM_RVV_TEST_NO_V=1 but the library found V\n");
        return 1;
    }
    if (!(no_v && *no_v == '1') && !with_v) {
        fprintf(stderr, "no V found on a core that should have it\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dispatch),
        cmocka_unit_test(test_forced_fallback),
        cmocka_unit_test(test_weight_update),
        cmocka_unit_test(test_thread_counts),
        cmocka_unit_test(test_shared_x_threads),
        cmocka_unit_test(test_concurrent_callers),
        cmocka_unit_test(test_m_above_buckets),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_plan_buckets),
        cmocka_unit_test(test_aliasing),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_output_digest),
    };
    return cmocka_run_group_tests_name("runtime", tests, NULL, NULL);
}
