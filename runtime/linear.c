/* The public Linear calls: argument checks, the choice between kernel and fallback, the
 * per-call activation widening, and the split of the columns over the worker threads. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "activations.h"
#include "counters.h"
#include "cpu.h"
#include "fallback.h"
#include "gemm_rvv.h"
#include "kernel.h"
#include "pack.h"
#include "registry_lookup.h"
#include "threads.h"

/* Rows of X the fallback widens at a time: 64 x K floats stay small, and are shared by all
 * the threads working on the block. */
#define FALLBACK_BLOCK_ROWS 64

struct gemm_rvv_weight {
    size_t n, k;
    size_t panel_width;
    uint32_t *packed;
    /* Calls hold it shared, update holds it exclusive: no call sees half-packed values. */
    pthread_rwlock_t lock;
    /* The registry rows of this (N, K), found once at create: calls do no search. */
    struct gr_shape_kernels kernels;
    /* The counter rows of this (N, K), one per M bucket (1, 2, 4, ... 2^31), found on first
     * use: steady-state calls do not search the counter table either. */
    _Atomic(struct gr_counter *) counters[32];
};

/* ---- settings ----------------------------------------------------------------------------- */

static atomic_int forced_fallback;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static void read_env(void)
{
    const char *v = getenv("GEMM_RVV_DISABLE");
    if (v && *v && strcmp(v, "0") != 0)
        atomic_store(&forced_fallback, 1);
}

void gemm_rvv_force_fallback(int on)
{
    pthread_once(&env_once, read_env);
    atomic_store(&forced_fallback, on != 0);
}

int gemm_rvv_kernels_active(void)
{
    pthread_once(&env_once, read_env);
    return !atomic_load(&forced_fallback) && gr_cpu_has_vector();
}

gemm_rvv_status gemm_rvv_set_threads(int count)
{
    return gr_threads_set(count) == 0 ? GEMM_RVV_OK : GEMM_RVV_ERR_THREADS;
}

int gemm_rvv_get_threads(void) { return gr_threads_get(); }

/* ---- argument checks ---------------------------------------------------------------------- */

/* Elements a row-major [rows, cols] array with row stride ld spans, or 0 on overflow. */
static size_t span(size_t rows, size_t cols, size_t ld, size_t elem)
{
    size_t n;
    if (__builtin_mul_overflow(rows - 1, ld, &n) || __builtin_add_overflow(n, cols, &n) ||
        n > (size_t)PTRDIFF_MAX / elem)
        return 0;
    return n;
}

static gemm_rvv_status check_matrix(int64_t rows, int64_t cols, int64_t ld, size_t elem)
{
    if (rows <= 0 || cols <= 0)
        return GEMM_RVV_ERR_SIZE;
    if (ld < cols)
        return GEMM_RVV_ERR_STRIDE;
    if ((uint64_t)rows > SIZE_MAX || (uint64_t)ld > SIZE_MAX ||
        span((size_t)rows, (size_t)cols, (size_t)ld, elem) == 0)
        return GEMM_RVV_ERR_OVERFLOW;
    return GEMM_RVV_OK;
}

static gemm_rvv_status check_call(const uint16_t *x, int64_t m, int64_t ldx, int64_t n,
                                  int64_t k, void *y, int64_t ldy, gemm_rvv_type y_type)
{
    gemm_rvv_status s;
    if (!x || !y)
        return GEMM_RVV_ERR_NULL;
    if (y_type != GEMM_RVV_F32 && y_type != GEMM_RVV_BF16)
        return GEMM_RVV_ERR_TYPE;
    if ((s = check_matrix(m, k, ldx, sizeof(uint16_t))) != GEMM_RVV_OK)
        return s;
    return check_matrix(m, n, ldy, y_type == GEMM_RVV_F32 ? sizeof(float) : sizeof(uint16_t));
}

/* ---- one call ----------------------------------------------------------------------------- */

/* What the column pieces of one call share. */
struct call {
    const struct gr_weight_view *w;
    const struct gr_kernel_entry *kernel; /* NULL: the fallback */
    struct gr_kernel_args args;           /* x is the widened block of rows, for both paths */
    size_t piece_cols;                    /* columns per piece, a multiple of panel_width */
    float *col_bufs;                      /* the fallback's: GR_FALLBACK_COLS * K per piece */
};

static void run_piece(void *ctx, size_t i)
{
    const struct call *c = ctx;
    size_t begin = i * c->piece_cols;
    size_t end = begin + c->piece_cols < c->w->n ? begin + c->piece_cols : c->w->n;
    if (c->kernel)
        (c->w->packed ? c->kernel->packed : c->kernel->plain)(&c->args, begin, end);
    else
        gr_fallback(c->args.x, c->args.m, c->w, c->args.bias, c->args.y, c->args.ldy,
                    c->args.y_bf16, begin, end, c->col_bufs + i * GR_FALLBACK_COLS * c->w->k);
}

/* Splits the columns into pieces of whole panels, about two per thread (so a slow thread
 * holds back less), and runs them. */
static gemm_rvv_status run_columns(struct call *c, size_t panel_width)
{
    size_t panels = c->w->n / panel_width + (c->w->n % panel_width != 0);
    size_t threads = (size_t)gr_threads_get();
    size_t pieces = threads > 1 ? 2 * threads : 1;
    if (pieces > panels)
        pieces = panels;
    size_t panels_per_piece = panels / pieces + (panels % pieces != 0);
    c->piece_cols = panels_per_piece * panel_width;
    pieces = panels / panels_per_piece + (panels % panels_per_piece != 0);
    c->col_bufs = NULL;
    if (!c->kernel) {
        c->col_bufs = malloc(pieces * GR_FALLBACK_COLS * c->w->k * sizeof *c->col_bufs);
        if (!c->col_bufs)
            return GEMM_RVV_ERR_NOMEM;
    }
    gr_parallel_for(pieces, run_piece, c);
    free(c->col_bufs);
    return GEMM_RVV_OK;
}

/* The counter row of a call; cache is the weight object's, or NULL for plain weights. */
static struct gr_counter *counter_of(_Atomic(struct gr_counter *) *cache, size_t n, size_t k,
                                     size_t m)
{
    uint32_t bucket = gr_count_bucket(m);
    if (!cache)
        return gr_counter_for(n, k, bucket);
    _Atomic(struct gr_counter *) *slot = &cache[__builtin_ctz(bucket)];
    struct gr_counter *c = atomic_load(slot);
    if (!c) {
        c = gr_counter_for(n, k, bucket);
        atomic_store(slot, c);
    }
    return c;
}

static gemm_rvv_status run(const uint16_t *x, size_t m, size_t ldx,
                           const struct gr_weight_view *w, const struct gr_shape_kernels *ks,
                           _Atomic(struct gr_counter *) *counter_cache, const float *bias,
                           void *y, size_t ldy, gemm_rvv_type y_type)
{
    const struct gr_kernel_entry *kernel = NULL;
    if (ks->count > 0 && gemm_rvv_kernels_active()) {
        kernel = gr_pick_kernel(ks, m);
        if (!kernel && ks->entry[ks->count - 1]->bucket > 1)
            kernel = ks->entry[ks->count - 1]; /* M above every bucket: blocks of rows */
    }
    struct gr_counter *counter = counter_of(counter_cache, w->n, w->k, m);
    if (counter)
        atomic_fetch_add(kernel ? &counter->kernel_calls : &counter->fallback_calls, 1);

    struct call c = {w, kernel, {NULL, m, w->packed, w->panel_width, w->plain, w->ldw, bias,
                                 y, ldy, y_type == GEMM_RVV_BF16},
                     0, NULL};
    size_t panel_width = w->packed ? w->panel_width : gr_panel_width();

    /* Rows go in blocks: a kernel's bucket (its activations are k-major, bucket floats per k),
     * or FALLBACK_BLOCK_ROWS rows for the fallback. Each block is widened once and its columns
     * split over the threads. */
    size_t block = kernel ? kernel->bucket : FALLBACK_BLOCK_ROWS;
    size_t floats;
    if (__builtin_mul_overflow(w->k, kernel || m > block ? block : m, &floats) ||
        floats > SIZE_MAX / sizeof(float))
        return GEMM_RVV_ERR_OVERFLOW;
    float *x_f = malloc(floats * sizeof *x_f);
    if (!x_f)
        return GEMM_RVV_ERR_NOMEM;
    gemm_rvv_status s = GEMM_RVV_OK;
    for (size_t row = 0; row < m && s == GEMM_RVV_OK; row += block) {
        size_t rows = m - row < block ? m - row : block;
        if (kernel)
            gr_widen_activations(x + row * ldx, rows, ldx, w->k, block, x_f);
        else
            gr_widen_rows(x + row * ldx, rows, ldx, w->k, x_f);
        c.args.x = x_f;
        c.args.m = rows;
        c.args.y = y_type == GEMM_RVV_BF16 ? (void *)((uint16_t *)y + row * ldy)
                                           : (void *)((float *)y + row * ldy);
        s = run_columns(&c, panel_width);
    }
    free(x_f);
    return s;
}

/* ---- the API ------------------------------------------------------------------------------ */

gemm_rvv_status gemm_rvv_weight_create(const uint16_t *w, int64_t n, int64_t k, int64_t ldw,
                                       gemm_rvv_weight **out)
{
    gemm_rvv_status s;
    if (!w || !out)
        return GEMM_RVV_ERR_NULL;
    if ((s = check_matrix(n, k, ldw, sizeof(uint16_t))) != GEMM_RVV_OK)
        return s;
    size_t pw = gr_panel_width();
    size_t words = gr_packed_words((size_t)n, (size_t)k, pw);
    if (words == 0)
        return GEMM_RVV_ERR_OVERFLOW;
    struct gemm_rvv_weight *obj = malloc(sizeof *obj);
    uint32_t *packed = malloc(words * sizeof *packed);
    if (!obj || !packed || pthread_rwlock_init(&obj->lock, NULL) != 0) {
        free(obj);
        free(packed);
        return GEMM_RVV_ERR_NOMEM;
    }
    obj->n = (size_t)n;
    obj->k = (size_t)k;
    obj->panel_width = pw;
    obj->packed = packed;
    gr_pack(w, obj->n, obj->k, (size_t)ldw, pw, packed);
    gr_find_kernels(obj->n, obj->k, &obj->kernels);
    for (size_t i = 0; i < sizeof obj->counters / sizeof obj->counters[0]; i++)
        atomic_init(&obj->counters[i], NULL);
    *out = obj;
    return GEMM_RVV_OK;
}

gemm_rvv_status gemm_rvv_weight_update(gemm_rvv_weight *weight, const uint16_t *w, int64_t ldw)
{
    if (!weight || !w)
        return GEMM_RVV_ERR_NULL;
    gemm_rvv_status s = check_matrix((int64_t)weight->n, (int64_t)weight->k, ldw,
                                     sizeof(uint16_t));
    if (s != GEMM_RVV_OK)
        return s;
    pthread_rwlock_wrlock(&weight->lock);
    gr_pack(w, weight->n, weight->k, (size_t)ldw, weight->panel_width, weight->packed);
    pthread_rwlock_unlock(&weight->lock);
    return GEMM_RVV_OK;
}

void gemm_rvv_weight_free(gemm_rvv_weight *weight)
{
    if (!weight)
        return;
    pthread_rwlock_destroy(&weight->lock);
    free(weight->packed);
    free(weight);
}

gemm_rvv_status gemm_rvv_linear(const uint16_t *x, int64_t m, int64_t ldx,
                                const gemm_rvv_weight *weight, const float *bias, void *y,
                                int64_t ldy, gemm_rvv_type y_type)
{
    if (!weight)
        return GEMM_RVV_ERR_NULL;
    gemm_rvv_status s = check_call(x, m, ldx, (int64_t)weight->n, (int64_t)weight->k, y, ldy,
                                   y_type);
    if (s != GEMM_RVV_OK)
        return s;
    struct gr_weight_view view = {weight->packed, weight->panel_width, NULL, 0, weight->n,
                                  weight->k};
    pthread_rwlock_t *lock = (pthread_rwlock_t *)&weight->lock;
    pthread_rwlock_rdlock(lock);
    s = run(x, (size_t)m, (size_t)ldx, &view, &weight->kernels,
            ((gemm_rvv_weight *)weight)->counters, bias, y, (size_t)ldy, y_type);
    pthread_rwlock_unlock(lock);
    return s;
}

gemm_rvv_status gemm_rvv_linear_plain(const uint16_t *x, int64_t m, int64_t ldx,
                                      const uint16_t *w, int64_t n, int64_t k, int64_t ldw,
                                      const float *bias, void *y, int64_t ldy,
                                      gemm_rvv_type y_type)
{
    if (!w)
        return GEMM_RVV_ERR_NULL;
    gemm_rvv_status s = check_call(x, m, ldx, n, k, y, ldy, y_type);
    if (s == GEMM_RVV_OK)
        s = check_matrix(n, k, ldw, sizeof(uint16_t));
    if (s != GEMM_RVV_OK)
        return s;
    struct gr_shape_kernels kernels;
    gr_find_kernels((uint64_t)n, (uint64_t)k, &kernels);
    struct gr_weight_view view = {NULL, 0, w, (size_t)ldw, (size_t)n, (size_t)k};
    return run(x, (size_t)m, (size_t)ldx, &view, &kernels, NULL, bias, y, (size_t)ldy, y_type);
}
