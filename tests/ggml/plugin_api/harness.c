/* plugin_api's harness: the group runner and its reporting, the two devices, data and the
 * product check every group uses (tests/ggml/plugin_api/harness.h). */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* A group that takes longer than this (under QEMU) counts as hung. */
#define GROUP_TIMEOUT_S 600

/* ---- reporting: the child writes its result lines to a pipe the parent reads ---- */

static FILE *results;      /* the child's end of the pipe */
char pa_failure[1024];     /* the current case's first failure, empty while it passes */

/* Records the case's first failure; later ones are usually consequences of it. */
__attribute__((format(printf, 1, 2))) void pa_fail(const char *fmt, ...)
{
    if (pa_failure[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pa_failure, sizeof pa_failure, fmt, ap);
    va_end(ap);
}

void pa_case_begin(void)
{
    pa_failure[0] = '\0';
}

/* Ends a case: one line for it. Returns whether it passed. */
__attribute__((format(printf, 1, 2))) bool pa_case_end(const char *fmt, ...)
{
    char name[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    if (pa_failure[0])
        fprintf(results, "FAIL %s: %s\n", name, pa_failure);
    else
        fprintf(results, "ok %s\n", name);
    fflush(results);
    return !pa_failure[0];
}

bool pa_verbose;

static void log_cb(enum ggml_log_level level, const char *text, void *user)
{
    (void)user;
    if (pa_verbose || level == GGML_LOG_LEVEL_WARN || level == GGML_LOG_LEVEL_ERROR)
        fputs(text, stderr);
}

/* ---- the two devices ---- */

ggml_backend_dev_t pa_dev_rvv, pa_dev_cpu;
ggml_backend_t pa_be_rvv, pa_be_cpu;
ggml_backend_buffer_type_t pa_buft_rvv, pa_buft_cpu;

ggml_backend_set_n_threads_t pa_set_threads_fn(ggml_backend_dev_t dev)
{
    ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(dev);
    return reg ? (ggml_backend_set_n_threads_t)ggml_backend_reg_get_proc_address(
                     reg, "ggml_backend_set_n_threads")
               : NULL;
}

/* Loads every backend as llama.cpp does; false (with the reason in `pa_failure`) when the plugin
 * or the CPU backend is missing. */
static bool setup(void)
{
    ggml_log_set(log_cb, NULL);
    ggml_backend_load_all();
    pa_dev_rvv = ggml_backend_dev_by_name("GEMM_RVV");
    pa_dev_cpu = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    if (!pa_dev_rvv) {
        const char *path = getenv("GGML_BACKEND_PATH");
        pa_fail("no GEMM_RVV device after ggml_backend_load_all() (GGML_BACKEND_PATH=%s)",
                path ? path : "(unset)");
        return false;
    }
    if (!pa_dev_cpu) {
        pa_fail("no CPU device after ggml_backend_load_all()");
        return false;
    }
    pa_be_rvv = ggml_backend_dev_init(pa_dev_rvv, NULL);
    pa_be_cpu = ggml_backend_dev_init(pa_dev_cpu, NULL);
    if (!pa_be_rvv || !pa_be_cpu) {
        pa_fail("ggml_backend_dev_init failed (GEMM_RVV %p, CPU %p)", (void *)pa_be_rvv, (void *)pa_be_cpu);
        return false;
    }
    pa_buft_rvv = ggml_backend_dev_buffer_type(pa_dev_rvv);
    pa_buft_cpu = ggml_backend_dev_buffer_type(pa_dev_cpu);
    /* Two threads each, as llama.cpp sets its -t on every backend that has the entry. */
    ggml_backend_set_n_threads_t cpu_threads = pa_set_threads_fn(pa_dev_cpu);
    if (cpu_threads)
        cpu_threads(pa_be_cpu, 2);
    ggml_backend_set_n_threads_t rvv_threads = pa_set_threads_fn(pa_dev_rvv);
    if (rvv_threads)
        rvv_threads(pa_be_rvv, 2);
    return true;
}

/* ---- data ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

uint64_t pa_rng_next(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Uniform in [-1, 1). */
float pa_frand(void)
{
    return (float)((double)(pa_rng_next() >> 11) * 0x1p-52 - 1.0);
}

void pa_fill_f32(float *x, size_t n, float scale)
{
    for (size_t i = 0; i < n; i++)
        x[i] = scale * pa_frand();
}

void pa_fill_bf16(uint16_t *w, size_t n, float scale)
{
    for (size_t i = 0; i < n; i++)
        w[i] = ggml_fp32_to_bf16(scale * pa_frand()).bits;
}

void *pa_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "plugin_api: out of memory (%zu bytes)\n", n);
        exit(2);
    }
    return p;
}

/* A context for tensor descriptions only (their data goes into backend buffers). */
struct ggml_context *pa_ctx_new(size_t n_tensors, size_t n_graphs)
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
ggml_backend_buffer_t pa_alloc_in(struct ggml_context *ctx, ggml_backend_buffer_type_t buft,
                                  bool weights)
{
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(ctx, buft);
    if (!buf) {
        pa_fail("ggml_backend_alloc_ctx_tensors_from_buft(%s) failed", ggml_backend_buft_name(buft));
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
void pa_expect_close(const char *what, const float *y, const float *ref, size_t n, size_t row)
{
    double e = nmse(y, ref, n);
    if (!(e <= NMSE_MAX)) {
        size_t at = worst(y, ref, n);
        pa_fail("%s: NMSE %.3g > %g against the CPU backend (worst at row %zu col %zu: %g, CPU %g)",
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
        pa_fail("%s: %zu of %zu outputs are not the CPU backend's bits (first at row %zu col %zu: "
                "%a, CPU %a)",
             what, differ, n, first / row, first % row, (double)y[first], (double)ref[first]);
}

enum ggml_status pa_compute(ggml_backend_t be, struct ggml_cgraph *g)
{
    return ggml_backend_graph_compute(be, g);
}

const char *pa_status_name(enum ggml_status s)
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
void pa_check_product_of(struct ggml_tensor *w, const void *bits, int64_t m,
                         const float *x_given, const char *where)
{
    int64_t k = w->ne[0], n = w->ne[1];
    struct ggml_context *ctx = pa_ctx_new(8, 2);
    struct ggml_tensor *wc = ggml_new_tensor_2d(ctx, w->type, k, n);
    ggml_set_name(wc, "w_cpu");
    ggml_backend_buffer_t wbuf = pa_alloc_in(ctx, pa_buft_cpu, true);
    if (!wbuf) {
        ggml_free(ctx);
        return;
    }
    ggml_backend_tensor_set(wc, bits, 0, ggml_nbytes(wc));

    struct ggml_context *actx = pa_ctx_new(8, 0);
    struct ggml_tensor *x = ggml_new_tensor_2d(actx, GGML_TYPE_F32, k, m);
    struct ggml_tensor *y = ggml_mul_mat(actx, w, x);
    struct ggml_tensor *yc = ggml_mul_mat(actx, wc, x);
    ggml_set_name(x, "x");
    ggml_set_name(y, "y_gemm_rvv");
    ggml_set_name(yc, "y_cpu");
    ggml_backend_buffer_t abuf = pa_alloc_in(actx, pa_buft_cpu, false);
    if (!abuf)
        goto out;
    float *xs = pa_xmalloc((size_t)(k * m) * sizeof *xs);
    float *ys = pa_xmalloc((size_t)(n * m) * sizeof *ys);
    float *refs = pa_xmalloc((size_t)(n * m) * sizeof *refs);
    if (x_given)
        memcpy(xs, x_given, (size_t)(k * m) * sizeof *xs);
    else
        pa_fill_f32(xs, (size_t)(k * m), 1.0f);
    ggml_backend_tensor_set(x, xs, 0, ggml_nbytes(x));
    if (!ggml_backend_dev_supports_op(pa_dev_rvv, y)) {
        pa_fail("%s: GEMM_RVV does not support MUL_MAT N = %lld, K = %lld, M = %lld", where,
                (long long)n, (long long)k, (long long)m);
    } else {
        struct ggml_cgraph *g = ggml_new_graph(ctx);
        ggml_build_forward_expand(g, y);
        struct ggml_cgraph *gc = ggml_new_graph(ctx);
        ggml_build_forward_expand(gc, yc);
        enum ggml_status s = pa_compute(pa_be_rvv, g), sc = pa_compute(pa_be_cpu, gc);
        if (sc != GGML_STATUS_SUCCESS)
            pa_fail("%s: the CPU backend's MUL_MAT returned %s", where, pa_status_name(sc));
        else if (s != GGML_STATUS_SUCCESS)
            pa_fail("%s: GEMM_RVV's graph_compute returned %s", where, pa_status_name(s));
        else {
            ggml_backend_tensor_get(y, ys, 0, ggml_nbytes(y));
            ggml_backend_tensor_get(yc, refs, 0, ggml_nbytes(yc));
            char what[160];
            snprintf(what, sizeof what, "%s: MUL_MAT N = %lld, K = %lld, M = %lld", where,
                     (long long)n, (long long)k, (long long)m);
            if (w->type == GGML_TYPE_Q8_0)
                expect_same(what, ys, refs, (size_t)(n * m), (size_t)n);
            else
                pa_expect_close(what, ys, refs, (size_t)(n * m), (size_t)n);
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

void pa_check_product(struct ggml_tensor *w, const void *bits, int64_t m, const char *where)
{
    pa_check_product_of(w, bits, m, NULL, where);
}

/* An [n, k] weight of `type` alone in a GEMM_RVV buffer. */
static bool weight_of_type(struct weight *w, enum ggml_type type, int64_t n, int64_t k,
                           const char *name)
{
    w->ctx = pa_ctx_new(4, 0);
    w->t = ggml_new_tensor_2d(w->ctx, type, k, n);
    ggml_set_name(w->t, name);
    w->buf = pa_alloc_in(w->ctx, pa_buft_rvv, true);
    return w->buf != NULL;
}

bool pa_weight_new(struct weight *w, int64_t n, int64_t k, const char *name)
{
    return weight_of_type(w, GGML_TYPE_BF16, n, k, name);
}

void pa_weight_free(struct weight *w)
{
    if (w->buf)
        ggml_backend_buffer_free(w->buf);
    ggml_free(w->ctx);
}

/* Reads the whole weight back and compares it with `bits`, bit for bit. */
void pa_expect_bits(const char *where, const struct ggml_tensor *t, const uint16_t *bits,
                    size_t elem_off, size_t count)
{
    uint16_t *got = pa_xmalloc(count * sizeof *got);
    memset(got, 0xa5, count * sizeof *got);
    ggml_backend_tensor_get(t, got, elem_off * sizeof *got, count * sizeof *got);
    for (size_t i = 0; i < count; i++) {
        if (got[i] != bits[elem_off + i]) {
            size_t e = elem_off + i, k = (size_t)t->ne[0];
            pa_fail("%s: element %zu (row %zu, col %zu) reads back 0x%04x, 0x%04x was set", where,
                    e, e / k, e % k, got[i], bits[e]);
            break;
        }
    }
    free(got);
}

/* Random finite BF16 values into bits and the whole tensor. */
void pa_set_random(struct ggml_tensor *t, uint16_t *bits)
{
    size_t count = (size_t)ggml_nelements(t);
    pa_fill_bf16(bits, count, 0.05f);
    ggml_backend_tensor_set(t, bits, 0, count * sizeof *bits);
}

/* A new weight (pa_weight_new) holding random values (pa_set_random). */
bool pa_weight_random(struct weight *w, int64_t n, int64_t k, const char *name, uint16_t *bits)
{
    if (!pa_weight_new(w, n, k, name))
        return false;
    pa_set_random(w->t, bits);
    return true;
}

/* The whole tensor reads back as `bits`, and M rows by it on GEMM_RVV match the CPU's. */
void pa_expect_weight(const char *where, struct ggml_tensor *t, const uint16_t *bits, int64_t m)
{
    pa_expect_bits(where, t, bits, 0, (size_t)ggml_nelements(t));
    pa_check_product(t, bits, m, where);
}

/* One case on a new GEMM_RVV weight of N x K holding random values (`bits`). */
void pa_weight_case(const char *name, int64_t n, int64_t k,
                    void (*body)(struct weight *w, uint16_t *bits))
{
    pa_case_begin();
    struct weight w;
    uint16_t *bits = pa_xmalloc((size_t)(n * k) * sizeof *bits);
    if (pa_weight_random(&w, n, k, "w", bits))
        body(&w, bits);
    pa_weight_free(&w);
    free(bits);
    pa_case_end("%s", name);
}

/* Random BF16 bit patterns with the special ones mixed in. */
void pa_fill_special_bits(uint16_t *w, size_t n)
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
        w[i] = (pa_rng_next() & 3) == 0 ? special[pa_rng_next() % (sizeof special / sizeof *special)]
                                     : (uint16_t)pa_rng_next();
    for (size_t i = 0; i < sizeof special / sizeof *special && i < n; i++)
        w[i * 7 % n] = special[i];
}

/* Random Q8_0 blocks: finite FP16 scales near 0.002 and random int8 values; with `special`,
 * one scale in four is a special FP16 pattern (0, -0, subnormal, inf, NaN with a payload). */
void pa_fill_q8_0(uint8_t *b, size_t blocks, bool special)
{
    static const uint16_t odd[] = {0x0000, 0x8000, 0x0001, 0x83ff, 0x7c00, 0xfc00, 0x7e00, 0x7c01, 0xfd55};
    for (size_t i = 0; i < blocks; i++) {
        uint8_t *blk = b + i * PA_Q8_BLOCK_BYTES;
        uint16_t d = (uint16_t)(0x1800 + pa_rng_next() % 0x400); /* 0.0020 to 0.0039 */
        if (special && (pa_rng_next() & 3) == 0)
            d = odd[pa_rng_next() % (sizeof odd / sizeof *odd)];
        blk[0] = (uint8_t)d;
        blk[1] = (uint8_t)(d >> 8);
        for (int j = 0; j < 32; j++)
            blk[2 + j] = (uint8_t)pa_rng_next();
    }
}

bool pa_q8_weight_new(struct weight *w, int64_t n, int64_t k, const char *name)
{
    return weight_of_type(w, GGML_TYPE_Q8_0, n, k, name);
}

/* Bytes [from, from + size) of t read back equal those of `bytes`. */
void pa_expect_bytes(const char *where, const struct ggml_tensor *t, const uint8_t *bytes,
                     size_t from, size_t size)
{
    uint8_t *got = pa_xmalloc(size);
    memset(got, 0xa5, size);
    ggml_backend_tensor_get(t, got, from, size);
    for (size_t i = 0; i < size; i++) {
        if (got[i] != bytes[from + i]) {
            size_t at = from + i;
            pa_fail("%s: byte %zu (block %zu, byte %zu of it) reads back 0x%02x, 0x%02x was set",
                    where, at, at / PA_Q8_BLOCK_BYTES, at % PA_Q8_BLOCK_BYTES, got[i], bytes[at]);
            break;
        }
    }
    free(got);
}

/* Runs one group in a child; forwards its lines; counts them. A child that dies or exits
 * without reporting counts as one failure of the group. */
void pa_run_group(const char *name, void (*run)(void), int *passed, int *failed)
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
        pa_case_begin();
        if (!setup()) {
            pa_case_end("%s: setup", name);
            fclose(results);
            _exit(1);
        }
        run();
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
               name, sig, strsignal(sig),
               sig == SIGALRM ? ", its time limit" : "", lines);
        (*failed)++;
    } else if (lines == 0) {
        printf("FAIL %s: the group's process exited %d without a result\n", name,
               WEXITSTATUS(status));
        (*failed)++;
    }
}
