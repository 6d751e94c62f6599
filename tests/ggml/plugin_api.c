/* The GEMM_RVV ggml plugin driven through ggml's public API only (ggml.h, ggml-backend.h,
 * ggml-alloc.h): what a ggml user such as llama.cpp may expect of a backend. The plugin is
 * loaded as llama.cpp loads it, by ggml_backend_load_all() with GGML_BACKEND_PATH naming it,
 * and compared with ggml's own CPU backend in the same process.
 *
 * Each group of cases runs in a child process of its own (forked before this process touches
 * ggml), so that a crash or a hang in one is reported as that group's failure and the others
 * still run. Each case prints one line, `ok NAME` or `FAIL NAME: what and where`; the last
 * line is `N passed, N failed`, and the exit status is 1 when any case failed.
 *
 * Usage: plugin_api [GROUP...]   (no argument: every group; `plugin_api --list` names them)
 * Environment: GGML_BACKEND_PATH (the plugin); GEMM_RVV_TEST_TIER=full (every product at
 * every M: the quick tier leaves M = 33 out on the four largest shapes, M = 7 on the two
 * largest); PLUGIN_API_VERBOSE=1
 * (ggml's and the plugin's informational log lines too, and timings: by default only
 * warnings and errors reach stderr). */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ggml-alloc.h>
#include <ggml-backend.h>
#include <ggml.h>

/* test-backend-ops' bound for MUL_MAT: normalized mean squared error against the CPU. */
#define NMSE_MAX 5e-4
/* A group that takes longer than this (under QEMU) counts as hung. */
#define GROUP_TIMEOUT_S 600

/* ---- reporting: the child writes its result lines to a pipe the parent reads ---- */

static FILE *results;      /* the child's end of the pipe */
static char failure[1024]; /* the current case's first failure, empty while it passes */

/* Records the case's first failure; later ones are usually consequences of it. */
__attribute__((format(printf, 1, 2))) static void fail(const char *fmt, ...)
{
    if (failure[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(failure, sizeof failure, fmt, ap);
    va_end(ap);
}

static void case_begin(void)
{
    failure[0] = '\0';
}

/* Ends a case: one line for it. Returns whether it passed. */
__attribute__((format(printf, 1, 2))) static bool case_end(const char *fmt, ...)
{
    char name[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    if (failure[0])
        fprintf(results, "FAIL %s: %s\n", name, failure);
    else
        fprintf(results, "ok %s\n", name);
    fflush(results);
    return !failure[0];
}

static bool verbose;

static void log_cb(enum ggml_log_level level, const char *text, void *user)
{
    (void)user;
    if (verbose || level == GGML_LOG_LEVEL_WARN || level == GGML_LOG_LEVEL_ERROR)
        fputs(text, stderr);
}

/* ---- the two devices ---- */

static ggml_backend_dev_t dev_rvv, dev_cpu;
static ggml_backend_t be_rvv, be_cpu;
static ggml_backend_buffer_type_t buft_rvv, buft_cpu;

static ggml_backend_set_n_threads_t set_threads_fn(ggml_backend_dev_t dev)
{
    ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(dev);
    return reg ? (ggml_backend_set_n_threads_t)ggml_backend_reg_get_proc_address(
                     reg, "ggml_backend_set_n_threads")
               : NULL;
}

/* Loads every backend as llama.cpp does; false (with the reason in `failure`) when the plugin
 * or the CPU backend is missing. */
static bool setup(void)
{
    ggml_log_set(log_cb, NULL);
    ggml_backend_load_all();
    dev_rvv = ggml_backend_dev_by_name("GEMM_RVV");
    dev_cpu = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    if (!dev_rvv) {
        const char *path = getenv("GGML_BACKEND_PATH");
        fail("no GEMM_RVV device after ggml_backend_load_all() (GGML_BACKEND_PATH=%s)",
             path ? path : "(unset)");
        return false;
    }
    if (!dev_cpu) {
        fail("no CPU device after ggml_backend_load_all()");
        return false;
    }
    be_rvv = ggml_backend_dev_init(dev_rvv, NULL);
    be_cpu = ggml_backend_dev_init(dev_cpu, NULL);
    if (!be_rvv || !be_cpu) {
        fail("ggml_backend_dev_init failed (GEMM_RVV %p, CPU %p)", (void *)be_rvv, (void *)be_cpu);
        return false;
    }
    buft_rvv = ggml_backend_dev_buffer_type(dev_rvv);
    buft_cpu = ggml_backend_dev_buffer_type(dev_cpu);
    /* Two threads each, as llama.cpp sets its -t on every backend that has the entry. */
    ggml_backend_set_n_threads_t cpu_threads = set_threads_fn(dev_cpu);
    if (cpu_threads)
        cpu_threads(be_cpu, 2);
    ggml_backend_set_n_threads_t rvv_threads = set_threads_fn(dev_rvv);
    if (rvv_threads)
        rvv_threads(be_rvv, 2);
    return true;
}

/* ---- data ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng_next(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Uniform in [-1, 1). */
static float frand(void)
{
    return (float)((double)(rng_next() >> 11) * 0x1p-52 - 1.0);
}

static void fill_f32(float *x, size_t n, float scale)
{
    for (size_t i = 0; i < n; i++)
        x[i] = scale * frand();
}

static void fill_bf16(uint16_t *w, size_t n, float scale)
{
    for (size_t i = 0; i < n; i++)
        w[i] = ggml_fp32_to_bf16(scale * frand()).bits;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "plugin_api: out of memory (%zu bytes)\n", n);
        exit(2);
    }
    return p;
}

/* A context for tensor descriptions only (their data goes into backend buffers). */
static struct ggml_context *ctx_new(size_t n_tensors, size_t n_graphs)
{
    struct ggml_init_params p = {
        .mem_size = ggml_tensor_overhead() * n_tensors + ggml_graph_overhead() * n_graphs + 1024,
        .mem_buffer = NULL,
        .no_alloc = true,
    };
    struct ggml_context *ctx = ggml_init(p);
    if (!ctx) {
        fprintf(stderr, "plugin_api: ggml_init failed\n");
        exit(2);
    }
    return ctx;
}

/* Every tensor of ctx without data, in a new buffer of buft (NULL and a failure if none). */
static ggml_backend_buffer_t alloc_in(struct ggml_context *ctx, ggml_backend_buffer_type_t buft,
                                      bool weights)
{
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(ctx, buft);
    if (!buf) {
        fail("ggml_backend_alloc_ctx_tensors_from_buft(%s) failed", ggml_backend_buft_name(buft));
        return NULL;
    }
    if (weights)
        ggml_backend_buffer_set_usage(buf, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    return buf;
}

/* Normalized mean squared error of y against ref, as test-backend-ops computes it; an
 * all-zero ref asks for an all-zero y (0 then, else infinity). NaN in y gives NaN. */
static double nmse(const float *y, const float *ref, size_t n)
{
    double err = 0, norm = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)y[i] - (double)ref[i];
        err += d * d;
        norm += (double)ref[i] * ref[i];
    }
    if (norm == 0)
        return err == 0 ? 0 : INFINITY;
    return err / norm;
}

/* Where y and ref differ most, for messages. */
static size_t worst(const float *y, const float *ref, size_t n)
{
    size_t at = 0;
    double most = -1;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)y[i] - (double)ref[i]);
        if (isnan(d))
            return i;
        if (d > most) {
            most = d;
            at = i;
        }
    }
    return at;
}

/* Checks y (n values, rows of `row` values) against ref within NMSE_MAX; `what` names it. */
static void expect_close(const char *what, const float *y, const float *ref, size_t n, size_t row)
{
    double e = nmse(y, ref, n);
    if (!(e <= NMSE_MAX)) {
        size_t at = worst(y, ref, n);
        fail("%s: NMSE %.3g > %g against the CPU backend (worst at row %zu col %zu: %g, CPU %g)",
             what, e, NMSE_MAX, at / row, at % row, (double)y[at], (double)ref[at]);
    }
}

/* Q8_0 products are ggml's bit for bit (the library quantises and sums as ggml's CPU backend
 * does, docs/numerics.md): every y the bits of ref, or NaN where ref is NaN. */
static void expect_same(const char *what, const float *y, const float *ref, size_t n, size_t row)
{
    size_t differ = 0, first = 0;
    for (size_t i = 0; i < n; i++)
        if (!(isnan(y[i]) && isnan(ref[i])) && memcmp(&y[i], &ref[i], sizeof y[i]) != 0 &&
            differ++ == 0)
            first = i;
    if (differ)
        fail("%s: %zu of %zu outputs are not the CPU backend's bits (first at row %zu col %zu: "
             "%a, CPU %a)",
             what, differ, n, first / row, first % row, (double)y[first], (double)ref[first]);
}

static enum ggml_status compute(ggml_backend_t be, struct ggml_cgraph *g)
{
    return ggml_backend_graph_compute(be, g);
}

static const char *status_name(enum ggml_status s)
{
    switch (s) {
    case GGML_STATUS_SUCCESS: return "SUCCESS";
    case GGML_STATUS_FAILED: return "FAILED";
    case GGML_STATUS_ALLOC_FAILED: return "ALLOC_FAILED";
    case GGML_STATUS_ABORTED: return "ABORTED";
    }
    return "(unknown status)";
}

/* ---- y = W x on GEMM_RVV against the CPU backend, for a weight already in a GEMM_RVV buffer
 * whose contents should be `bits` ---- */

/* Runs M rows of activations (x_given, or random ones) by w (in a GEMM_RVV buffer) on GEMM_RVV,
 * and by a copy of `bits` (w's bytes, in its type) in a CPU buffer on the CPU backend; records
 * a failure naming `where`: outputs within NMSE_MAX of the CPU's, a Q8_0 weight's the same
 * bits. */
static void check_product_of(struct ggml_tensor *w, const void *bits, int64_t m,
                             const float *x_given, const char *where)
{
    int64_t k = w->ne[0], n = w->ne[1];
    struct ggml_context *ctx = ctx_new(8, 2);
    struct ggml_tensor *wc = ggml_new_tensor_2d(ctx, w->type, k, n);
    ggml_set_name(wc, "w_cpu");
    ggml_backend_buffer_t wbuf = alloc_in(ctx, buft_cpu, true);
    if (!wbuf) {
        ggml_free(ctx);
        return;
    }
    ggml_backend_tensor_set(wc, bits, 0, ggml_nbytes(wc));

    struct ggml_context *actx = ctx_new(8, 0);
    struct ggml_tensor *x = ggml_new_tensor_2d(actx, GGML_TYPE_F32, k, m);
    struct ggml_tensor *y = ggml_mul_mat(actx, w, x);
    struct ggml_tensor *yc = ggml_mul_mat(actx, wc, x);
    ggml_set_name(x, "x");
    ggml_set_name(y, "y_gemm_rvv");
    ggml_set_name(yc, "y_cpu");
    ggml_backend_buffer_t abuf = alloc_in(actx, buft_cpu, false);
    if (!abuf)
        goto out;
    float *xs = xmalloc((size_t)(k * m) * sizeof *xs);
    float *ys = xmalloc((size_t)(n * m) * sizeof *ys);
    float *refs = xmalloc((size_t)(n * m) * sizeof *refs);
    if (x_given)
        memcpy(xs, x_given, (size_t)(k * m) * sizeof *xs);
    else
        fill_f32(xs, (size_t)(k * m), 1.0f);
    ggml_backend_tensor_set(x, xs, 0, ggml_nbytes(x));
    if (!ggml_backend_dev_supports_op(dev_rvv, y)) {
        fail("%s: GEMM_RVV does not support MUL_MAT N = %lld, K = %lld, M = %lld", where,
             (long long)n, (long long)k, (long long)m);
    } else {
        struct ggml_cgraph *g = ggml_new_graph(ctx);
        ggml_build_forward_expand(g, y);
        struct ggml_cgraph *gc = ggml_new_graph(ctx);
        ggml_build_forward_expand(gc, yc);
        enum ggml_status s = compute(be_rvv, g), sc = compute(be_cpu, gc);
        if (sc != GGML_STATUS_SUCCESS)
            fail("%s: the CPU backend's MUL_MAT returned %s", where, status_name(sc));
        else if (s != GGML_STATUS_SUCCESS)
            fail("%s: GEMM_RVV's graph_compute returned %s", where, status_name(s));
        else {
            ggml_backend_tensor_get(y, ys, 0, ggml_nbytes(y));
            ggml_backend_tensor_get(yc, refs, 0, ggml_nbytes(yc));
            char what[160];
            snprintf(what, sizeof what, "%s: MUL_MAT N = %lld, K = %lld, M = %lld", where,
                     (long long)n, (long long)k, (long long)m);
            if (w->type == GGML_TYPE_Q8_0)
                expect_same(what, ys, refs, (size_t)(n * m), (size_t)n);
            else
                expect_close(what, ys, refs, (size_t)(n * m), (size_t)n);
        }
    }
    free(xs);
    free(ys);
    free(refs);
    ggml_backend_buffer_free(abuf);
out:
    ggml_free(actx);
    ggml_backend_buffer_free(wbuf);
    ggml_free(ctx);
}

static void check_product(struct ggml_tensor *w, const void *bits, int64_t m, const char *where)
{
    check_product_of(w, bits, m, NULL, where);
}

/* A BF16 weight [N, K] alone in a new GEMM_RVV weight buffer. */
struct weight {
    struct ggml_context *ctx;
    ggml_backend_buffer_t buf;
    struct ggml_tensor *t;
};

static bool weight_new(struct weight *w, int64_t n, int64_t k, const char *name)
{
    w->ctx = ctx_new(4, 0);
    w->t = ggml_new_tensor_2d(w->ctx, GGML_TYPE_BF16, k, n);
    ggml_set_name(w->t, name);
    w->buf = alloc_in(w->ctx, buft_rvv, true);
    return w->buf != NULL;
}

static void weight_free(struct weight *w)
{
    if (w->buf)
        ggml_backend_buffer_free(w->buf);
    ggml_free(w->ctx);
}

/* Reads the whole weight back and compares it with `bits`, bit for bit. */
static void expect_bits(const char *where, const struct ggml_tensor *t, const uint16_t *bits,
                        size_t elem_off, size_t count)
{
    uint16_t *got = xmalloc(count * sizeof *got);
    memset(got, 0xa5, count * sizeof *got);
    ggml_backend_tensor_get(t, got, elem_off * sizeof *got, count * sizeof *got);
    for (size_t i = 0; i < count; i++) {
        if (got[i] != bits[elem_off + i]) {
            size_t e = elem_off + i, k = (size_t)t->ne[0];
            fail("%s: element %zu (row %zu, col %zu) reads back 0x%04x, 0x%04x was set", where,
                 e, e / k, e % k, got[i], bits[e]);
            break;
        }
    }
    free(got);
}

/* Random finite BF16 values into bits and the whole tensor. */
static void set_random(struct ggml_tensor *t, uint16_t *bits)
{
    size_t count = (size_t)ggml_nelements(t);
    fill_bf16(bits, count, 0.05f);
    ggml_backend_tensor_set(t, bits, 0, count * sizeof *bits);
}

/* A new weight (weight_new) holding random values (set_random). */
static bool weight_random(struct weight *w, int64_t n, int64_t k, const char *name, uint16_t *bits)
{
    if (!weight_new(w, n, k, name))
        return false;
    set_random(w->t, bits);
    return true;
}

/* The whole tensor reads back as `bits`, and M rows by it on GEMM_RVV match the CPU's. */
static void expect_weight(const char *where, struct ggml_tensor *t, const uint16_t *bits, int64_t m)
{
    expect_bits(where, t, bits, 0, (size_t)ggml_nelements(t));
    check_product(t, bits, m, where);
}

/* One case on a new GEMM_RVV weight of N x K holding random values (`bits`). */
static void weight_case(const char *name, int64_t n, int64_t k,
                        void (*body)(struct weight *w, uint16_t *bits))
{
    case_begin();
    struct weight w;
    uint16_t *bits = xmalloc((size_t)(n * k) * sizeof *bits);
    if (weight_random(&w, n, k, "w", bits))
        body(&w, bits);
    weight_free(&w);
    free(bits);
    case_end("%s", name);
}

/* ---- group products: llama.cpp's small shapes ---- */

/* (N, K) pairs: every N of {128, 256, 384, 512, 896, 4864} and every K of {896, 960, 1152,
 * 2048, 4864} at least once, mostly small models' layers (Qwen2.5-0.5B's k/v, q/o, gate/up
 * and down; Gemma 3 1B's k/v; Llama 3.2 1B's k/v; 384 x 960 takes the N and K left). All 30
 * pairs would take minutes under QEMU: M = 33 on the two largest of these alone takes 40 s. */
static const int64_t product_shapes[][2] = {
    {128, 896}, {896, 896}, {4864, 896}, {896, 4864}, {256, 1152}, {384, 960}, {512, 2048},
};
static const int64_t product_ms[] = {1, 7, 33};
/* In the quick tier the shapes of more than 500,000 weights run M = 1 and 7 only (M = 33 on
 * the two with N or K = 4864 takes 40 s under QEMU), and those two M = 1 only; M = 7's and
 * M = 33's plans are driven by the others. */
static bool full_tier;

static void group_products(void)
{
    for (size_t i = 0; i < sizeof product_shapes / sizeof *product_shapes; i++) {
        int64_t n = product_shapes[i][0], k = product_shapes[i][1];
        case_begin();
        struct weight w;
        uint16_t *bits = xmalloc((size_t)(n * k) * sizeof *bits);
        if (weight_random(&w, n, k, "w", bits)) {
            bool big = n * k > 500000, huge = n * k > 4000000;
            for (size_t j = 0; j < sizeof product_ms / sizeof *product_ms; j++) {
                if (!full_tier && ((big && product_ms[j] > 8) || (huge && product_ms[j] > 1)))
                    continue;
                struct timespec t0, t1;
                clock_gettime(CLOCK_MONOTONIC, &t0);
                check_product(w.t, bits, product_ms[j], "product");
                clock_gettime(CLOCK_MONOTONIC, &t1);
                if (verbose)
                    fprintf(stderr, "plugin_api: N = %lld, K = %lld, M = %lld: %.2f s\n",
                            (long long)n, (long long)k, (long long)product_ms[j],
                            (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
            }
        }
        free(bits);
        weight_free(&w);
        case_end("products N=%lld K=%lld M=%s", (long long)n, (long long)k,
                 full_tier ? "1,7,33" : n * k > 4000000 ? "1" : n * k > 500000 ? "1,7" : "1,7,33");
    }
}

/* ---- group empty: a MUL_MAT with no rows ---- */

/* By weight wt: g[0] the 0-row MUL_MAT alone, g[1] one beside a 3-row one (*y1). */
static void empty_graphs(struct ggml_context *ctx, struct ggml_context *gctx,
                         struct ggml_tensor *wt, struct ggml_tensor *x0, struct ggml_tensor *x1,
                         struct ggml_cgraph *g[2], struct ggml_tensor **y1)
{
    struct ggml_tensor *y0 = ggml_mul_mat(ctx, wt, x0);
    ggml_set_name(y0, "y_empty");
    g[0] = ggml_new_graph(gctx);
    ggml_build_forward_expand(g[0], y0);
    struct ggml_tensor *y0b = ggml_mul_mat(ctx, wt, x0);
    *y1 = ggml_mul_mat(ctx, wt, x1);
    ggml_set_name(y0b, "y_empty_beside");
    ggml_set_name(*y1, "y_rows");
    g[1] = ggml_new_graph(gctx);
    ggml_build_forward_expand(g[1], y0b);
    ggml_build_forward_expand(g[1], *y1);
}

static void empty_body(struct weight *w, uint16_t *bits)
{
    const int64_t n = w->t->ne[1], k = w->t->ne[0], m = 3;
    static const char *const what[2] = {"a graph of one MUL_MAT with 0 rows",
                                        "a 0-row MUL_MAT beside a 3-row one"};

    struct ggml_context *ctx = ctx_new(16, 0);
    struct ggml_context *gctx = ctx_new(0, 4);
    struct ggml_tensor *wc = ggml_new_tensor_2d(ctx, GGML_TYPE_BF16, k, n);
    struct ggml_tensor *x0 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, 0);
    struct ggml_tensor *x1 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, m);
    struct ggml_cgraph *g[2], *gc[2];
    struct ggml_tensor *y1, *y1c;
    empty_graphs(ctx, gctx, w->t, x0, x1, g, &y1);
    empty_graphs(ctx, gctx, wc, x0, x1, gc, &y1c); /* the CPU's, on a copy in a CPU buffer */
    ggml_backend_buffer_t abuf = alloc_in(ctx, buft_cpu, false);
    if (abuf) {
        float xs[256 * 3], ys[16 * 3], ref[16 * 3];
        ggml_backend_tensor_set(wc, bits, 0, ggml_nbytes(wc));
        fill_f32(xs, (size_t)(k * m), 1.0f);
        ggml_backend_tensor_set(x1, xs, 0, ggml_nbytes(x1));
        if (!ggml_backend_dev_supports_op(dev_rvv, ggml_graph_node(g[0], 0)))
            fail("GEMM_RVV does not support a MUL_MAT with 0 rows (the CPU does: %d)",
                 ggml_backend_dev_supports_op(dev_cpu, ggml_graph_node(gc[0], 0)));
        memset(ys, 0, sizeof ys);
        ggml_backend_tensor_set(y1, ys, 0, sizeof ys);
        for (int i = 0; i < 2; i++) {
            enum ggml_status s = compute(be_cpu, gc[i]);
            if (s != GGML_STATUS_SUCCESS)
                fail("test premise: on %s the CPU backend returned %s", what[i], status_name(s));
            s = compute(be_rvv, g[i]);
            if (s != GGML_STATUS_SUCCESS)
                fail("%s: GEMM_RVV's graph_compute returned %s", what[i], status_name(s));
            else if (i == 1) {
                ggml_backend_tensor_get(y1c, ref, 0, sizeof ref);
                ggml_backend_tensor_get(y1, ys, 0, sizeof ys);
                expect_close("the 3-row MUL_MAT beside a 0-row one", ys, ref, 16 * 3, 16);
                check_product(w->t, bits, m, "after the 0-row product");
            }
        }
        ggml_backend_buffer_free(abuf);
    }
    ggml_free(gctx);
    ggml_free(ctx);
}

static void group_empty(void)
{
    weight_case("empty product", 16, 256, empty_body);
}

/* ---- group select: ggml_build_forward_select's unselected branches are not computed ---- */

#define SENTINEL 12345.0f

/* The two branches by weight wt: [0] the unselected one (a MUL_MAT by xa, or pa + pb), [1]
 * the selected MUL_MAT by xb; a graph of them through ggml_build_forward_select. */
static struct ggml_cgraph *select_graph(struct ggml_context *ctx, struct ggml_context *gctx,
                                        struct ggml_tensor *wt, struct ggml_tensor *const in[4],
                                        bool unselected_is_add, struct ggml_tensor *br[2])
{
    br[0] = unselected_is_add ? ggml_add(ctx, in[2], in[3]) : ggml_mul_mat(ctx, wt, in[0]);
    br[1] = ggml_mul_mat(ctx, wt, in[1]);
    ggml_set_name(br[0], "unselected");
    ggml_set_name(br[1], "selected");
    struct ggml_cgraph *g = ggml_new_graph(gctx);
    if (ggml_build_forward_select(g, br, 2, 1) != br[1])
        fail("ggml_build_forward_select did not return the selected branch");
    if (br[0]->flags & GGML_TENSOR_FLAG_COMPUTE)
        fail("test premise: the unselected branch carries GGML_TENSOR_FLAG_COMPUTE");
    return g;
}

/* The unselected branch's output pre-filled with SENTINEL: on GEMM_RVV the sentinel must stay
 * and the selected output match the CPU backend's (on a copy of the weight in a CPU buffer:
 * the CPU cannot read a GEMM_RVV buffer's packed bytes). */
static void select_body(struct weight *w, const uint16_t *bits, bool unselected_is_add)
{
    const int64_t n = w->t->ne[1], k = w->t->ne[0], m = 3;
    const char *kind = unselected_is_add ? "ADD" : "MUL_MAT";

    struct ggml_context *ctx = ctx_new(16, 0);
    struct ggml_tensor *wc = ggml_new_tensor_2d(ctx, GGML_TYPE_BF16, k, n);
    struct ggml_tensor *in[4] = {
        ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, m), ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, m),
        ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n, m), ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n, m),
    };
    struct ggml_context *gctx = ctx_new(0, 2);
    struct ggml_tensor *br[2], *brc[2];
    struct ggml_cgraph *g = select_graph(ctx, gctx, w->t, in, unselected_is_add, br);
    struct ggml_cgraph *gc = select_graph(ctx, gctx, wc, in, unselected_is_add, brc);
    ggml_backend_buffer_t abuf = alloc_in(ctx, buft_cpu, false);
    if (abuf) {
        float xs[256 * 3], sent[16 * 3], got[16 * 3], ref[16 * 3];
        ggml_backend_tensor_set(wc, bits, 0, ggml_nbytes(wc));
        for (size_t i = 0; i < 4; i++) {
            fill_f32(xs, (size_t)ggml_nelements(in[i]), 1.0f);
            ggml_backend_tensor_set(in[i], xs, 0, ggml_nbytes(in[i]));
        }
        for (size_t i = 0; i < 16 * 3; i++)
            sent[i] = SENTINEL;
        /* The premise on the CPU backend first: it leaves the unselected output alone. */
        ggml_backend_tensor_set(brc[0], sent, 0, sizeof sent);
        enum ggml_status s = compute(be_cpu, gc);
        ggml_backend_tensor_get(brc[0], got, 0, sizeof got);
        ggml_backend_tensor_get(brc[1], ref, 0, sizeof ref);
        if (s != GGML_STATUS_SUCCESS || memcmp(got, sent, sizeof got) != 0)
            fail("test premise: on the CPU backend the unselected %s ran (status %s)", kind,
                 status_name(s));
        /* Then on GEMM_RVV. */
        ggml_backend_tensor_set(br[0], sent, 0, sizeof sent);
        s = compute(be_rvv, g);
        if (s != GGML_STATUS_SUCCESS) {
            fail("GEMM_RVV's graph_compute returned %s on a graph whose unselected branch is "
                 "a%s %s", status_name(s), unselected_is_add ? "n" : "", kind);
        } else {
            ggml_backend_tensor_get(br[0], got, 0, sizeof got);
            for (size_t i = 0; i < 16 * 3; i++)
                if (got[i] != SENTINEL) {
                    fail("GEMM_RVV computed the unselected %s: element %zu is %g, the sentinel "
                         "%g was there", kind, i, (double)got[i], (double)SENTINEL);
                    break;
                }
            ggml_backend_tensor_get(br[1], got, 0, sizeof got);
            expect_close("the selected MUL_MAT", got, ref, 16 * 3, 16);
        }
        ggml_backend_buffer_free(abuf);
    }
    ggml_free(gctx);
    ggml_free(ctx);
}

static void select_mul_mat_body(struct weight *w, uint16_t *bits)
{
    select_body(w, bits, false);
}

static void select_add_body(struct weight *w, uint16_t *bits)
{
    select_body(w, bits, true);
}

static void group_select(void)
{
    weight_case("unselected branch MUL_MAT", 16, 256, select_mul_mat_body);
    weight_case("unselected branch ADD", 16, 256, select_add_body);
}

/* ---- group readback: ggml_backend_tensor_get returns the bits set ---- */

/* Random BF16 bit patterns with the special ones mixed in. */
static void fill_special_bits(uint16_t *w, size_t n)
{
    static const uint16_t special[] = {
        0x0000, 0x8000,                 /* +-0 */
        0x7f80, 0xff80,                 /* +-inf */
        0x7fc0, 0xffc0,                 /* quiet NaNs */
        0x7f81, 0x7fa5, 0xff83, 0xffff, /* NaNs with payloads, signalling ones too */
        0x7fff, 0x7fc1,
        0x0001, 0x8001, 0x007f, 0x807f, /* subnormals */
        0x0080, 0x8080,                 /* the smallest normals */
        0x7f7f, 0xff7f,                 /* the largest finite */
    };
    for (size_t i = 0; i < n; i++)
        w[i] = (rng_next() & 3) == 0 ? special[rng_next() % (sizeof special / sizeof *special)]
                                     : (uint16_t)rng_next();
    for (size_t i = 0; i < sizeof special / sizeof *special && i < n; i++)
        w[i * 7 % n] = special[i];
}

static void group_readback(void)
{
    /* K = 33: rows of 66 bytes, so element offsets that are not row starts are easy to hit. */
    const int64_t n = 64, k = 33;
    const size_t count = (size_t)(n * k);
    uint16_t *bits = xmalloc(count * sizeof *bits);
    struct weight w;

    /* 64 x 33, and 1057 x 129: a last column strip and a last K pair of their own. */
    static const int64_t shapes[2][2] = {{64, 33}, {1057, 129}};
    for (int sh = 0; sh < 2; sh++) {
        const int64_t sn = shapes[sh][0], sk = shapes[sh][1];
        const size_t scount = (size_t)(sn * sk);
        uint16_t *sbits = xmalloc(scount * sizeof *sbits);
        case_begin();
        if (weight_new(&w, sn, sk, "w_bits")) {
            fill_special_bits(sbits, scount);
            ggml_backend_tensor_set(w.t, sbits, 0, scount * sizeof *sbits);
            expect_bits("whole set, whole get", w.t, sbits, 0, scount);
            /* Set again (the same tensor, other bits): the new ones read back. */
            fill_special_bits(sbits, scount);
            ggml_backend_tensor_set(w.t, sbits, 0, scount * sizeof *sbits);
            expect_bits("second whole set, whole get", w.t, sbits, 0, scount);
        }
        weight_free(&w);
        free(sbits);
        case_end("read-back special bits (NaN payloads, +-0, +-inf, subnormals) N=%lld K=%lld",
                 (long long)sn, (long long)sk);
    }

    case_begin();
    if (weight_new(&w, n, k, "w_chunks")) {
        /* Chunks of odd element counts at offsets that are not row starts, written out of
         * order: the last chunk is not the last write. */
        static const size_t cuts[] = {0, 37, 138, 139, 503, 1000, 1001, 1555, 2112};
        const size_t n_chunks = sizeof cuts / sizeof *cuts - 1;
        static const size_t order[] = {3, 7, 0, 5, 2, 6, 4, 1};
        fill_special_bits(bits, count);
        for (size_t c = 0; c < n_chunks; c++) {
            size_t i = order[c], from = cuts[i], to = cuts[i + 1];
            ggml_backend_tensor_set(w.t, bits + from, from * 2, (to - from) * 2);
            /* Each chunk reads back at once, before the tensor is whole. */
            char where[96];
            snprintf(where, sizeof where, "chunk %zu of 8 (elements %zu-%zu) right after its set",
                     c + 1, from, to - 1);
            expect_bits(where, w.t, bits, from, to - from);
        }
        expect_bits("set in 8 chunks out of order, whole get", w.t, bits, 0, count);
        /* Partial reads at odd offsets. */
        static const size_t reads[][2] = {{1, 1}, {13, 77}, {32, 3}, {65, 66}, {2047, 65}, {2111, 1}};
        for (size_t r = 0; r < sizeof reads / sizeof *reads; r++) {
            char where[96];
            snprintf(where, sizeof where, "partial get of %zu elements at element %zu",
                     reads[r][1], reads[r][0]);
            expect_bits(where, w.t, bits, reads[r][0], reads[r][1]);
        }
        /* Overwrite a middle range only, then everything reads as set. */
        uint16_t patch[301];
        fill_special_bits(patch, 301);
        memcpy(bits + 777, patch, sizeof patch);
        ggml_backend_tensor_set(w.t, patch, 777 * 2, sizeof patch);
        expect_bits("after a 301-element set at element 777", w.t, bits, 0, count);
        /* Finite values in chunks: the product follows them. */
        fill_bf16(bits, count, 0.05f);
        for (size_t c = 0; c < n_chunks; c++) {
            size_t i = order[n_chunks - 1 - c], from = cuts[i], to = cuts[i + 1];
            ggml_backend_tensor_set(w.t, bits + from, from * 2, (to - from) * 2);
        }
        expect_weight("finite values set in chunks", w.t, bits, 5);
    }
    weight_free(&w);
    case_end("read-back of chunked sets at odd offsets, partial gets");
    free(bits);
}

/* ---- group memory: a weight is held once ---- */

/* Bytes the process holds from malloc (glibc's count: the heap's blocks in use and the
 * blocks it maps for large requests), which is where ggml and the plugin allocate. */
static size_t malloc_in_use(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

static void group_memory(void)
{
    const int64_t n = 4864, k = 896; /* 8.7 MB of BF16 */
    case_begin();
    uint16_t *bits = xmalloc((size_t)(n * k) * sizeof *bits);
    fill_bf16(bits, (size_t)(n * k), 0.05f);
    size_t before = malloc_in_use();
    struct weight w;
    if (weight_new(&w, n, k, "w")) {
        ggml_backend_tensor_set(w.t, bits, 0, ggml_nbytes(w.t));
        size_t held = malloc_in_use() - before, size = ggml_nbytes(w.t);
        size_t alloc = ggml_backend_buft_get_alloc_size(buft_rvv, w.t);
        if (verbose)
            fprintf(stderr, "plugin_api: memory: %zu bytes of BF16: alloc size %zu, %zu held\n",
                    size, alloc, held);
        /* The packed form pads columns to a strip: a few per cent, not a second copy. */
        if ((double)held > 1.25 * (double)size)
            fail("a %zu-byte BF16 weight set into a GEMM_RVV buffer holds %zu bytes (%.2f x; "
                 "the buffer type's alloc size %zu): a second copy", size, held,
                 (double)held / (double)size, alloc);
        check_product(w.t, bits, 1, "the weight");
    }
    weight_free(&w);
    free(bits);
    case_end("memory: a weight in a GEMM_RVV buffer is held once");
}

/* ---- group view: a write through a view of some rows ---- */

static void view_body(struct weight *w, uint16_t *bits)
{
    const int64_t k = w->t->ne[0], row0 = 3, rows = 5;
    /* Used once, so that a packed or cached form exists before the view write. */
    check_product(w->t, bits, 4, "before the view write");
    struct ggml_context *vctx = ctx_new(2, 0);
    struct ggml_tensor *v = ggml_view_2d(vctx, w->t, k, rows, w->t->nb[1],
                                         (size_t)row0 * w->t->nb[1]);
    ggml_set_name(v, "w_rows_3_to_7");
    if (!v->buffer && ggml_backend_view_init(v) != GGML_STATUS_SUCCESS)
        fail("ggml_backend_view_init failed");
    fill_bf16(bits + row0 * k, (size_t)(rows * k), 0.05f);
    ggml_backend_tensor_set(v, bits + row0 * k, 0, ggml_nbytes(v));
    expect_weight("after setting rows 3-7 through a view", w->t, bits, 4);
    /* 100 elements through a 1-D view that starts mid-row. */
    struct ggml_tensor *v1 = ggml_view_1d(vctx, w->t, 100, (size_t)(10 * k + 37) * 2);
    if (!v1->buffer && ggml_backend_view_init(v1) != GGML_STATUS_SUCCESS)
        fail("ggml_backend_view_init failed");
    fill_bf16(bits + 10 * k + 37, 100, 0.05f);
    ggml_backend_tensor_set(v1, bits + 10 * k + 37, 0, 200);
    expect_weight("after a 1-D view set at row 10 col 37", w->t, bits, 4);
    ggml_free(vctx);
}

static void group_view(void)
{
    weight_case("view write", 16, 256, view_body);
}

/* ---- group memset ---- */

static void memset_body(struct weight *w, uint16_t *bits)
{
    const size_t count = (size_t)ggml_nelements(w->t);
    check_product(w->t, bits, 3, "before memset");
    /* 0x3c3c = 0.0115 in BF16: elements 101 to 101 + 333, not row-aligned. */
    ggml_backend_tensor_memset(w->t, 0x3c, 101 * 2, 333 * 2);
    for (size_t i = 101; i < 101 + 333; i++)
        bits[i] = 0x3c3c;
    expect_weight("after memset of elements 101-433 to 0x3c", w->t, bits, 3);
    /* To the end. */
    ggml_backend_tensor_memset(w->t, 0, 2000 * 2, (count - 2000) * 2);
    for (size_t i = 2000; i < count; i++)
        bits[i] = 0;
    expect_weight("after memset of elements 2000 to the end to 0", w->t, bits, 3);
}

static void group_memset(void)
{
    weight_case("memset", 64, 33, memset_body); /* rows of 66 bytes */
}

/* ---- group clear: ggml_backend_buffer_clear and ggml_backend_buffer_reset ---- */

static void clear_body(struct weight *w, uint16_t *bits)
{
    check_product(w->t, bits, 2, "before clear");
    ggml_backend_buffer_clear(w->buf, 0);
    memset(bits, 0, ggml_nbytes(w->t));
    expect_weight("after ggml_backend_buffer_clear(buf, 0)", w->t, bits, 2);
    /* Set again after the clear: the new values serve. */
    set_random(w->t, bits);
    check_product(w->t, bits, 2, "set after clear");
}

static void reset_body(struct weight *w, uint16_t *bits)
{
    const int64_t k = w->t->ne[0], n = w->t->ne[1];
    check_product(w->t, bits, 2, "before reset");
    ggml_backend_buffer_reset(w->buf);
    /* Place a new tensor of the same shape where the old one was, with a tallocr. */
    struct ggml_context *ctx2 = ctx_new(4, 0);
    struct ggml_tensor *t2 = ggml_new_tensor_2d(ctx2, GGML_TYPE_BF16, k, n);
    ggml_set_name(t2, "w_again");
    struct ggml_tallocr ta = ggml_tallocr_new(w->buf);
    enum ggml_status s = ggml_tallocr_alloc(&ta, t2);
    if (s != GGML_STATUS_SUCCESS) {
        fail("ggml_tallocr_alloc after reset returned %s", status_name(s));
    } else {
        set_random(t2, bits);
        expect_weight("a tensor placed by ggml_tallocr after reset", t2, bits, 2);
    }
    /* Again, placed with ggml_backend_tensor_alloc at the buffer's base. */
    ggml_backend_buffer_reset(w->buf);
    struct ggml_tensor *t3 = ggml_new_tensor_2d(ctx2, GGML_TYPE_BF16, k, n);
    ggml_set_name(t3, "w_third");
    s = ggml_backend_tensor_alloc(w->buf, t3, ggml_backend_buffer_get_base(w->buf));
    if (s != GGML_STATUS_SUCCESS) {
        fail("ggml_backend_tensor_alloc after reset returned %s", status_name(s));
    } else {
        set_random(t3, bits);
        expect_weight("a tensor placed by ggml_backend_tensor_alloc after reset", t3, bits, 2);
    }
    ggml_free(ctx2);
}

static void group_clear(void)
{
    weight_case("buffer clear", 16, 256, clear_body);
    weight_case("buffer reset, tensors placed again", 16, 256, reset_body);
}

/* ---- the layer graph (groups layer and splits) ---- */

enum { L_EMBD = 64, L_HEAD = 4, L_HEAD_KV = 2, L_HD = 16, L_FF = 128, L_TOK = 7, L_VOCAB = 32 };

struct layer_data { /* the values, shared by every copy of the layer */
    uint16_t tok_embd[L_VOCAB * L_EMBD];
    float attn_norm[L_EMBD], ffn_norm[L_EMBD];
    uint16_t wq[L_EMBD * L_EMBD], wk[L_HEAD_KV * L_HD * L_EMBD], wv[L_HEAD_KV * L_HD * L_EMBD],
        wo[L_EMBD * L_EMBD], wg[L_FF * L_EMBD], wu[L_FF * L_EMBD], wd[L_EMBD * L_FF];
    int32_t tokens[L_TOK], pos[L_TOK];
    float mask[L_TOK * L_TOK];
};

struct layer { /* one copy: its tensors and buffers */
    struct ggml_context *lin_ctx, *other_ctx, *graph_ctx;
    ggml_backend_buffer_t lin_buf, other_buf;
    struct ggml_tensor *tok_embd, *attn_norm, *ffn_norm, *wq, *wk, *wv, *wo, *wg, *wu, *wd;
    struct ggml_tensor *tokens, *pos, *mask, *out;
    struct ggml_cgraph *graph;
};

static void layer_data_fill(struct layer_data *d)
{
    fill_bf16(d->tok_embd, sizeof d->tok_embd / 2, 1.0f);
    for (int i = 0; i < L_EMBD; i++) {
        d->attn_norm[i] = 1.0f + 0.1f * frand();
        d->ffn_norm[i] = 1.0f + 0.1f * frand();
    }
    fill_bf16(d->wq, sizeof d->wq / 2, 0.2f);
    fill_bf16(d->wk, sizeof d->wk / 2, 0.2f);
    fill_bf16(d->wv, sizeof d->wv / 2, 0.2f);
    fill_bf16(d->wo, sizeof d->wo / 2, 0.2f);
    fill_bf16(d->wg, sizeof d->wg / 2, 0.2f);
    fill_bf16(d->wu, sizeof d->wu / 2, 0.2f);
    fill_bf16(d->wd, sizeof d->wd / 2, 0.2f);
    for (int i = 0; i < L_TOK; i++) {
        d->tokens[i] = (int32_t)(rng_next() % L_VOCAB);
        d->pos[i] = i;
        for (int j = 0; j < L_TOK; j++)
            d->mask[i * L_TOK + j] = j <= i ? 0.0f : -INFINITY;
    }
}

/* Builds the layer: Linear weights in lin_buft, the embedding, norms and inputs in a CPU
 * buffer, the graph in graph_ctx (its intermediates unallocated). */
static bool layer_new(struct layer *l, const struct layer_data *d, ggml_backend_buffer_type_t lin_buft)
{
    memset(l, 0, sizeof *l);
    const struct {
        struct ggml_tensor **t;
        bool linear; /* in lin_buft, else in a CPU buffer */
        enum ggml_type type;
        int64_t ne0, ne1;
        const char *name;
        const void *data;
        size_t size;
    } specs[] = {
        {&l->wq, true, GGML_TYPE_BF16, L_EMBD, L_EMBD, "blk.0.attn_q.weight", d->wq, sizeof d->wq},
        {&l->wk, true, GGML_TYPE_BF16, L_EMBD, L_HEAD_KV * L_HD, "blk.0.attn_k.weight", d->wk, sizeof d->wk},
        {&l->wv, true, GGML_TYPE_BF16, L_EMBD, L_HEAD_KV * L_HD, "blk.0.attn_v.weight", d->wv, sizeof d->wv},
        {&l->wo, true, GGML_TYPE_BF16, L_EMBD, L_EMBD, "blk.0.attn_output.weight", d->wo, sizeof d->wo},
        {&l->wg, true, GGML_TYPE_BF16, L_EMBD, L_FF, "blk.0.ffn_gate.weight", d->wg, sizeof d->wg},
        {&l->wu, true, GGML_TYPE_BF16, L_EMBD, L_FF, "blk.0.ffn_up.weight", d->wu, sizeof d->wu},
        {&l->wd, true, GGML_TYPE_BF16, L_FF, L_EMBD, "blk.0.ffn_down.weight", d->wd, sizeof d->wd},
        {&l->tok_embd, false, GGML_TYPE_BF16, L_EMBD, L_VOCAB, "token_embd.weight", d->tok_embd, sizeof d->tok_embd},
        {&l->attn_norm, false, GGML_TYPE_F32, L_EMBD, 1, "blk.0.attn_norm.weight", d->attn_norm, sizeof d->attn_norm},
        {&l->ffn_norm, false, GGML_TYPE_F32, L_EMBD, 1, "blk.0.ffn_norm.weight", d->ffn_norm, sizeof d->ffn_norm},
        {&l->tokens, false, GGML_TYPE_I32, L_TOK, 1, "inp_tokens", d->tokens, sizeof d->tokens},
        {&l->pos, false, GGML_TYPE_I32, L_TOK, 1, "inp_pos", d->pos, sizeof d->pos},
        {&l->mask, false, GGML_TYPE_F32, L_TOK, L_TOK, "kq_mask", d->mask, sizeof d->mask},
    };
    const size_t n_specs = sizeof specs / sizeof *specs;
    l->lin_ctx = ctx_new(n_specs, 0);
    l->other_ctx = ctx_new(n_specs, 0);
    for (size_t i = 0; i < n_specs; i++) {
        struct ggml_context *c = specs[i].linear ? l->lin_ctx : l->other_ctx;
        *specs[i].t = specs[i].ne1 == 1
                          ? ggml_new_tensor_1d(c, specs[i].type, specs[i].ne0)
                          : ggml_new_tensor_2d(c, specs[i].type, specs[i].ne0, specs[i].ne1);
        ggml_set_name(*specs[i].t, specs[i].name);
    }
    l->lin_buf = alloc_in(l->lin_ctx, lin_buft, true);
    l->other_buf = alloc_in(l->other_ctx, buft_cpu, true);
    if (!l->lin_buf || !l->other_buf)
        return false;
    for (size_t i = 0; i < n_specs; i++)
        ggml_backend_tensor_set(*specs[i].t, specs[i].data, 0, specs[i].size);

    struct ggml_context *c = l->graph_ctx = ctx_new(128, 1);
    struct ggml_tensor *inp = ggml_get_rows(c, l->tok_embd, l->tokens);
    struct ggml_tensor *cur = ggml_mul(c, ggml_rms_norm(c, inp, 1e-5f), l->attn_norm);
    struct ggml_tensor *q = ggml_reshape_3d(c, ggml_mul_mat(c, l->wq, cur), L_HD, L_HEAD, L_TOK);
    struct ggml_tensor *k = ggml_reshape_3d(c, ggml_mul_mat(c, l->wk, cur), L_HD, L_HEAD_KV, L_TOK);
    struct ggml_tensor *v = ggml_reshape_3d(c, ggml_mul_mat(c, l->wv, cur), L_HD, L_HEAD_KV, L_TOK);
    q = ggml_rope_ext(c, q, l->pos, NULL, L_HD, 0, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
    k = ggml_rope_ext(c, k, l->pos, NULL, L_HD, 0, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
    q = ggml_permute(c, q, 0, 2, 1, 3);                     /* [hd, tok, head] */
    k = ggml_permute(c, k, 0, 2, 1, 3);                     /* [hd, tok, head_kv] */
    struct ggml_tensor *vt = ggml_cont(c, ggml_permute(c, v, 1, 2, 0, 3)); /* [tok, hd, head_kv] */
    struct ggml_tensor *kq = ggml_mul_mat(c, k, q);         /* F32 x F32: [tok_kv, tok, head] */
    kq = ggml_soft_max_ext(c, kq, l->mask, 1.0f / sqrtf((float)L_HD), 0.0f);
    struct ggml_tensor *kqv = ggml_mul_mat(c, vt, kq);      /* [hd, tok, head] */
    cur = ggml_cont_2d(c, ggml_permute(c, kqv, 0, 2, 1, 3), L_EMBD, L_TOK);
    cur = ggml_mul_mat(c, l->wo, cur);
    struct ggml_tensor *ffn_inp = ggml_add(c, cur, inp);
    cur = ggml_mul(c, ggml_rms_norm(c, ffn_inp, 1e-5f), l->ffn_norm);
    cur = ggml_swiglu_split(c, ggml_mul_mat(c, l->wg, cur), ggml_mul_mat(c, l->wu, cur));
    cur = ggml_mul_mat(c, l->wd, cur);
    /* SILU and MUL as separate ops too (older llama.cpp graphs), on the residual. */
    l->out = ggml_add(c, ggml_mul(c, ggml_silu(c, cur), cur), ffn_inp);
    ggml_set_name(l->out, "l_out");
    ggml_set_output(l->out);
    l->graph = ggml_new_graph(c);
    ggml_build_forward_expand(l->graph, l->out);
    return true;
}

static void layer_free(struct layer *l)
{
    if (l->lin_buf)
        ggml_backend_buffer_free(l->lin_buf);
    if (l->other_buf)
        ggml_backend_buffer_free(l->other_buf);
    ggml_free(l->graph_ctx);
    ggml_free(l->other_ctx);
    ggml_free(l->lin_ctx);
}

/* The layer computed on the CPU backend alone, every weight in CPU buffers: out gets
 * L_EMBD x L_TOK values. */
static bool layer_reference(const struct layer_data *d, float *out)
{
    struct layer l;
    bool ok = false;
    if (layer_new(&l, d, buft_cpu)) {
        ggml_gallocr_t ga = ggml_gallocr_new(buft_cpu);
        if (!ggml_gallocr_alloc_graph(ga, l.graph))
            fail("test premise: ggml_gallocr_alloc_graph failed for the CPU reference");
        else {
            enum ggml_status s = compute(be_cpu, l.graph);
            if (s != GGML_STATUS_SUCCESS)
                fail("test premise: the CPU backend returned %s on the layer", status_name(s));
            else {
                ggml_backend_tensor_get(l.out, out, 0, ggml_nbytes(l.out));
                ok = true;
            }
        }
        ggml_gallocr_free(ga);
    }
    layer_free(&l);
    return ok;
}

/* Runs `run` on a fresh layer whose Linear weights are in a GEMM_RVV buffer, with `ref` the
 * CPU backend's output on the same values; one case named `name`. */
static void layer_case(const char *name,
                       void (*run)(struct layer *l, const float *ref, float *got))
{
    static struct layer_data d;
    static float ref[L_EMBD * L_TOK], got[L_EMBD * L_TOK];
    case_begin();
    layer_data_fill(&d);
    if (layer_reference(&d, ref)) {
        struct layer l;
        if (layer_new(&l, &d, buft_rvv))
            run(&l, ref, got);
        layer_free(&l);
    }
    case_end("%s", name);
}

/* The layer with ggml_backend_graph_compute on the GEMM_RVV backend alone. */
static void layer_alone(struct layer *l, const float *ref, float *got)
{
    /* Which ops GEMM_RVV says it cannot run, for the message. */
    char missing[256] = "";
    size_t len = 0;
    for (int i = 0; i < ggml_graph_n_nodes(l->graph); i++) {
        struct ggml_tensor *t = ggml_graph_node(l->graph, i);
        if (!ggml_backend_dev_supports_op(dev_rvv, t) && len < sizeof missing - 40 &&
            !strstr(missing, ggml_op_desc(t)))
            len += (size_t)snprintf(missing + len, sizeof missing - len, "%s%s",
                                    len ? " " : "", ggml_op_desc(t));
    }
    ggml_gallocr_t ga = ggml_gallocr_new(buft_cpu);
    if (!ggml_gallocr_alloc_graph(ga, l->graph))
        fail("ggml_gallocr_alloc_graph failed");
    else {
        enum ggml_status s = compute(be_rvv, l->graph);
        if (s != GGML_STATUS_SUCCESS)
            fail("GEMM_RVV's graph_compute returned %s on the layer graph (%d nodes; "
                 "ops it says it does not support: %s)", status_name(s),
                 ggml_graph_n_nodes(l->graph), missing[0] ? missing : "none");
        else {
            ggml_backend_tensor_get(l->out, got, 0, L_EMBD * L_TOK * sizeof *got);
            expect_close("the layer's output", got, ref, L_EMBD * L_TOK, L_EMBD);
            if (missing[0])
                fail("computed right, but supports_op is false for: %s", missing);
        }
    }
    ggml_gallocr_free(ga);
}

static void group_layer(void)
{
    layer_case("every op: a llama layer on the GEMM_RVV backend alone", layer_alone);
}

/* ---- group splits: the layer through ggml_backend_sched, llama.cpp's way ---- */

static void layer_sched(struct layer *l, const float *ref, float *got)
{
    /* Accelerators first, the CPU last, as llama.cpp orders them. */
    ggml_backend_t backends[2] = {be_rvv, be_cpu};
    ggml_backend_sched_t sched =
        ggml_backend_sched_new(backends, NULL, 2, GGML_DEFAULT_GRAPH_SIZE, false, true);
    if (!ggml_backend_sched_alloc_graph(sched, l->graph))
        fail("ggml_backend_sched_alloc_graph failed");
    else {
        enum ggml_status s = ggml_backend_sched_graph_compute(sched, l->graph);
        int splits = ggml_backend_sched_get_n_splits(sched);
        fprintf(stderr, "plugin_api: splits: the layer ran in %d splits (%d copies)\n",
                splits, ggml_backend_sched_get_n_copies(sched));
        if (s != GGML_STATUS_SUCCESS)
            fail("ggml_backend_sched_graph_compute returned %s", status_name(s));
        else {
            ggml_backend_tensor_get(l->out, got, 0, L_EMBD * L_TOK * sizeof *got);
            expect_close("the layer's output through the scheduler", got, ref,
                         L_EMBD * L_TOK, L_EMBD);
        }
        /* One split when GEMM_RVV runs every node. Two are allowed: the token
         * embedding lives in a CPU buffer (llama.cpp keeps its input layer on the
         * CPU), and the scheduler runs an op where its weight lives, so its GET_ROWS
         * may run on the CPU before everything else moves to GEMM_RVV. More splits
         * mean activations hopping between the backends inside the layer. */
        if (splits > 2) {
            char where[200] = "";
            size_t len = 0;
            for (int i = 0; i < ggml_graph_n_nodes(l->graph) && len < 150; i++) {
                struct ggml_tensor *t = ggml_graph_node(l->graph, i);
                ggml_backend_t b = ggml_backend_sched_get_tensor_backend(sched, t);
                if (b == be_cpu && t->op != GGML_OP_RESHAPE && t->op != GGML_OP_VIEW &&
                    t->op != GGML_OP_PERMUTE && t->op != GGML_OP_TRANSPOSE)
                    len += (size_t)snprintf(where + len, sizeof where - len, "%s%s",
                                            len ? " " : "", ggml_op_desc(t));
            }
            fail("%d splits, at most 2 expected (on the CPU: %s)", splits, where);
        }
    }
    ggml_backend_sched_free(sched);
}

static void group_splits(void)
{
    layer_case("splits: the layer through ggml_backend_sched [GEMM_RVV, CPU]", layer_sched);
}

/* ---- group threads: setting the same count again starts no threads ---- */

/* The process's threads: the entries of /proc/self/task, thread ids, sorted (under QEMU user
 * mode guest threads are host threads; the emulator's own threads are there too and stay). */
#define MAX_TIDS 256
struct tids {
    int n; /* -1: /proc/self/task unreadable */
    long id[MAX_TIDS];
};

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static struct tids threads_now(void)
{
    struct tids t = {.n = 0};
    DIR *dir = opendir("/proc/self/task");
    if (!dir) {
        t.n = -1;
        return t;
    }
    struct dirent *e;
    while ((e = readdir(dir)))
        if (e->d_name[0] != '.' && t.n < MAX_TIDS)
            t.id[t.n++] = strtol(e->d_name, NULL, 10);
    closedir(dir);
    qsort(t.id, (size_t)t.n, sizeof *t.id, cmp_long);
    return t;
}

static bool same_threads(const struct tids *a, const struct tids *b)
{
    return a->n == b->n && memcmp(a->id, b->id, (size_t)a->n * sizeof *a->id) == 0;
}

/* How b differs from a, for messages: counts and the ids that came and went. */
static void describe_threads(char *out, size_t len, const struct tids *a, const struct tids *b)
{
    int gone = 0, came = 0;
    for (int i = 0; i < a->n; i++)
        gone += !bsearch(&a->id[i], b->id, (size_t)b->n, sizeof *b->id, cmp_long);
    for (int i = 0; i < b->n; i++)
        came += !bsearch(&b->id[i], a->id, (size_t)a->n, sizeof *a->id, cmp_long);
    snprintf(out, len, "%d threads, then %d (%d ended, %d started)", a->n, b->n, gone, came);
}

static pthread_mutex_t park_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t park_cond = PTHREAD_COND_INITIALIZER;
static bool park_started, park_release;

static void *parked(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&park_lock);
    park_started = true;
    pthread_cond_broadcast(&park_cond);
    while (!park_release)
        pthread_cond_wait(&park_cond, &park_lock);
    pthread_mutex_unlock(&park_lock);
    return NULL;
}

static void group_threads(void)
{
    const int64_t n = 16, k = 256;
    case_begin();
    /* The counter first: one more thread must show. */
    struct tids before = threads_now();
    pthread_t th;
    if (before.n < 1) {
        fail("cannot read /proc/self/task (%s)", strerror(errno));
    } else if (pthread_create(&th, NULL, parked, NULL) != 0) {
        fail("pthread_create failed");
    } else {
        pthread_mutex_lock(&park_lock);
        while (!park_started)
            pthread_cond_wait(&park_cond, &park_lock);
        pthread_mutex_unlock(&park_lock);
        struct tids during = threads_now();
        pthread_mutex_lock(&park_lock);
        park_release = true;
        pthread_cond_broadcast(&park_cond);
        pthread_mutex_unlock(&park_lock);
        pthread_join(th, NULL);
        /* Under QEMU an ended thread can stay listed a moment after pthread_join. */
        struct tids after = threads_now();
        for (int i = 0; i < 200 && !same_threads(&before, &after); i++) {
            nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
            after = threads_now();
        }
        if (during.n != before.n + 1 || !same_threads(&before, &after))
            fail("test premise: /proc/self/task counted %d threads, %d with one more started, "
                 "%d after it ended", before.n, during.n, after.n);
    }
    ggml_backend_set_n_threads_t set = set_threads_fn(dev_rvv);
    if (!set)
        fail("GEMM_RVV's registry has no ggml_backend_set_n_threads");
    struct weight w = {0};
    uint16_t *bits = xmalloc((size_t)(n * k) * sizeof *bits);
    if (!failure[0] && weight_random(&w, n, k, "w", bits)) {
        /* The CPU's result first: between the snapshots only GEMM_RVV computes (the CPU
         * backend's OpenMP threads would come and go with its own work). */
        check_product(w.t, bits, 9, "before the thread counts"); /* both backends warm */
        struct ggml_context *ctx = ctx_new(8, 1);
        struct ggml_tensor *x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, 9);
        struct ggml_tensor *y = ggml_mul_mat(ctx, w.t, x);
        ggml_backend_buffer_t abuf = alloc_in(ctx, buft_cpu, false);
        if (abuf) {
            float xs[256 * 9], y1[16 * 9], y2[16 * 9];
            fill_f32(xs, sizeof xs / sizeof *xs, 1.0f);
            ggml_backend_tensor_set(x, xs, 0, sizeof xs);
            struct ggml_cgraph *g = ggml_new_graph(ctx);
            ggml_build_forward_expand(g, y);
            /* As llama.cpp does before every graph: set the count, compute. */
            set(be_rvv, 3);
            enum ggml_status s1 = compute(be_rvv, g); /* the pool's threads exist now */
            ggml_backend_tensor_get(y, y1, 0, sizeof y1);
            struct tids first = threads_now();
            set(be_rvv, 3);
            struct tids second = threads_now();
            enum ggml_status s2 = compute(be_rvv, g);
            ggml_backend_tensor_get(y, y2, 0, sizeof y2);
            struct tids third = threads_now();
            char how[160];
            if (s1 != GGML_STATUS_SUCCESS || s2 != GGML_STATUS_SUCCESS)
                fail("GEMM_RVV's graph_compute returned %s, then %s", status_name(s1),
                     status_name(s2));
            else if (memcmp(y1, y2, sizeof y1) != 0)
                fail("the same product on 3 threads gave other bits the second time");
            if (!same_threads(&first, &second)) {
                describe_threads(how, sizeof how, &first, &second);
                fail("setting 3 threads again changed the process's threads: %s", how);
            } else if (!same_threads(&first, &third)) {
                describe_threads(how, sizeof how, &first, &third);
                fail("a product after setting 3 threads again changed the process's threads: "
                     "%s", how);
            }
            if (verbose)
                fprintf(stderr, "plugin_api: threads: %d, %d, %d\n", first.n, second.n, third.n);
            ggml_backend_buffer_free(abuf);
        }
        ggml_free(ctx);
    }
    if (w.ctx)
        weight_free(&w);
    free(bits);
    case_end("threads: the same count set again starts no threads");
}

/* ---- group supports: GEMM_RVV's supports_op against the CPU's ---- */

static void group_supports(void)
{
    case_begin();
    struct ggml_context *ctx = ctx_new(64, 0);
    struct ggml_tensor *a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 64, 8);
    struct ggml_tensor *b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 64, 8);
    struct ggml_tensor *a3 = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 16, 4, 8);
    struct ggml_tensor *nw = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 64);
    struct ggml_tensor *ids = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 8);
    struct ggml_tensor *pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 8);
    struct ggml_tensor *mask = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 8, 8);
    struct ggml_tensor *wf16 = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 64, 32);
    struct ggml_tensor *wq8 = ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, 64, 32);
    struct ggml_tensor *wbf = ggml_new_tensor_2d(ctx, GGML_TYPE_BF16, 64, 32); /* CPU buffer */
    struct ggml_tensor *bh = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 64, 8);
    ggml_backend_buffer_t buf = alloc_in(ctx, buft_cpu, true);
    /* A planned weight in a GEMM_RVV buffer (n16_k256 of the test shapes). */
    struct weight w;
    bool have_w = weight_new(&w, 16, 256, "w_packed");
    if (buf && have_w) {
        struct ggml_context *oc = ctx_new(64, 0);
        struct {
            const char *name;
            struct ggml_tensor *op;
        } same[] = {
            {"ADD", ggml_add(oc, a, b)},
            {"MUL by a norm weight", ggml_mul(oc, a, nw)},
            {"RMS_NORM", ggml_rms_norm(oc, a, 1e-5f)},
            {"SCALE", ggml_scale(oc, a, 0.5f)},
            {"SILU", ggml_silu(oc, a)},
            {"SOFT_MAX_EXT", ggml_soft_max_ext(oc, ggml_new_tensor_2d(oc, GGML_TYPE_F32, 8, 8), mask, 0.25f, 0.0f)},
            {"ROPE", ggml_rope_ext(oc, a3, pos, NULL, 16, 0, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f)},
            {"GET_ROWS of a CPU-buffer F32 table", ggml_get_rows(oc, a, ids)},
            {"CPY F32 -> F16", ggml_cpy(oc, a, bh)},
            {"CONT of a transpose", ggml_cont(oc, ggml_transpose(oc, a))},
            {"MUL_MAT F32 x F32", ggml_mul_mat(oc, ggml_new_tensor_2d(oc, GGML_TYPE_F32, 64, 32), a)},
            {"MUL_MAT F16 x F32", ggml_mul_mat(oc, wf16, a)},
            {"MUL_MAT Q8_0 x F32", ggml_mul_mat(oc, wq8, a)},
            {"MUL_MAT of a BF16 weight in a CPU buffer", ggml_mul_mat(oc, wbf, a)},
            /* One the CPU declines: F32 weights by F16 activations. */
            {"MUL_MAT F32 x F16", ggml_mul_mat(oc, ggml_new_tensor_2d(oc, GGML_TYPE_F32, 64, 32), bh)},
        };
        char only_cpu[400] = "", only_rvv[400] = "";
        size_t len_cpu = 0, len_rvv = 0;
        for (size_t i = 0; i < sizeof same / sizeof *same; i++) {
            bool cpu = ggml_backend_dev_supports_op(dev_cpu, same[i].op);
            bool rvv = ggml_backend_dev_supports_op(dev_rvv, same[i].op);
            if (verbose)
                fprintf(stderr, "plugin_api: supports_op %s: CPU %d, GEMM_RVV %d\n", same[i].name,
                        cpu, rvv);
            char *list = cpu ? only_cpu : only_rvv;
            size_t *len = cpu ? &len_cpu : &len_rvv;
            if (cpu != rvv && *len < sizeof only_cpu - 50)
                *len += (size_t)snprintf(list + *len, sizeof only_cpu - *len, "%s%s",
                                         *len ? ", " : "", same[i].name);
        }
        if (only_cpu[0])
            fail("supports_op false where the CPU's is true: %s", only_cpu);
        if (only_rvv[0])
            fail("supports_op true where the CPU's is false: %s", only_rvv);
        /* The packed weight: its MUL_MAT and GET_ROWS yes (the rows are read out of it: a
         * tied embedding held once), any other op reading it no. */
        struct ggml_tensor *x = ggml_new_tensor_2d(oc, GGML_TYPE_F32, 256, 4);
        struct ggml_tensor *mm = ggml_mul_mat(oc, w.t, x);
        if (!ggml_backend_dev_supports_op(dev_rvv, mm))
            fail("GEMM_RVV does not support MUL_MAT on a weight in its own buffer");
        struct ggml_tensor *ids16 = ggml_new_tensor_1d(oc, GGML_TYPE_I32, 4);
        if (!ggml_backend_dev_supports_op(dev_rvv, ggml_get_rows(oc, w.t, ids16)))
            fail("GEMM_RVV does not support GET_ROWS of a weight packed in its own buffer");
        struct {
            const char *name;
            struct ggml_tensor *op;
        } packed[] = {
            {"CPY to F32", ggml_cpy(oc, w.t, ggml_new_tensor_2d(oc, GGML_TYPE_F32, 256, 16))},
            {"SCALE", ggml_scale(oc, w.t, 2.0f)},
            {"MUL_MAT with it as the activations", ggml_mul_mat(oc, ggml_new_tensor_2d(oc, GGML_TYPE_BF16, 256, 8), w.t)},
        };
        for (size_t i = 0; i < sizeof packed / sizeof *packed; i++)
            if (ggml_backend_dev_supports_op(dev_rvv, packed[i].op))
                fail("GEMM_RVV claims %s reading a weight in its own (packed) buffer",
                     packed[i].name);
        /* llama.cpp's placement asks the same with the weight not yet placed, in a buffer of
         * size 0 (ggml makes it without the buffer type's functions): a planned BF16 weight
         * would be packed there, so only its MUL_MAT may take it there (and its GET_ROWS once
         * its MUL_MAT was asked for: group rows). */
        struct ggml_tensor *probe = ggml_new_tensor_2d(oc, GGML_TYPE_BF16, 256, 16);
        probe->buffer = ggml_backend_buft_alloc_buffer(ggml_backend_dev_buffer_type(dev_rvv), 0);
        if (ggml_backend_dev_supports_op(dev_rvv, ggml_get_rows(oc, probe, ids16)))
            fail("GEMM_RVV claims GET_ROWS of a planned weight about to be placed (packed) in its buffer");
        if (!ggml_backend_dev_supports_op(dev_rvv, ggml_mul_mat(oc, probe, x)))
            fail("GEMM_RVV does not support MUL_MAT on a planned weight about to be placed in its buffer");
        ggml_backend_buffer_free(probe->buffer);
        probe->buffer = NULL;
        ggml_free(oc);
    }
    if (buf)
        ggml_backend_buffer_free(buf);
    weight_free(&w);
    ggml_free(ctx);
    case_end("supports_op agrees with the CPU's, and refuses other ops on packed weights");
}

/* ---- group q8_0: Q8_0 weights, held packed ---- */

#define Q8_BLOCK_BYTES 34

/* Random Q8_0 blocks: finite FP16 scales near 0.002 and random int8 values; with `special`,
 * one scale in four is a special FP16 pattern (0, -0, subnormal, inf, NaN with a payload). */
static void fill_q8_0(uint8_t *b, size_t blocks, bool special)
{
    static const uint16_t odd[] = {0x0000, 0x8000, 0x0001, 0x83ff, 0x7c00, 0xfc00, 0x7e00, 0x7c01, 0xfd55};
    for (size_t i = 0; i < blocks; i++) {
        uint8_t *blk = b + i * Q8_BLOCK_BYTES;
        uint16_t d = (uint16_t)(0x1800 + rng_next() % 0x400); /* 0.0020 to 0.0039 */
        if (special && (rng_next() & 3) == 0)
            d = odd[rng_next() % (sizeof odd / sizeof *odd)];
        blk[0] = (uint8_t)d;
        blk[1] = (uint8_t)(d >> 8);
        for (int j = 0; j < 32; j++)
            blk[2 + j] = (uint8_t)rng_next();
    }
}

static bool q8_weight_new(struct weight *w, int64_t n, int64_t k, const char *name)
{
    w->ctx = ctx_new(4, 0);
    w->t = ggml_new_tensor_2d(w->ctx, GGML_TYPE_Q8_0, k, n);
    ggml_set_name(w->t, name);
    w->buf = alloc_in(w->ctx, buft_rvv, true);
    return w->buf != NULL;
}

/* Bytes [from, from + size) of t read back equal those of `bytes`. */
static void expect_bytes(const char *where, const struct ggml_tensor *t, const uint8_t *bytes,
                         size_t from, size_t size)
{
    uint8_t *got = xmalloc(size);
    memset(got, 0xa5, size);
    ggml_backend_tensor_get(t, got, from, size);
    for (size_t i = 0; i < size; i++) {
        if (got[i] != bytes[from + i]) {
            size_t at = from + i;
            fail("%s: byte %zu (block %zu, byte %zu of it) reads back 0x%02x, 0x%02x was set",
                 where, at, at / Q8_BLOCK_BYTES, at % Q8_BLOCK_BYTES, got[i], bytes[at]);
            break;
        }
    }
    free(got);
}

/* Activations at the edges of ggml's Q8_0 quantisation, one kind of block after another: exact
 * ties (amax 127 makes d = 1, amax 508 d = 4), FP16 scales at a tie of their rounding
 * (d = 1 + 2^-11, 1 + 3 * 2^-11) and at the largest finite one (65504 from d = 65519), zero
 * blocks, a scale that rounds to 0 (d = 2^-25), a subnormal one, d = 2^-11, and ordinary
 * values of magnitudes 2^-10 .. 2^9. With `overflow`, the last block's amax makes d = 65520:
 * an FP16 scale of Inf. */
static void fill_q8_x_edges(float *x, size_t count, bool overflow)
{
    static const float amax[] = {127.0f, 508.0f, 127.0f * (1 + 0x1p-11f),
                                 127.0f * (1 + 3 * 0x1p-11f), 127.0f * 65519.0f, 0.0f,
                                 127 * 0x1p-25f, 127 * 0x1p-20f * 1.37f, 127 * 0x1p-11f};
    const size_t kinds = sizeof amax / sizeof *amax;
    for (size_t b = 0; b < count / 32; b++) {
        float *xb = x + 32 * b;
        const size_t kind = b % (kinds + 1);
        for (int j = 0; j < 32; j++) {
            if (kind == kinds) /* ordinary */
                xb[j] = ldexpf(frand(), (int)(b % 20) - 10);
            else if (kind < 2) /* ties: d * (k + 1/2) */
                xb[j] = (amax[kind] / 127) * ((j % 2 ? 0.5f : -0.5f) + (float)(j % 7));
            else
                xb[j] = amax[kind] * frand() / 2;
        }
        xb[b % 32] = amax[kind % kinds];
        if (kind == kinds)
            xb[b % 32] = frand();
    }
    if (overflow)
        x[count - 1] = 127.0f * 65520.0f;
}

/* Q8_0 shapes of the test shapes file (q8_*): products against the CPU backend's Q8_0. */
static const int64_t q8_shapes[][3] = {{64, 96, 5}, {384, 1152, 1}, {384, 1152, 7}, {100, 96, 13}};

static void group_q8_0(void)
{
    for (size_t i = 0; i < sizeof q8_shapes / sizeof *q8_shapes; i++) {
        int64_t n = q8_shapes[i][0], k = q8_shapes[i][1], m = q8_shapes[i][2];
        size_t bytes = (size_t)(n * k / 32) * Q8_BLOCK_BYTES;
        uint8_t *b = xmalloc(bytes);
        struct weight w;
        case_begin();
        if (q8_weight_new(&w, n, k, "w_q8")) {
            size_t alloc = ggml_backend_buft_get_alloc_size(buft_rvv, w.t);
            fill_q8_0(b, bytes / Q8_BLOCK_BYTES, false);
            ggml_backend_tensor_set(w.t, b, 0, bytes);
            expect_bytes("Q8_0 weight", w.t, b, 0, bytes);
            check_product(w.t, b, m, "Q8_0 product");
            /* Packed: GGUF's 34 bytes a block (FP16 scales kept) with N padded to a panel,
             * not a second copy; on a narrow N the padding alone can be a quarter. */
            if (n >= 256 && (double)alloc > 1.10 * (double)bytes)
                fail("a %zu-byte Q8_0 weight takes %zu bytes in a GEMM_RVV buffer", bytes, alloc);
        }
        weight_free(&w);
        free(b);
        case_end("Q8_0 product N=%lld K=%lld M=%lld", (long long)n, (long long)k, (long long)m);
    }

    /* ggml's quantisation at its edges, on the GEMV tile (M = 1) and on two-row tiles (M = 5,
     * 7), with finite weight scales and with special ones (0, subnormal, Inf, NaN). */
    static const int64_t edge_shapes[][3] = {{384, 1152, 1}, {64, 96, 5}, {384, 1152, 7}};
    for (size_t i = 0; i < sizeof edge_shapes / sizeof *edge_shapes; i++) {
        int64_t n = edge_shapes[i][0], k = edge_shapes[i][1], m = edge_shapes[i][2];
        size_t bytes = (size_t)(n * k / 32) * Q8_BLOCK_BYTES;
        uint8_t *b = xmalloc(bytes);
        float *x = xmalloc((size_t)(k * m) * sizeof *x);
        struct weight w;
        case_begin();
        if (q8_weight_new(&w, n, k, "w_q8_edges")) {
            for (int special = 0; special < 2; special++) {
                fill_q8_0(b, bytes / Q8_BLOCK_BYTES, special);
                ggml_backend_tensor_set(w.t, b, 0, bytes);
                fill_q8_x_edges(x, (size_t)(k * m), m > 1);
                check_product_of(w.t, b, m, x,
                                 special ? "special weight scales" : "finite weight scales");
            }
        }
        weight_free(&w);
        free(x);
        free(b);
        case_end("Q8_0 product at the edges of ggml's quantisation, the same bits: N=%lld K=%lld "
                 "M=%lld", (long long)n, (long long)k, (long long)m);
    }

    /* 64 x 96: 3 blocks a row, rows of 102 bytes. Special scales read back exactly; chunks
     * that cut blocks, out of order; partial gets; memset; clear. */
    const int64_t n = 64, k = 96;
    const size_t bytes = (size_t)(n * k / 32) * Q8_BLOCK_BYTES;
    uint8_t *b = xmalloc(bytes);
    struct weight w;
    case_begin();
    if (q8_weight_new(&w, n, k, "w_q8_bits")) {
        fill_q8_0(b, bytes / Q8_BLOCK_BYTES, true);
        ggml_backend_tensor_set(w.t, b, 0, bytes);
        expect_bytes("special scales, whole set", w.t, b, 0, bytes);
        static const size_t cuts[] = {0, 1, 35, 101, 102, 1000, 3333, 5000, 6528};
        static const size_t order[] = {4, 0, 6, 2, 7, 1, 5, 3};
        fill_q8_0(b, bytes / Q8_BLOCK_BYTES, true);
        for (size_t c = 0; c < 8; c++) {
            size_t from = cuts[order[c]], to = cuts[order[c] + 1];
            ggml_backend_tensor_set(w.t, b + from, from, to - from);
            expect_bytes("a chunk right after its set", w.t, b, from, to - from);
        }
        expect_bytes("set in 8 chunks that cut blocks, out of order", w.t, b, 0, bytes);
        static const size_t reads[][2] = {{1, 1}, {33, 2}, {17, 100}, {6527, 1}, {2040, 68}};
        for (size_t r = 0; r < sizeof reads / sizeof *reads; r++)
            expect_bytes("a partial get", w.t, b, reads[r][0], reads[r][1]);
        /* memset of a range that cuts blocks: 0x11 everywhere in it (scale 0x1111). */
        ggml_backend_tensor_memset(w.t, 0x11, 50, 700);
        memset(b + 50, 0x11, 700);
        expect_bytes("after memset of bytes 50-749", w.t, b, 0, bytes);
        fill_q8_0(b, bytes / Q8_BLOCK_BYTES, false);
        ggml_backend_tensor_set(w.t, b, 0, bytes);
        check_product(w.t, b, 5, "finite blocks set again");
        ggml_backend_buffer_clear(w.buf, 0);
        memset(b, 0, bytes);
        expect_bytes("after ggml_backend_buffer_clear(buf, 0)", w.t, b, 0, bytes);
        check_product(w.t, b, 5, "after clear");
    }
    weight_free(&w);
    free(b);
    case_end("Q8_0 read-back: special scales, chunks that cut blocks, partial gets, memset, clear");
}

/* ---- group source: the memory a weight is set from ---- */

/* Resident KiB of this process (statm; under QEMU the emulator's, whose resident pages include
 * the guest's), or -1. */
static long resident_kib(void)
{
    long size, pages = -1;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &size, &pages) != 2)
            pages = -1;
        fclose(f);
    }
    return pages < 0 ? -1 : pages * (sysconf(_SC_PAGESIZE) / 1024);
}

/* A new unlinked file holding `size` bytes of `bytes`, mapped with `flags`: MAP_PRIVATE
 * read-write (an engine's copy it may change) or MAP_SHARED read-only (llama.cpp's). */
static uint8_t *map_file(const uint8_t *bytes, size_t size, int flags)
{
    char path[] = "/tmp/plugin_api_source_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) {
        fail("mkstemp: %s", strerror(errno));
        return NULL;
    }
    unlink(path);
    void *p = MAP_FAILED;
    if (write(fd, bytes, size) == (ssize_t)size)
        p = mmap(NULL, size, flags == MAP_SHARED ? PROT_READ : PROT_READ | PROT_WRITE, flags, fd, 0);
    else
        fail("writing %zu bytes to %s failed", size, path);
    close(fd);
    if (p == MAP_FAILED) {
        fail("mmap of %zu bytes failed", size);
        return NULL;
    }
    return p;
}

/* Issue 43's defect 1: a weight set from a private mapping of a file that the engine changed
 * (copy-on-write pages) and then made read-only. Its changes must stay, in its memory and in
 * the weight; the plugin used to give those pages back, and they read as the file's again. */
static void source_private_body(struct weight *w, uint8_t *file_bytes, uint8_t *changed,
                                size_t size, const char *format)
{
    uint8_t *map = map_file(file_bytes, size, MAP_PRIVATE);
    if (!map)
        return;
    memcpy(map, changed, size);
    if (mprotect(map, size, PROT_READ) != 0)
        fail("mprotect: %s", strerror(errno));
    ggml_backend_tensor_set(w->t, map, 0, size);
    size_t reverted = 0, first = size;
    for (size_t i = 0; i < size; i++)
        if (map[i] != changed[i]) {
            reverted++;
            first = first < i ? first : i;
        }
    if (reverted)
        fail("%s: %zu of the %zu bytes the engine wrote into its private mapping read as the "
             "file's again after set_tensor from it (the first at byte %zu)", format, reverted,
             size, first);
    if (strcmp(format, "BF16") == 0)
        expect_bits("BF16 weight set from the changed mapping", w->t, (const uint16_t *)changed,
                    0, size / 2);
    else
        expect_bytes("Q8_0 weight set from the changed mapping", w->t, changed, 0, size);
    munmap(map, size);
}

/* llama.cpp's mapping of the model (shared, read-only): the pages a packed weight was copied
 * out of are given back, so that it is not resident twice. */
static void source_shared_body(struct weight *w, uint8_t *file_bytes, size_t size)
{
    uint8_t *map = map_file(file_bytes, size, MAP_SHARED);
    if (!map)
        return;
    /* The weight's own pages resident first, then the mapping's: only the latter may go. */
    ggml_backend_tensor_set(w->t, file_bytes, 0, size);
    volatile uint8_t sum = 0;
    for (size_t i = 0; i < size; i += 4096)
        sum += map[i];
    (void)sum;
    long before = resident_kib();
    ggml_backend_tensor_set(w->t, map, 0, size);
    long after = resident_kib();
    if (before < 0 || after < 0)
        fail("no resident size from /proc/self/statm");
    else if (after > before - (long)(size / 1024) / 2)
        fail("set_tensor from a read-only shared file mapping of %zu KiB: resident %ld KiB "
             "before, %ld KiB after: the mapping's pages were not given back", size / 1024,
             before, after);
    expect_bits("BF16 weight set from the shared mapping", w->t, (const uint16_t *)file_bytes, 0,
                size / 2);
    munmap(map, size);
}

static void group_source(void)
{
    /* BF16 4864 x 896 (8.7 MB) and Q8_0 384 x 1152 (470 KB): shapes with plans. */
    const int64_t n = 4864, k = 896, qn = 384, qk = 1152;
    size_t size = (size_t)(n * k) * 2, qsize = (size_t)(qn * qk / 32) * Q8_BLOCK_BYTES;
    uint8_t *file_bytes = xmalloc(size), *changed = xmalloc(size);
    fill_bf16((uint16_t *)file_bytes, (size_t)(n * k), 0.05f);
    fill_bf16((uint16_t *)changed, (size_t)(n * k), 0.05f);
    struct weight w;

    case_begin();
    if (weight_new(&w, n, k, "w"))
        source_private_body(&w, file_bytes, changed, size, "BF16");
    weight_free(&w);
    case_end("a BF16 weight set from a changed private file mapping: the engine's bytes stay");

    case_begin();
    fill_q8_0(file_bytes, qsize / Q8_BLOCK_BYTES, false);
    fill_q8_0(changed, qsize / Q8_BLOCK_BYTES, false);
    if (q8_weight_new(&w, qn, qk, "w_q8"))
        source_private_body(&w, file_bytes, changed, qsize, "Q8_0");
    weight_free(&w);
    case_end("a Q8_0 weight set from a changed private file mapping: the engine's bytes stay");

    case_begin();
    fill_bf16((uint16_t *)file_bytes, (size_t)(n * k), 0.05f);
    if (weight_new(&w, n, k, "w"))
        source_shared_body(&w, file_bytes, size);
    weight_free(&w);
    case_end("a weight set from a read-only shared file mapping: its pages are given back");
    free(file_bytes);
    free(changed);
}

/* ---- group rows: GET_ROWS of a packed weight (a tied embedding: the lm_head and the table) ---- */

/* GET_ROWS of `count` rows (indices idx) of w, a weight in a GEMM_RVV buffer holding `bytes`,
 * on GEMM_RVV and, of a copy of `bytes` in a CPU buffer, on the CPU backend: the same bits. */
static void check_rows(struct ggml_tensor *w, const void *bytes, const int32_t *idx, int64_t count,
                       const char *where)
{
    int64_t k = w->ne[0], n = w->ne[1];
    struct ggml_context *ctx = ctx_new(8, 2);
    struct ggml_tensor *wc = ggml_new_tensor_2d(ctx, w->type, k, n);
    ggml_backend_buffer_t wbuf = alloc_in(ctx, buft_cpu, true);
    if (!wbuf) {
        ggml_free(ctx);
        return;
    }
    ggml_backend_tensor_set(wc, bytes, 0, ggml_nbytes(wc));
    struct ggml_context *actx = ctx_new(8, 0);
    struct ggml_tensor *ids = ggml_new_tensor_1d(actx, GGML_TYPE_I32, count);
    struct ggml_tensor *rows = ggml_get_rows(actx, w, ids);
    struct ggml_tensor *rows_cpu = ggml_get_rows(actx, wc, ids);
    ggml_backend_buffer_t abuf = alloc_in(actx, buft_cpu, false);
    if (abuf) {
        ggml_backend_tensor_set(ids, idx, 0, ggml_nbytes(ids));
        size_t out_bytes = ggml_nbytes(rows);
        uint32_t *got = xmalloc(out_bytes), *ref = xmalloc(out_bytes);
        if (!ggml_backend_dev_supports_op(dev_rvv, rows)) {
            fail("%s: GEMM_RVV does not take GET_ROWS of its packed weight", where);
        } else {
            struct ggml_cgraph *g = ggml_new_graph(ctx), *gc = ggml_new_graph(ctx);
            ggml_build_forward_expand(g, rows);
            ggml_build_forward_expand(gc, rows_cpu);
            enum ggml_status st = compute(be_rvv, g), sc = compute(be_cpu, gc);
            if (st != GGML_STATUS_SUCCESS || sc != GGML_STATUS_SUCCESS) {
                fail("%s: GET_ROWS returned %s on GEMM_RVV, %s on the CPU", where,
                     status_name(st), status_name(sc));
            } else {
                ggml_backend_tensor_get(rows, got, 0, out_bytes);
                ggml_backend_tensor_get(rows_cpu, ref, 0, out_bytes);
                for (size_t i = 0; i < out_bytes / 4; i++)
                    if (got[i] != ref[i]) {
                        fail("%s: row %zu (weight row %d), element %zu: 0x%08x on GEMM_RVV, "
                             "0x%08x on the CPU", where, i / (size_t)k,
                             (int)idx[i / (size_t)k], i % (size_t)k, got[i], ref[i]);
                        break;
                    }
            }
        }
        free(got);
        free(ref);
        ggml_backend_buffer_free(abuf);
    }
    ggml_free(actx);
    ggml_backend_buffer_free(wbuf);
    ggml_free(ctx);
}

/* Row indices: the first, the last, one twice, the rest random. */
static void row_indices(int32_t *idx, int64_t count, int64_t n)
{
    for (int64_t i = 0; i < count; i++)
        idx[i] = (int32_t)(rng_next() % (uint64_t)n);
    idx[0] = 0;
    idx[1] = (int32_t)(n - 1);
    idx[2] = idx[3];
}

/* One case: 37 rows of a packed weight of `type` holding `bytes`, against the CPU's. */
static void rows_case(enum ggml_type type, int64_t n, int64_t k, const void *bytes,
                      const char *what)
{
    int32_t idx[37];
    struct weight w;
    case_begin();
    bool made = type == GGML_TYPE_BF16 ? weight_new(&w, n, k, "token_embd.weight")
                                       : q8_weight_new(&w, n, k, "token_embd.weight");
    if (made) {
        ggml_backend_tensor_set(w.t, bytes, 0, ggml_nbytes(w.t));
        row_indices(idx, 37, n);
        check_rows(w.t, bytes, idx, 37, what);
    }
    weight_free(&w);
    case_end("GET_ROWS of a packed %s weight: the CPU backend's bits", what);
}

static void group_rows(void)
{
    const int64_t n = 896, k = 896, qn = 384, qk = 1152;
    uint16_t *bits = xmalloc((size_t)(n * k) * sizeof *bits);
    fill_special_bits(bits, (size_t)(n * k));
    rows_case(GGML_TYPE_BF16, n, k, bits, "BF16 (special values)");
    free(bits);
    size_t qbytes = (size_t)(qn * qk / 32) * Q8_BLOCK_BYTES;
    uint8_t *b = xmalloc(qbytes);
    fill_q8_0(b, qbytes / Q8_BLOCK_BYTES, true);
    rows_case(GGML_TYPE_Q8_0, qn, qk, b, "Q8_0 (special scales)");
    free(b);

    /* llama.cpp places a weight by asking supports_op with it in an empty buffer of the
     * type. GET_ROWS of a weight GEMM_RVV would pack is taken only once it was asked to
     * multiply that weight (a tied embedding, also the lm_head: then held once, packed); an
     * untied table stays where it is. */
    case_begin();
    struct ggml_context *ctx = ctx_new(8, 0);
    struct ggml_tensor *t = ggml_new_tensor_2d(ctx, GGML_TYPE_BF16, k, n);
    ggml_set_name(t, "tied_embd.weight");
    struct ggml_tensor *ids = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 8);
    struct ggml_tensor *x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, 8);
    struct ggml_tensor *op = ggml_get_rows(ctx, t, ids), *mm = ggml_mul_mat(ctx, t, x);
    t->buffer = ggml_backend_buft_alloc_buffer(buft_rvv, 0);
    if (ggml_backend_dev_supports_op(dev_rvv, op))
        fail("GET_ROWS of an unplaced BF16 weight is taken before any product on it");
    else if (!ggml_backend_dev_supports_op(dev_rvv, mm))
        fail("MUL_MAT of an unplaced BF16 weight with a plan is declined");
    else if (!ggml_backend_dev_supports_op(dev_rvv, op))
        fail("GET_ROWS of an unplaced BF16 weight GEMM_RVV multiplies is declined");
    ggml_backend_buffer_free(t->buffer);
    t->buffer = NULL;
    ggml_free(ctx);
    case_end("supports_op takes GET_ROWS of an unplaced weight once asked to multiply it");
}

/* ---- the groups, each in a child process ---- */

static const struct {
    const char *name;
    void (*run)(void);
} groups[] = {
    {"products", group_products}, {"empty", group_empty},   {"select", group_select},
    {"readback", group_readback}, {"memory", group_memory}, {"view", group_view},
    {"memset", group_memset},     {"clear", group_clear},   {"layer", group_layer},
    {"splits", group_splits},     {"threads", group_threads}, {"supports", group_supports},
    {"q8_0", group_q8_0},         {"source", group_source}, {"rows", group_rows},
};

/* Runs one group in a child; forwards its lines; counts them. A child that dies or exits
 * without reporting counts as one failure of the group. */
static void run_group(size_t g, int *passed, int *failed)
{
    int fds[2];
    if (pipe(fds) != 0) {
        perror("pipe");
        exit(2);
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(2);
    }
    if (pid == 0) {
        close(fds[0]);
        results = fdopen(fds[1], "w");
        alarm(GROUP_TIMEOUT_S);
        case_begin();
        if (!setup()) {
            case_end("%s: setup", groups[g].name);
            fclose(results);
            _exit(1);
        }
        groups[g].run();
        fclose(results);
        /* No backend is freed: the process ends here, and a backend's teardown is not what
         * these cases test. */
        _exit(0);
    }
    close(fds[1]);
    FILE *in = fdopen(fds[0], "r");
    char line[1200];
    int lines = 0;
    while (fgets(line, sizeof line, in)) {
        fputs(line, stdout);
        fflush(stdout);
        lines++;
        if (strncmp(line, "ok ", 3) == 0)
            (*passed)++;
        else
            (*failed)++;
    }
    fclose(in);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        printf("FAIL %s: the group's process died of signal %d (%s)%s after %d result lines\n",
               groups[g].name, sig, strsignal(sig),
               sig == SIGALRM ? ", its time limit" : "", lines);
        (*failed)++;
    } else if (lines == 0) {
        printf("FAIL %s: the group's process exited %d without a result\n", groups[g].name,
               WEXITSTATUS(status));
        (*failed)++;
    }
}

int main(int argc, char **argv)
{
    const char *v = getenv("PLUGIN_API_VERBOSE");
    verbose = v && *v && strcmp(v, "0") != 0;
    const char *tier = getenv("GEMM_RVV_TEST_TIER");
    full_tier = tier && strcmp(tier, "full") == 0;
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        for (size_t g = 0; g < sizeof groups / sizeof *groups; g++)
            puts(groups[g].name);
        return 0;
    }
    for (int a = 1; a < argc; a++) {
        bool known = false;
        for (size_t g = 0; g < sizeof groups / sizeof *groups; g++)
            known |= strcmp(argv[a], groups[g].name) == 0;
        if (!known) {
            fprintf(stderr, "plugin_api: no group '%s' (--list names them)\n", argv[a]);
            return 2;
        }
    }
    int passed = 0, failed = 0;
    for (size_t g = 0; g < sizeof groups / sizeof *groups; g++) {
        bool wanted = argc == 1;
        for (int a = 1; a < argc; a++)
            wanted |= strcmp(argv[a], groups[g].name) == 0;
        if (wanted)
            run_group(g, &passed, &failed);
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
