/* The public Linear calls: argument checks, the choice between a plan and the fallback, the
 * scratch a call takes before it writes anything, and the split of the columns over the
 * worker threads. */
/* For PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP: without it glibc's rwlock prefers readers,
 * and callers calling back to back keep a weight update waiting for ever. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "activations.h"
#include "counters.h"
#include "cpu.h"
#include "driver.h"
#include "fallback.h"
#include "gemm_rvv.h"
#include "gr_contract.h"
#include "isa.h"
#include "pack.h"
#include "registry_lookup.h"
#include "scratch.h"
#include "threads.h"

/* Rows of X the fallback widens at a time: 64 x K floats stay small, and are shared by all
 * the threads working on the block. */
#define FALLBACK_BLOCK_ROWS 64

struct gemm_rvv_weight {
    size_t n, k;
    /* The packed layout of the variant that serves (gr_isa_variant) when this build has a plan
     * for (N, K) and the core has V; else a plain [N, K] copy (row stride K) for the fallback.
     * 64-byte aligned. */
    uint32_t *packed;
    uint32_t layout;
    size_t panel_width;
    uint16_t *plain;
    /* Calls hold it shared, update holds it exclusive: no call sees half-packed values. */
    pthread_rwlock_t lock;
    /* The plans of this (N, K), found once at create: calls do no search. */
    struct gr_shape_plans plans;
    /* The counter rows of this (N, K), one per M bucket (1, 2, 4, ... 2^31), found on first
     * use: steady-state calls do not search the counter table either. */
    _Atomic(struct gr_counter *) counters[32];
};

/* ---- settings ----------------------------------------------------------------------------- */

static atomic_int forced_fallback;
static int forced_share = -1; /* GEMM_RVV_BLOCKING: -1 by thread count, else GR_L2_* */
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static void read_env(void)
{
    const char *v = getenv("GEMM_RVV_DISABLE");
    if (v && *v && strcmp(v, "0") != 0)
        atomic_store(&forced_fallback, 1);
    v = getenv("GEMM_RVV_BLOCKING");
    if (v && strcmp(v, "alone") == 0)
        forced_share = GR_L2_ALONE;
    else if (v && strcmp(v, "shared") == 0)
        forced_share = GR_L2_SHARED;
}

void gemm_rvv_force_fallback(int on)
{
    pthread_once(&env_once, read_env);
    atomic_store(&forced_fallback, on != 0);
}

int gemm_rvv_kernels_active(void)
{
    pthread_once(&env_once, read_env);
    return !atomic_load(&forced_fallback) && gr_cpu_has_vector() &&
           gr_isa_status() == GEMM_RVV_OK;
}

gemm_rvv_status gemm_rvv_set_threads(int count)
{
    return gr_threads_set(count) == 0 ? GEMM_RVV_OK : GEMM_RVV_ERR_THREADS;
}

int gemm_rvv_get_threads(void) { return gr_threads_get(); }

void gemm_rvv_release_memory(void) { gr_scratch_trim(); }

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

/* What the column pieces of one call share: piece i computes columns [i * piece_cols, ...)
 * with scratch block i. */
struct call {
    size_t n, piece_cols;
    struct gr_scratch scratch;
    /* a plan's call */
    struct gr_drive drive;
    /* the fallback's call */
    const struct gr_weight_view *w;
    const float *x_f, *bias;
    size_t rows, ldy;
    void *y;
    int y_bf16;
};

static void drive_piece(void *ctx, size_t i)
{
    const struct call *c = ctx;
    size_t begin = i * c->piece_cols, end = begin + c->piece_cols;
    gr_drive_columns(&c->drive, begin, end < c->n ? end : c->n, c->scratch.block[i]);
}

static void fallback_piece(void *ctx, size_t i)
{
    const struct call *c = ctx;
    size_t begin = i * c->piece_cols, end = begin + c->piece_cols;
    gr_fallback(c->x_f, c->rows, c->w, c->bias, c->y, c->ldy, c->y_bf16, begin,
                end < c->n ? end : c->n, c->scratch.block[i + 1]);
}

/* Splits the columns into one piece of whole panels per thread; returns the piece count. */
static size_t split_columns(struct call *c, size_t panel_width)
{
    size_t panels = c->n / panel_width + (c->n % panel_width != 0);
    size_t pieces = (size_t)gr_threads_get();
    if (pieces > panels)
        pieces = panels;
    size_t per_piece = panels / pieces + (panels % pieces != 0);
    c->piece_cols = per_piece * panel_width;
    return panels / per_piece + (panels % per_piece != 0);
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

static void *row_of(void *y, size_t row, size_t ldy, int y_bf16)
{
    return y_bf16 ? (void *)((uint16_t *)y + row * ldy) : (void *)((float *)y + row * ldy);
}

/* A plan's call: every row block of plan->bucket rows over all the columns. */
static gemm_rvv_status run_plan(struct call *c, const struct gr_plan *plan, const uint16_t *x,
                                size_t m, size_t ldx, const struct gr_weight_view *w)
{
    size_t panel_width = w->packed ? w->panel_width : gr_panel_width();
    int share = forced_share >= 0 ? forced_share
                                  : gr_threads_get() > 1 ? GR_L2_SHARED : GR_L2_ALONE;
    struct gr_drive *d = &c->drive;
    /* The variant is chosen once per process: packed weights are in its layout. */
    gr_drive_init(d, plan, gr_isa_variant(), share, panel_width, w->packed != NULL);
    d->ldx = ldx;
    d->packed = w->packed;
    d->plain = w->plain;
    d->ldw = w->ldw;
    d->bias = c->bias;
    d->ldy = c->ldy;
    d->y_bf16 = c->y_bf16;
    size_t pieces = split_columns(c, panel_width);
    if (gr_scratch_take(&c->scratch, pieces, gr_drive_bytes(d)) != 0)
        return GEMM_RVV_ERR_NOMEM;
    for (size_t row = 0; row < m; row += plan->bucket) {
        d->x = x + row * ldx;
        d->rows = m - row < plan->bucket ? m - row : plan->bucket;
        d->y = row_of(c->y, row, c->ldy, c->y_bf16);
        gr_parallel_for(pieces, drive_piece, c);
    }
    gr_scratch_give_back(&c->scratch);
    return GEMM_RVV_OK;
}

/* The fallback's call: blocks of FALLBACK_BLOCK_ROWS rows, each widened once into the shared
 * scratch block 0, then its columns split over the threads (blocks 1 ..). */
static gemm_rvv_status run_fallback(struct call *c, const uint16_t *x, size_t m, size_t ldx,
                                    const struct gr_weight_view *w)
{
    size_t block = m < FALLBACK_BLOCK_ROWS ? m : FALLBACK_BLOCK_ROWS;
    size_t pieces = split_columns(c, w->packed ? w->panel_width : GR_FALLBACK_COLS * 16);
    if (gr_scratch_take(&c->scratch, 1, block * w->k * sizeof(float)) != 0 ||
        gr_scratch_take(&c->scratch, pieces, GR_FALLBACK_COLS * w->k * sizeof(float)) != 0) {
        gr_scratch_give_back(&c->scratch);
        return GEMM_RVV_ERR_NOMEM;
    }
    void *y = c->y;
    c->w = w;
    c->x_f = c->scratch.block[0];
    for (size_t row = 0; row < m; row += block) {
        c->rows = m - row < block ? m - row : block;
        gr_widen_rows(x + row * ldx, c->rows, ldx, w->k, c->scratch.block[0]);
        c->y = row_of(y, row, c->ldy, c->y_bf16);
        gr_parallel_for(pieces, fallback_piece, c);
    }
    gr_scratch_give_back(&c->scratch);
    return GEMM_RVV_OK;
}

static gemm_rvv_status run(const uint16_t *x, size_t m, size_t ldx,
                           const struct gr_weight_view *w, const struct gr_shape_plans *plans,
                           _Atomic(struct gr_counter *) *counter_cache, const float *bias,
                           void *y, size_t ldy, gemm_rvv_type y_type)
{
    const struct gr_plan *plan = NULL;
    if (plans->count > 0 && gemm_rvv_kernels_active())
        plan = gr_pick_plan(plans, m);
    struct gr_counter *counter = counter_of(counter_cache, w->n, w->k, m);
    if (counter)
        atomic_fetch_add(plan ? &counter->kernel_calls : &counter->fallback_calls, 1);

    struct call c;
    memset(&c, 0, sizeof c);
    c.n = w->n;
    c.bias = bias;
    c.y = y;
    c.ldy = ldy;
    c.y_bf16 = y_type == GEMM_RVV_BF16;
    return plan ? run_plan(&c, plan, x, m, ldx, w) : run_fallback(&c, x, m, ldx, w);
}

/* ---- the API ------------------------------------------------------------------------------ */

/* Fills the object's copy of W: packed for the kernels, or plain rows for the fallback. */
static void store_weights(struct gemm_rvv_weight *obj, const uint16_t *w, size_t ldw)
{
    if (obj->packed) {
        gr_pack(w, obj->n, obj->k, ldw, obj->panel_width, obj->layout, obj->packed);
        return;
    }
    for (size_t row = 0; row < obj->n; row++)
        memcpy(obj->plain + row * obj->k, w + row * ldw, obj->k * sizeof *w);
}

gemm_rvv_status gemm_rvv_weight_create(const uint16_t *w, int64_t n, int64_t k, int64_t ldw,
                                       gemm_rvv_weight **out)
{
    gemm_rvv_status s;
    if ((s = gr_isa_status()) != GEMM_RVV_OK)
        return s;
    if (!w || !out)
        return GEMM_RVV_ERR_NULL;
    if ((s = check_matrix(n, k, ldw, sizeof(uint16_t))) != GEMM_RVV_OK)
        return s;
    struct gemm_rvv_weight *obj = calloc(1, sizeof *obj);
    if (!obj)
        return GEMM_RVV_ERR_NOMEM;
    obj->n = (size_t)n;
    obj->k = (size_t)k;
    gr_find_plans(obj->n, obj->k, &obj->plans);
    if (obj->plans.count > 0 && gr_cpu_has_vector()) {
        obj->panel_width = gr_panel_width();
        obj->layout = gr_isa_variant()->layout;
        size_t words = gr_packed_words(obj->n, obj->k, obj->panel_width);
        if (words == 0) {
            free(obj);
            return GEMM_RVV_ERR_OVERFLOW;
        }
        obj->packed = gr_alloc_aligned(words * sizeof(uint32_t));
    } else {
        obj->plain = gr_alloc_aligned(obj->n * obj->k * sizeof(uint16_t));
    }
    int lock_ok = 0;
    pthread_rwlockattr_t attr;
    if ((obj->packed || obj->plain) && pthread_rwlockattr_init(&attr) == 0) {
#if defined(__GLIBC__) /* an enum constant there, not a macro */
        pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
#endif
        lock_ok = pthread_rwlock_init(&obj->lock, &attr) == 0;
        pthread_rwlockattr_destroy(&attr);
    }
    if (!lock_ok) {
        free(obj->packed);
        free(obj->plain);
        free(obj);
        return GEMM_RVV_ERR_NOMEM;
    }
    store_weights(obj, w, (size_t)ldw);
    for (size_t i = 0; i < sizeof obj->counters / sizeof obj->counters[0]; i++)
        atomic_init(&obj->counters[i], NULL);
    *out = obj;
    return GEMM_RVV_OK;
}

gemm_rvv_status gemm_rvv_weight_update(gemm_rvv_weight *weight, const uint16_t *w, int64_t ldw)
{
    if (gr_isa_status() != GEMM_RVV_OK)
        return gr_isa_status();
    if (!weight || !w)
        return GEMM_RVV_ERR_NULL;
    gemm_rvv_status s = check_matrix((int64_t)weight->n, (int64_t)weight->k, ldw,
                                     sizeof(uint16_t));
    if (s != GEMM_RVV_OK)
        return s;
    pthread_rwlock_wrlock(&weight->lock);
    store_weights(weight, w, (size_t)ldw);
    pthread_rwlock_unlock(&weight->lock);
    return GEMM_RVV_OK;
}

void gemm_rvv_weight_free(gemm_rvv_weight *weight)
{
    if (!weight)
        return;
    pthread_rwlock_destroy(&weight->lock);
    free(weight->packed);
    free(weight->plain);
    free(weight);
}

gemm_rvv_status gemm_rvv_linear(const uint16_t *x, int64_t m, int64_t ldx,
                                const gemm_rvv_weight *weight, const float *bias, void *y,
                                int64_t ldy, gemm_rvv_type y_type)
{
    if (gr_isa_status() != GEMM_RVV_OK)
        return gr_isa_status();
    if (!weight)
        return GEMM_RVV_ERR_NULL;
    gemm_rvv_status s = check_call(x, m, ldx, (int64_t)weight->n, (int64_t)weight->k, y, ldy,
                                   y_type);
    if (s != GEMM_RVV_OK)
        return s;
    struct gr_weight_view view = {weight->packed,       weight->layout, weight->panel_width,
                                  weight->plain,        weight->k,      weight->n,
                                  weight->k};
    pthread_rwlock_t *lock = (pthread_rwlock_t *)&weight->lock;
    pthread_rwlock_rdlock(lock);
    s = run(x, (size_t)m, (size_t)ldx, &view, &weight->plans,
            ((gemm_rvv_weight *)weight)->counters, bias, y, (size_t)ldy, y_type);
    pthread_rwlock_unlock(lock);
    return s;
}

gemm_rvv_status gemm_rvv_linear_plain(const uint16_t *x, int64_t m, int64_t ldx,
                                      const uint16_t *w, int64_t n, int64_t k, int64_t ldw,
                                      const float *bias, void *y, int64_t ldy,
                                      gemm_rvv_type y_type)
{
    if (gr_isa_status() != GEMM_RVV_OK)
        return gr_isa_status();
    if (!w)
        return GEMM_RVV_ERR_NULL;
    gemm_rvv_status s = check_call(x, m, ldx, n, k, y, ldy, y_type);
    if (s == GEMM_RVV_OK)
        s = check_matrix(n, k, ldw, sizeof(uint16_t));
    if (s != GEMM_RVV_OK)
        return s;
    struct gr_shape_plans plans;
    gr_find_plans((uint64_t)n, (uint64_t)k, &plans);
    struct gr_weight_view view = {NULL, 0, 0, w, (size_t)ldw, (size_t)n, (size_t)k};
    return run(x, (size_t)m, (size_t)ldx, &view, &plans, NULL, bias, y, (size_t)ldy, y_type);
}
