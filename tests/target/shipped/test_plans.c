/* The plans a shipped shapes file (shapes.yaml, the files of models/) generates, with their real K,
 * tiles and K blocks, both blockings, packed and plain weights, the tiles of every ISA variant
 * the core runs, against the scalar fallback
 * bit for bit and an FP64 reference within the bound of an in-order FP32 sum. Linked once per
 * shipped file against a library generated from it. Emulation is slow, so each plan runs on
 * a slice of its columns (a panel and a tail strip: every strip width and remainder kind) and
 * on 2R - 1 rows (R the tile's rows, within the bucket): one full row tile and one of every
 * row but one, so both kinds of tile run. Which rows there are does not change the loops.
 * The slice is wider at a larger VLEN (a panel is VLEN / 4 columns); its first DIGEST_COLS
 * columns hold the same data at every VLEN, and the digest is theirs. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "activations.h"
#include "bf16.h"
#include "cpu.h"
#include "drive_once.h"
#include "fallback.h"
#include "gr_contract.h"
#include "pack.h"
#include "testdata.h"

struct slice {
    const struct gr_plan *plan;
    size_t m, cols, ldx, ldw, ldy, panel_width;
    uint16_t *x, *w;
    uint32_t *packed[2]; /* by enum gr_layout */
    float *bias;
};

/* A slice is a panel and TAIL_COLS columns; at VLEN 128, the least, a panel is 32 columns. */
#define TAIL_COLS 3
#define DIGEST_COLS (32 + TAIL_COLS)

static struct slice slice_make(const struct gr_plan *plan, size_t m, uint64_t seed)
{
    /* The bias from a stream of its own, so that column j's data is the same at every VLEN. */
    struct rng r = {seed}, r_bias = {~seed};
    struct slice s = {plan, m, 0, plan->k + 1, plan->k + 2, 0, gr_panel_width(), NULL, NULL,
                      {NULL, NULL}, NULL};
    s.cols = plan->n < s.panel_width + TAIL_COLS ? plan->n : s.panel_width + TAIL_COLS;
    s.ldy = s.cols + 1;
    s.x = malloc(m * s.ldx * sizeof *s.x);
    s.w = malloc(s.cols * s.ldw * sizeof *s.w);
    for (int layout = 0; layout < 2; layout++) {
        s.packed[layout] = malloc(gr_packed_words(s.cols, plan->k, s.panel_width) * 4);
        assert_non_null(s.packed[layout]);
    }
    s.bias = malloc(s.cols * sizeof *s.bias);
    assert_non_null(s.x);
    assert_non_null(s.w);
    assert_non_null(s.bias);
    fill_bf16(&r, s.x, m * s.ldx, 0);
    fill_bf16(&r, s.w, s.cols * s.ldw, 0);
    for (size_t j = 0; j < s.cols; j++)
        s.bias[j] = gr_bf16_to_f32(rng_bf16(&r_bias));
    /* The slice's columns are the first of the plan's N: pack them as a weight of N = cols. */
    for (uint32_t layout = 0; layout < 2; layout++)
        gr_pack(s.w, s.cols, plan->k, s.ldw, s.panel_width, layout, s.packed[layout]);
    return s;
}

static void slice_free(struct slice *s)
{
    free(s->x);
    free(s->w);
    free(s->packed[0]);
    free(s->packed[1]);
    free(s->bias);
}

static float *run_plan(const struct slice *s, const struct gr_variant *isa, int packed,
                       int share)
{
    float *y = calloc(s->m * s->ldy, sizeof *y);
    assert_non_null(y);
    const struct gr_call c = {.x = s->x, .m = s->m, .ldx = s->ldx,
                              .w = {.packed = packed ? s->packed[isa->layout] : NULL,
                                    .layout = isa->layout, .panel_width = s->panel_width,
                                    .plain = s->w, .ldw = s->ldw, .n = s->cols,
                                    .k = s->plan->k},
                              .bias = s->bias, .y = y, .ldy = s->ldy};
    drive_once(s->plan, isa, share, &c, 0, s->cols);
    return y;
}

static float *run_fallback(const struct slice *s)
{
    const size_t k = s->plan->k;
    struct gr_weight_view view = {.plain = s->w, .ldw = s->ldw, .n = s->cols, .k = k};
    float *rows = malloc(s->m * k * sizeof *rows), *col = malloc(GR_FALLBACK_COLS * k * 4);
    float *y = calloc(s->m * s->ldy, sizeof *y);
    assert_non_null(rows);
    assert_non_null(col);
    assert_non_null(y);
    gr_widen_rows(s->x, s->m, s->ldx, k, rows);
    gr_fallback(rows, s->m, &view, s->bias, y, s->ldy, 0, 0, s->cols, col);
    free(rows);
    free(col);
    return y;
}

static uint64_t outputs_digest = DIGEST_INIT; /* the kernels' outputs equal these bit for bit */

static void check_slice(const struct slice *s)
{
    const size_t k = s->plan->k;
    float *want = run_fallback(s);
    const size_t digest_cols = s->cols < DIGEST_COLS ? s->cols : DIGEST_COLS;
    for (size_t i = 0; i < s->m; i++)
        outputs_digest = digest_add(outputs_digest, want + i * s->ldy, digest_cols * sizeof *want);
    for (size_t i = 0; i < s->m; i += s->m > 1 ? s->m - 1 : 1)
        for (size_t j = 0; j < s->cols; j += 7) {
            double abs_sum, ref = ref_dot(s->x + i * s->ldx, s->w + j * s->ldw, k, &abs_sum);
            ref += s->bias[j];
            double bound = sum_error_bound(k, abs_sum) + fabs(ref) * 0x1p-24;
            if (!(fabs(want[i * s->ldy + j] - ref) <= bound))
                fail_msg("%s: fallback y[%zu][%zu] = %.9g, FP64 %.9g, bound %.3g",
                         s->plan->name, i, j, want[i * s->ldy + j], ref, bound);
        }
    const struct gr_variant *isa[2];
    size_t variants = runnable_variants(isa);
    for (size_t run = 0; run < 4 * variants; run++) {
        int packed = run / 2 % 2, share = run % 2;
        float *got = run_plan(s, isa[run / 4], packed, share);
        for (size_t i = 0; i < s->m * s->ldy; i++)
            if (memcmp(&got[i], &want[i], sizeof got[i]) != 0)
                fail_msg("%s %s %s, %s tiles, M=%zu: y[%zu][%zu] = %a, fallback %a",
                         s->plan->name, packed ? "packed" : "plain",
                         share ? "shared L2" : "alone", isa[run / 4]->name, s->m, i / s->ldy,
                         i % s->ldy, (double)got[i], (double)want[i]);
        free(got);
    }
    free(want);
}

static void test_every_plan(void **state)
{
    (void)state;
    size_t cases = 0;
    for (size_t i = 0; i < gr_registry_count; i++) {
        const struct gr_plan *plan = gr_registry[i];
        if (plan->format != GR_FORMAT_BF16) /* tests/target/test_q8_0.c drives Q8_0 plans */
            continue;
        size_t m = 2 * (size_t)plan->tile_rows - 1;
        struct slice s = slice_make(plan, m < plan->bucket ? m : plan->bucket, 0x5eed + i * 17);
        check_slice(&s);
        slice_free(&s);
        cases++;
    }
    print_message("%zu plans, %zu cases\n", gr_registry_count, cases);
    /* A shapes file none of whose shapes gets a plan has nothing to test here. */
    assert_true(cases > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_every_plan)};
    int failed = cmocka_run_group_tests_name("shipped plans", tests, NULL, NULL);
    digest_print("outputs", outputs_digest);
    return failed;
}
