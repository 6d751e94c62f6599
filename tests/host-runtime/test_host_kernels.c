/* The plans of tests/host-runtime/shapes-host.yaml through runtime/driver.c with the host's
 * plain C tiles (templates/host/), under ThreadSanitizer and AddressSanitizer + UBSan: every
 * plan with its own blockings and with small ones of both orders (several K and column
 * blocks, K ending mid-pair, X read from its copy), both variants (weights in pairs and in
 * rows, activations FP32 and BF16), packed and plain weights, FP32 and BF16 outputs, with and
 * without bias, whole and in column pieces, each bit for bit against the scalar fallback;
 * then through the public API against reference.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "activations.h"
#include "cpu.h"
#include "dispatch.h"
#include "driver.h"
#include "fallback.h"
#include "gemm_rvv.h"
#include "gr_contract.h"
#include "isa.h"
#include "lines.h"
#include "pack.h"
#include "reference.h"
#include "scratch.h"
#include "testdata.h"

#define SENTINEL 0xa5u /* every byte of Y before a call: no computation writes it */

/* Under ThreadSanitizer (GCC's macro, clang's feature). */
#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif
#ifndef UNDER_TSAN
#define UNDER_TSAN 0
#endif

static const struct gr_variant *const variants[2] = {&gr_variant_base, &gr_variant_zvfbfwma};

/* One problem: X rows (ldx apart: a multiple of 256 elements, so blockings may copy X), W
 * plain and packed in both layouts, bias. */
struct problem {
    size_t m, n, k, ldx, ldw, ldy;
    uint16_t *x, *w;
    void *packed[2]; /* by enum gr_layout */
    float *bias;
};

static void *zalloc(size_t bytes)
{
    void *p = gr_alloc_aligned(bytes ? bytes : 1);
    assert_non_null(p);
    memset(p, 0, bytes ? bytes : 1);
    return p;
}

static struct problem problem_make(const struct gr_plan *e, size_t m, uint64_t seed)
{
    struct rng r = {seed * 0x9E3779B97F4A7C15ull + 1};
    struct problem p = {m, e->n, e->k, (e->k + 256) / 256 * 256, e->k + 3, e->n + 1,
                        NULL, NULL, {NULL, NULL}, NULL};
    p.x = zalloc(m * p.ldx * sizeof *p.x);
    p.w = zalloc(p.n * p.ldw * sizeof *p.w);
    p.bias = zalloc(p.n * sizeof *p.bias);
    fill_bf16(&r, p.x, m * p.ldx, seed % 3 == 0);
    fill_bf16(&r, p.w, p.n * p.ldw, 0);
    for (size_t j = 0; j < p.n; j++)
        p.bias[j] = (float)(rng_next(&r) % 64) / 8 - 4;
    const size_t pw = gr_panel_width();
    for (uint32_t layout = 0; layout < 2; layout++) {
        p.packed[layout] = zalloc(gr_packed_words(p.n, p.k, pw) * sizeof(uint32_t));
        gr_pack(p.w, p.n, p.k, p.ldw, pw, layout, p.packed[layout]);
    }
    return p;
}

static void problem_free(struct problem *p)
{
    free(p->x);
    free(p->w);
    free(p->bias);
    free(p->packed[0]);
    free(p->packed[1]);
}

/* Y's bytes for the problem (ldy elements per row of 4 or 2 bytes), filled with SENTINEL. */
static void *y_new(const struct problem *p, int y_bf16)
{
    size_t bytes = p->m * p->ldy * (y_bf16 ? 2 : 4);
    void *y = zalloc(bytes);
    memset(y, SENTINEL, bytes);
    return y;
}

static void *fallback_y(const struct problem *p, int y_bf16, const float *bias)
{
    void *y = y_new(p, y_bf16);
    float *x_f = zalloc(p->m * p->k * sizeof(float));
    float *col = zalloc(GR_FALLBACK_COLS * p->k * sizeof(float));
    gr_widen_rows(p->x, p->m, p->ldx, p->k, x_f);
    struct gr_weight_view w = {.plain = p->w, .ldw = p->ldw, .n = p->n, .k = p->k};
    gr_fallback(x_f, p->m, &w, bias, y, p->ldy, y_bf16, 0, p->n, col);
    free(x_f);
    free(col);
    return y;
}

/* The call of p's operands: packed weights in v's layout, or the plain ones. */
static struct gr_call call_of(const struct problem *p, const struct gr_variant *v, int packed,
                              const float *bias, void *y, int y_bf16)
{
    return (struct gr_call){.x = p->x, .m = p->m, .ldx = p->ldx,
                            .w = {.packed = packed ? p->packed[v->layout] : NULL,
                                  .layout = v->layout, .panel_width = gr_panel_width(),
                                  .plain = p->w, .ldw = p->ldw, .n = p->n, .k = p->k},
                            .bias = bias, .y = y, .ldy = p->ldy, .y_bf16 = y_bf16};
}

/* Columns [begin, end) through the driver; returns whether it read X from its copy. */
static int drive(const struct gr_plan *plan, const struct gr_variant *v, int share, int packed,
                 const struct problem *p, const float *bias, void *y, int y_bf16, size_t begin,
                 size_t end)
{
    const struct gr_call c = call_of(p, v, packed, bias, y, y_bf16);
    struct gr_drive d;
    gr_drive_init(&d, plan, v, share, &c);
    void *scratch = zalloc(gr_drive_bytes(&d));
    const struct gr_cols cols = {begin, end};
    gr_drive_columns(&d, cols, cols, scratch);
    free(scratch);
    return gr_drive_copies_x(&d, begin, end);
}

static size_t copies, runs;

/* plan's blockings for p, every variant, packed and plain, whole and in two column pieces. */
static void check_plan(const struct gr_plan *plan, const struct problem *p, int y_bf16,
                       const float *bias, const void *want)
{
    const size_t bytes = p->m * p->ldy * (y_bf16 ? 2 : 4), pw = gr_panel_width();
    const size_t cut = p->n > pw ? (p->n / 2 + pw - 1) / pw * pw : p->n;
    for (int run = 0; run < 8; run++) {
        const struct gr_variant *v = variants[run / 4];
        int packed = run / 2 % 2, share = run % 2;
        void *y = y_new(p, y_bf16);
        copies += (size_t)drive(plan, v, share, packed, p, bias, y, y_bf16, 0, p->n);
        if (memcmp(y, want, bytes) != 0)
            fail_msg("%s, variant %s, %s weights, share %d, M = %zu, %s%s: not the fallback's",
                     plan->name, v->name, packed ? "packed" : "plain", share, p->m,
                     y_bf16 ? "BF16" : "FP32", bias ? ", bias" : "");
        memset(y, SENTINEL, bytes);
        drive(plan, v, share, packed, p, bias, y, y_bf16, 0, cut);
        if (cut < p->n)
            drive(plan, v, share, packed, p, bias, y, y_bf16, cut, p->n);
        if (memcmp(y, want, bytes) != 0)
            fail_msg("%s, variant %s, %s weights, share %d, M = %zu: in pieces [0, %zu), "
                     "[%zu, %zu): not the fallback's", plan->name, v->name,
                     packed ? "packed" : "plain", share, p->m, cut, cut, p->n);
        free(y);
        runs += 2;
    }
}

/* Every plan with its own blockings and small ones that cut K into blocks of 8 and 16 and the
 * columns into single panels, copying X on any piece. One thread: nothing for ThreadSanitizer
 * to see, so it runs under AddressSanitizer + UBSan only. */
static void test_plans_against_fallback(void **state)
{
    (void)state;
    if (UNDER_TSAN)
        skip();
    assert_true(gemm_rvv_kernels_active());
    assert_true(gr_registry_count > 0);
    for (size_t i = 0; i < gr_registry_count; i++) {
        const struct gr_plan *e = gr_registry[i];
        if (e->format != GR_FORMAT_BF16) /* test_q8_0.c drives the Q8_0 plans */
            continue;
        struct gr_plan small = *e;
        small.blocking[GR_L2_ALONE] =
            (struct gr_blocking){.order = GR_ORDER_STRIPS, .k_block = 8, .col_block = 1,
                                 .x_copy_rows = 1, .x_copy_cols = 1, .x_copy_stride = 512,
                                 .x_copy_shared = 0, .col_rounds = 0};
        small.blocking[GR_L2_SHARED] =
            (struct gr_blocking){.order = GR_ORDER_TILES, .k_block = 16, .col_block = 1,
                                 .x_copy_rows = 1, .x_copy_cols = 1, .x_copy_stride = 512,
                                 .x_copy_shared = 0, .col_rounds = 0};
        small.plain[GR_L2_ALONE] = small.blocking[GR_L2_SHARED];
        small.plain[GR_L2_SHARED] = small.blocking[GR_L2_ALONE];
        /* Taken in turn over the plans: the bucket's rows or one fewer, FP32 or BF16 output,
         * bias or none. */
        size_t less = e->bucket > 1 ? i % 2 : 0;
        int y_bf16 = (int)(i / 2 % 2), with_bias = (int)(i / 4 % 2);
        struct problem p = problem_make(e, e->bucket - less, i);
        const float *bias = with_bias ? p.bias : NULL;
        void *want = fallback_y(&p, y_bf16, bias);
        check_plan(e, &p, y_bf16, bias, want);
        check_plan(&small, &p, y_bf16, bias, want);
        free(want);
        problem_free(&p);
    }
    print_message("%zu driver runs, %zu read X from its copy\n", runs, copies);
    assert_true(copies > 0);
}

/* A call of p through runtime/plan_call.c (the column split over the pool's threads) with the
 * plan given, packed weights in the process's variant's layout or plain ones. */
static void run_plan_call(const struct gr_plan *plan, const struct problem *p, int packed,
                          const float *bias, void *y, int y_bf16)
{
    const struct gr_call c = call_of(p, gr_isa_variant(), packed, bias, y, y_bf16);
    assert_int_equal(gr_run_plan(&c, plan), GEMM_RVV_OK);
}

/* Blockings whose calls copy X once for all their threads before the column loop and walk the
 * column blocks in rounds (x_copy_shared, col_rounds: the cluster's blockings of plans of 32
 * rows or more), and rounds without the copy, on 1, 2, 3, 4 and 8 threads, packed and plain:
 * each bit for bit the fallback's. K blocks of 8 and 16, single panels, any X stride; and the
 * plans' own cluster blockings. */
static void test_shared_copy_and_rounds(void **state)
{
    (void)state;
    static const int threads[] = {1, 2, 3, 4, 8};
    size_t tested = 0;
    for (size_t i = 0; i < gr_registry_count; i++) {
        const struct gr_plan *e = gr_registry[i];
        if (e->bucket < 32 || e->format != GR_FORMAT_BF16)
            continue;
        struct gr_plan shared = *e, rounds_only = *e;
        shared.blocking[GR_L2_ALONE] =
            (struct gr_blocking){.order = GR_ORDER_STRIPS, .k_block = 8, .col_block = 1,
                                 .x_copy_rows = 1, .x_copy_cols = 1, .x_copy_stride = 2,
                                 .x_copy_shared = 1, .col_rounds = 1};
        shared.blocking[GR_L2_SHARED] =
            (struct gr_blocking){.order = GR_ORDER_TILES, .k_block = 16, .col_block = 1,
                                 .x_copy_rows = 1, .x_copy_cols = 1, .x_copy_stride = 2,
                                 .x_copy_shared = 1, .col_rounds = 1};
        shared.plain[GR_L2_ALONE] = shared.blocking[GR_L2_SHARED];
        shared.plain[GR_L2_SHARED] = shared.blocking[GR_L2_ALONE];
        rounds_only.blocking[GR_L2_ALONE] =
            (struct gr_blocking){.order = GR_ORDER_TILES, .k_block = 8, .col_block = 1,
                                 .x_copy_rows = 0, .x_copy_cols = 1, .x_copy_stride = 2,
                                 .x_copy_shared = 0, .col_rounds = 1};
        rounds_only.blocking[GR_L2_SHARED] =
            (struct gr_blocking){.order = GR_ORDER_STRIPS, .k_block = 16, .col_block = 1,
                                 .x_copy_rows = 0, .x_copy_cols = 1, .x_copy_stride = 2,
                                 .x_copy_shared = 0, .col_rounds = 1};
        rounds_only.plain[GR_L2_ALONE] = rounds_only.blocking[GR_L2_SHARED];
        rounds_only.plain[GR_L2_SHARED] = rounds_only.blocking[GR_L2_ALONE];
        const struct gr_plan *plans[3] = {&shared, &rounds_only, e};
        size_t less = i % 2;
        int y_bf16 = (int)(i / 2 % 2);
        struct problem p = problem_make(e, e->bucket - less, 300 + i);
        const float *bias = i / 4 % 2 ? p.bias : NULL;
        /* Y's rows a whole number of lines apart and off their lines (the lines column blocks
         * share, written once by the later block), or as problem_make leaves them */
        const size_t y_off = (size_t[]){16, 4, 0}[i % 3];
        if (y_off)
            p.ldy = (p.n + 32) / 32 * 32;
        void *want = fallback_y(&p, y_bf16, bias);
        const size_t bytes = p.m * p.ldy * (y_bf16 ? 2 : 4);
        for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
            if (UNDER_TSAN && threads[t] == 1)
                continue; /* one thread: nothing for ThreadSanitizer to see */
            assert_int_equal(gemm_rvv_set_threads(threads[t]), GEMM_RVV_OK);
            for (int run = 0; run < 6; run++) {
                char *base = zalloc(bytes + y_off);
                void *y = base + y_off;
                memset(y, SENTINEL, bytes);
                run_plan_call(plans[run / 2], &p, run % 2, bias, y, y_bf16);
                if (memcmp(y, want, bytes) != 0)
                    fail_msg("%s, %s blocking, %s weights, %d threads, M = %zu, Y %zu bytes "
                             "past a line: not the fallback's", e->name,
                             run / 2 == 0 ? "shared copy" : run / 2 == 1 ? "rounds" : "its own",
                             run % 2 ? "packed" : "plain", threads[t], p.m, y_off);
                free(base);
                tested++;
            }
        }
        free(want);
        problem_free(&p);
    }
    print_message("%zu calls with a shared copy of X or in rounds\n", tested);
    assert_true(tested > 0);
}

/* Whether the build has a plan of the given bucket for e's (N, K). */
static int has_bucket(const struct gr_plan *e, unsigned bucket)
{
    for (size_t i = 0; i < gr_registry_count; i++)
        if (gr_registry[i]->n == e->n && gr_registry[i]->k == e->k &&
            gr_registry[i]->format == e->format && gr_registry[i]->bucket == bucket)
            return 1;
    return 0;
}

/* The public calls pick the plan for M (row blocks past the largest bucket) and split the
 * columns over threads: their results are reference.c's. */
static void test_api_against_reference(void **state)
{
    (void)state;
    static const size_t ms[] = {1, 3, 33, 130};
    assert_int_equal(gemm_rvv_set_threads(3), GEMM_RVV_OK);
    gemm_rvv_counters_reset();
    size_t served = 0;
    for (size_t i = 0; i < gr_registry_count; i++) {
        const struct gr_plan *e = gr_registry[i];
        /* one BF16 (N, K) at a time, planned to 128 */
        if (e->format != GR_FORMAT_BF16 || e->bucket != 1 || !has_bucket(e, 128))
            continue;
        for (size_t j = 0; j < sizeof ms / sizeof ms[0]; j++) {
            struct problem p = problem_make(e, ms[j], 100 + i + j);
            float *want = zalloc(p.m * p.ldy * sizeof(float));
            ref_linear_f32(p.x, p.m, p.ldx, p.w, p.n, p.k, p.ldw, p.bias, want, p.ldy);
            gemm_rvv_weight *wt;
            assert_int_equal(gemm_rvv_weight_create(p.w, (int64_t)p.n, (int64_t)p.k,
                                                    (int64_t)p.ldw, &wt), GEMM_RVV_OK);
            for (int plain = 0; plain < 2; plain++) {
                float *y = y_new(&p, 0);
                gemm_rvv_status s =
                    plain ? gemm_rvv_linear_plain(p.x, (int64_t)p.m, (int64_t)p.ldx, p.w,
                                                  (int64_t)p.n, (int64_t)p.k, (int64_t)p.ldw,
                                                  p.bias, y, (int64_t)p.ldy, GEMM_RVV_F32)
                          : gemm_rvv_linear(p.x, (int64_t)p.m, (int64_t)p.ldx, wt, p.bias, y,
                                            (int64_t)p.ldy, GEMM_RVV_F32);
                assert_int_equal(s, GEMM_RVV_OK);
                for (size_t r = 0; r < p.m; r++)
                    if (memcmp(y + r * p.ldy, want + r * p.ldy, p.n * sizeof(float)) != 0)
                        fail_msg("N = %zu, K = %zu, M = %zu, %s weights: row %zu is not the "
                                 "reference's", p.n, p.k, p.m, plain ? "plain" : "packed", r);
                free(y);
                served++;
            }
            gemm_rvv_weight_free(wt);
            free(want);
            problem_free(&p);
        }
    }
    /* The calls went to the plans, not to the fallback. */
    gemm_rvv_counter rows[64];
    size_t count = gemm_rvv_counters(rows, 64);
    uint64_t kernel = 0, fallback = 0;
    for (size_t i = 0; i < count && i < 64; i++) {
        kernel += rows[i].kernel_calls;
        fallback += rows[i].fallback_calls;
    }
    assert_int_equal(kernel, served);
    assert_int_equal(fallback, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plans_against_fallback),
        cmocka_unit_test(test_api_against_reference),
        cmocka_unit_test(test_shared_copy_and_rounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
