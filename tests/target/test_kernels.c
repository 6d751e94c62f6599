/* Every generated plan of the test shapes, driven through runtime/driver.c with both of its
 * blockings and the tiles of every ISA variant the core runs (base; Zvfbfwma where the core
 * has it), against the scalar fallback (bit for bit) and an FP64 reference (within the error
 * bound of an in-order FP32 sum), for packed and plain weights, both output types, with and
 * without bias, on random data, special values and tails. Run under QEMU at several vector
 * lengths by `make test`. */
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
#include "driver.h"
#include "fallback.h"
#include "gr_contract.h"
#include "lines.h"
#include "pack.h"
#include "row_steps.h"
#include "testdata.h"

/* The M values the test shapes list; each kernel is run at those its bucket serves. */
static const size_t test_ms[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17,
                                 31, 64, 127, 128};

/* Above this many weights a kernel runs at its largest M only. */
#define BIG_WEIGHT (1u << 20)

#define Y_SENTINEL_F32 0x7fa5a5a5u
#define Y_SENTINEL_BF16 0xa5a5u

/* The kinds of output, taken in turn so that every kernel sees several. */
struct output_kind {
    int y_bf16;
    int bias;
};
static const struct output_kind kinds[] = {{0, 0}, {1, 1}, {0, 1}, {1, 0}};

/* The ISA variants this core runs. */
static const struct gr_variant *isa_variants[2];
static size_t isa_variant_count;

/* One problem: inputs, packed weights in each layout, widened activations. Strides are wider than the rows,
 * so that a kernel that ignores a stride fails. W's rows start on 4-byte boundaries or not
 * (ldw and the start vary): plain kernels read aligned rows two weights at a time. */
struct problem {
    size_t m, n, k, ldx, ldw, ldy, bucket;
    uint16_t *x, *w, *w_alloc;
    uint32_t *packed[2]; /* by enum gr_layout */
    size_t panel_width;
    float *bias, *col;
};

static void problem_pack(struct problem *p)
{
    for (uint32_t layout = 0; layout < 2; layout++)
        gr_pack(p->w, p->n, p->k, p->ldw, p->panel_width, layout, p->packed[layout]);
}

/* A problem whose X rows are ldx apart. */
static struct problem problem_make_ldx(const struct gr_plan *e, size_t m, struct rng *r,
                                       int specials, size_t ldx)
{
    struct problem p = {0};
    p.m = m;
    p.n = e->n;
    p.k = e->k;
    uint64_t layout = rng_next(r);
    p.ldx = ldx;
    p.ldw = p.k + 1 + (layout & 1);
    p.ldy = p.n + 2;
    p.bucket = e->bucket;
    p.panel_width = gr_panel_width();
    p.x = calloc(m * p.ldx, sizeof *p.x);
    p.w_alloc = calloc(p.n * p.ldw + 1, sizeof *p.w);
    p.w = p.w_alloc + (layout >> 1 & 1);
    for (int layout = 0; layout < 2; layout++) {
        p.packed[layout] = calloc(gr_packed_words(p.n, p.k, p.panel_width), sizeof(uint32_t));
        assert_non_null(p.packed[layout]);
    }
    p.bias = calloc(p.n, sizeof *p.bias);
    p.col = calloc(GR_FALLBACK_COLS * p.k, sizeof *p.col);
    assert_non_null(p.x);
    assert_non_null(p.w_alloc);
    assert_non_null(p.bias);
    assert_non_null(p.col);
    for (size_t i = 0; i < m; i++)
        fill_bf16(r, p.x + i * p.ldx, p.k, specials);
    for (size_t i = 0; i < p.n; i++)
        fill_bf16(r, p.w + i * p.ldw, p.k, specials);
    for (size_t i = 0; i < p.n; i++)
        p.bias[i] = gr_bf16_to_f32(rng_bf16(r));
    problem_pack(&p);
    return p;
}

static struct problem problem_make(const struct gr_plan *e, size_t m, struct rng *r,
                                   int specials)
{
    return problem_make_ldx(e, m, r, specials, e->k + 3);
}

static void problem_free(struct problem *p)
{
    free(p->x);
    free(p->w_alloc);
    free(p->packed[0]);
    free(p->packed[1]);
    free(p->bias);
    free(p->col);
}

/* An output buffer of m + 1 rows filled with a sentinel: row m and the columns past n must
 * come back untouched. */
static void *y_alloc(const struct problem *p, int y_bf16)
{
    size_t count = (p->m + 1) * p->ldy;
    if (y_bf16) {
        uint16_t *y = malloc(count * sizeof *y);
        assert_non_null(y);
        for (size_t i = 0; i < count; i++)
            y[i] = Y_SENTINEL_BF16;
        return y;
    }
    uint32_t *y = malloc(count * sizeof *y);
    assert_non_null(y);
    for (size_t i = 0; i < count; i++)
        y[i] = Y_SENTINEL_F32;
    return y;
}

/* y_alloc's buffer y_off bytes past a line (a multiple of the element); *base is what to free. */
static void *y_alloc_at(const struct problem *p, int y_bf16, size_t y_off, void **base)
{
    size_t bytes = (p->m + 1) * p->ldy * (y_bf16 ? 2 : 4);
    char *b = aligned_alloc(GR_LINE_BYTES, (bytes + 2 * GR_LINE_BYTES) / GR_LINE_BYTES * GR_LINE_BYTES);
    void *filled = y_alloc(p, y_bf16);
    assert_non_null(b);
    memcpy(b + y_off, filled, bytes);
    free(filled);
    *base = b;
    return b + y_off;
}

/* Y's rows a whole number of lines apart, wider than its columns, so that every row of Y has
 * the same offset into its line, as the driver's rule for Y's lines takes them. */
static void problem_y_lines(struct problem *p)
{
    const size_t line = GR_LINE_BYTES / sizeof(uint16_t);
    p->ldy = (p->n + line) / line * line;
}

static uint32_t y_bits(const void *y, int y_bf16, size_t i)
{
    return y_bf16 ? ((const uint16_t *)y)[i] : ((const uint32_t *)y)[i];
}

/* The call of p's operands: its packed weights in the variant's layout, or its plain ones. */
static struct gr_call call_of(const struct problem *p, const struct gr_variant *isa, int packed,
                              struct output_kind v, void *y)
{
    return (struct gr_call){.x = p->x, .m = p->m, .ldx = p->ldx,
                            .w = {.packed = packed ? p->packed[isa->layout] : NULL,
                                  .layout = isa->layout, .panel_width = p->panel_width,
                                  .plain = p->w, .ldw = p->ldw, .n = p->n, .k = p->k},
                            .bias = v.bias ? p->bias : NULL, .y = y, .ldy = p->ldy,
                            .y_bf16 = v.y_bf16};
}

/* The plan's loops over the columns [col_begin, col_end) with the variant's tiles and the
 * blocking of L2 share `share`, on packed or plain weights. */
static int run_kernel(const struct problem *p, const struct gr_plan *plan,
                      const struct gr_variant *isa, int packed, int share, struct output_kind v,
                      void *y, size_t col_begin, size_t col_end)
{
    const struct gr_call c = call_of(p, isa, packed, v, y);
    return drive_once(plan, isa, share, &c, col_begin, col_end);
}

/* The same over all columns, and over more rows than the plan's bucket in row blocks, as
 * plan_call.c runs them (on one thread). */
static void run_call(const struct problem *p, const struct gr_plan *plan,
                     const struct gr_variant *isa, int packed, int share, struct output_kind v,
                     void *y)
{
    const struct gr_call c = call_of(p, isa, packed, v, y);
    if (p->m <= plan->bucket)
        drive_once(plan, isa, share, &c, 0, p->n);
    else
        drive_pieces(plan, isa, share, &c, 1);
}

static void run_fallback(const struct problem *p, struct output_kind v, void *y)
{
    struct gr_weight_view view = {.plain = p->w, .ldw = p->ldw, .n = p->n, .k = p->k};
    float *rows = malloc(p->m * p->k * sizeof *rows);
    assert_non_null(rows);
    gr_widen_rows(p->x, p->m, p->ldx, p->k, rows);
    gr_fallback(rows, p->m, &view, v.bias ? p->bias : NULL, y, p->ldy, v.y_bf16, 0, p->n,
                p->col);
    free(rows);
}

/* Every element of got equals expected, bit for bit, sentinels included. */
static void expect_same(const char *what, const struct gr_plan *e, const struct gr_variant *isa,
                        const struct problem *p, struct output_kind v, const void *got,
                        const void *expected)
{
    size_t count = (p->m + 1) * p->ldy;
    for (size_t i = 0; i < count; i++) {
        uint32_t g = y_bits(got, v.y_bf16, i), x = y_bits(expected, v.y_bf16, i);
        if (g != x)
            fail_msg("%s %s, %s tiles: M=%zu %s%s: y[%zu][%zu] = 0x%08x, fallback 0x%08x",
                     e->name, what, isa->name, p->m, v.y_bf16 ? "bf16" : "f32",
                     v.bias ? "+bias" : "", i / p->ldy, i % p->ldy, g, x);
    }
}

/* The fallback's results against the FP64 reference: the first and last rows, and at most
 * about 256 columns of each, spread over N (the reference costs as much as the fallback). */
static void expect_near_reference(const struct gr_plan *e, const struct problem *p,
                                  struct output_kind v, const void *y)
{
    size_t col_step = p->n / 256 + 1;
    for (size_t i = 0; i < p->m; i += (p->m > 1 ? p->m - 1 : 1)) {
        for (size_t j = 0; j < p->n; j += col_step) {
            double abs_sum;
            double ref = ref_dot(p->x + i * p->ldx, p->w + j * p->ldw, p->k, &abs_sum);
            double want = ref + (v.bias ? p->bias[j] : 0.0);
            double bound = sum_error_bound(p->k, abs_sum) + fabs(want) * 0x1p-24;
            double got = v.y_bf16 ? gr_bf16_to_f32(((const uint16_t *)y)[i * p->ldy + j])
                                  : ((const float *)y)[i * p->ldy + j];
            if (v.y_bf16)
                bound = bound * 1.01 + fabs(want) * 0x1p-8;
            if (!(fabs(got - want) <= bound))
                fail_msg("%s: M=%zu y[%zu][%zu] = %.9g, FP64 reference %.9g, bound %.3g",
                         e->name, p->m, i, j, got, want, bound);
        }
    }
}

/* The output bits of every case, sentinels included (the kernels' equal the fallback's). */
static uint64_t outputs_digest = DIGEST_INIT;

/* One kernel at one M: fallback, packed and plain kernels of every variant, compared. */
static void check_case(const struct gr_plan *e, size_t m, struct output_kind v,
                       int specials, uint64_t seed)
{
    struct rng r = {seed};
    struct problem p = problem_make(e, m, &r, specials);
    void *expected = y_alloc(&p, v.y_bf16), *got = y_alloc(&p, v.y_bf16);

    run_fallback(&p, v, expected);
    outputs_digest = digest_add(outputs_digest, expected, (p.m + 1) * p.ldy * (v.y_bf16 ? 2 : 4));
    if (!specials)
        expect_near_reference(e, &p, v, expected);
    /* Packed weights with both blockings; plain weights with one of them, in turn. */
    static const char *const what[2][2] = {{"plain, alone", "plain, shared L2"},
                                           {"packed, alone", "packed, shared L2"}};
    static const int runs[3][2] = {{1, 0}, {1, 1}, {0, -1}};
    for (size_t iv = 0; iv < isa_variant_count; iv++) {
        for (int i = 0; i < 3; i++) {
            int packed = runs[i][0], share = runs[i][1] >= 0 ? runs[i][1] : (int)(seed & 1);
            free(got);
            got = y_alloc(&p, v.y_bf16);
            run_call(&p, e, isa_variants[iv], packed, share, v, got);
            expect_same(what[packed][share], e, isa_variants[iv], &p, v, got, expected);
        }
    }

    free(expected);
    free(got);
    problem_free(&p);
}

static size_t lower_bucket(const struct gr_plan *e)
{
    /* The registry is sorted by (n, k, format, bucket): the entry before serves the smaller Ms. */
    size_t i = 0;
    while (gr_registry[i] != e)
        i++;
    if (e->bucket == 1)
        return 0;
    if (i > 0 && gr_registry[i - 1]->n == e->n && gr_registry[i - 1]->k == e->k &&
        gr_registry[i - 1]->format == e->format)
        return gr_registry[i - 1]->bucket;
    return 1;
}

/* Whether plan i (e) runs at test_ms[t] in this tier. The full tier takes every listed M of the
 * bucket, a big shape its largest only (smaller shapes cover the remainder rows; emulation is
 * slow). The quick tier (GEMM_RVV_TEST_TIER=quick) takes one M a plan, in turn over the plans
 * the bucket's smallest or largest listed M, and leaves big shapes to the full tier (the
 * shipped plans' tests run real sizes in both tiers). */
static int quick_tier(void)
{
    const char *tier = getenv("GEMM_RVV_TEST_TIER");
    return tier && strcmp(tier, "quick") == 0;
}

/* The quick tier runs the driver's placement rules (test_shared_x, test_misaligned_starts)
 * with the base tiles only (at VLEN 128 in tests/matrix.txt: the narrowest panels, the most
 * lines column blocks share): the rules are the driver's; the full tier runs them with every
 * variant at every VLEN. */
static int driver_rules_here(void)
{
    return !quick_tier() || isa_variants[0] == &gr_variant_base;
}

static int runs_at(size_t i, const struct gr_plan *e, size_t lo, size_t t)
{
    int quick = quick_tier(), big = e->n * e->k > BIG_WEIGHT;
    size_t m = test_ms[t];
    int smallest = t == 0 || test_ms[t - 1] <= lo;
    if (m <= lo || m > e->bucket)
        return 0;
    if (quick)
        return !big && (i % 2 ? m == e->bucket : smallest);
    return !big || m == e->bucket;
}

static void test_random_inputs(void **state)
{
    (void)state;
    size_t cases = 0;
    for (size_t i = 0; i < gr_registry_count; i++) {
        const struct gr_plan *e = gr_registry[i];
        if (e->format != GR_FORMAT_BF16) /* test_q8_0.c drives the Q8_0 plans */
            continue;
        size_t lo = lower_bucket(e);
        for (size_t t = 0; t < sizeof test_ms / sizeof test_ms[0]; t++) {
            size_t m = test_ms[t];
            if (!runs_at(i, e, lo, t))
                continue;
            check_case(e, m, kinds[cases % 4], 0, 0x9E3779B97F4A7C15ull + i * 131 + m);
            cases++;
        }
    }
    assert_true(cases > 0);
    print_message("%zu shape keys, %zu (shape key, M) cases\n", gr_registry_count, cases);
}

/* A row tile of fewer rows than the plan's (a call's only one, or a row block's last) runs at
 * its row_tile_lmul, on wider strips over the same panels: for calls of 1 .. 2 tiles' rows
 * the driver takes each row tile's tile and strips of that LMUL and loops over strips of the
 * widest, and the outputs are the fallback's bits (tails included) where a call runs a tile
 * wider than the plan's (1 row at LMUL 8, 2 .. 5 at LMUL 4 on an 8x2 plan; 8 + 3 = 11 rows
 * is an 8x2 and a 3x4 tile). Every plan below a big weight, the bits of each call that runs a
 * wider tile of rows not yet checked alone (one row tile) or beside others (several); the
 * quick tier one plan in four, its calls of 1 and 2 rows and its first of several tiles. */
static void test_row_tile_calls(void **state)
{
    (void)state;
    size_t cases = 0, plans = 0;
    for (size_t i = 0; i < gr_registry_count; i++) {
        const struct gr_plan *e = gr_registry[i];
        if (e->format != GR_FORMAT_BF16 || e->n * e->k > BIG_WEIGHT)
            continue;
        if (quick_tier() && plans++ % 4)
            continue;
        /* the row counts whose wider tiles matched the fallback: alone, beside others */
        uint32_t checked[2] = {0, 0};
        int two_tiles = 0;
        for (size_t m = 1; m <= 2 * (size_t)e->tile_rows; m++) {
            const uint32_t tiles = gr_row_tiles(m, e->bucket, e->tile_rows, e->tile_rows_least);
            uint32_t wider = 0;
            struct rng r = {0xC2B2AE3D27D4EB4Full + i * 31 + m};
            struct problem p = problem_make(e, m, &r, 0);
            for (size_t iv = 0; iv < isa_variant_count; iv++) {
                const struct gr_variant *isa = isa_variants[iv];
                const struct gr_call c = call_of(&p, isa, 1, kinds[0], NULL);
                struct gr_drive d;
                gr_drive_init(&d, e, isa, GR_L2_ALONE, &c);
                size_t widest = 0;
                for (uint32_t rows = 1; rows <= e->tile_rows; rows++) {
                    if (!(tiles >> (rows - 1) & 1))
                        continue;
                    const uint32_t lmul = e->row_tile_lmul[rows - 1];
                    assert_true(lmul == 1 || lmul == 2 || lmul == 4 || lmul == 8);
                    if (rows == e->tile_rows)
                        assert_int_equal(lmul, e->lmul);
                    assert_non_null(isa->tiles[__builtin_ctz(lmul)]);
                    assert_ptr_equal(d.tile[rows - 1], isa->tiles[__builtin_ctz(lmul)][rows - 1]);
                    assert_non_null(d.tile[rows - 1]);
                    const size_t cols = isa->vlenb() / sizeof(float) * lmul;
                    assert_int_equal(d.tile_cols[rows - 1], cols);
                    widest = cols > widest ? cols : widest;
                    if (lmul > e->lmul)
                        wider |= 1u << (rows - 1);
                }
                assert_int_equal(d.strip, widest);
            }
            problem_free(&p);
            const int several = m > e->tile_rows;
            if (!(wider & ~checked[several]) ||
                (quick_tier() && (several ? two_tiles++ : m > 2)))
                continue; /* none wider, or checked: test_random_inputs' runs */
            check_case(e, m, kinds[(cases + i) % 4], 0, 0xD1B54A32D192ED03ull + i * 131 + m);
            checked[several] |= wider;
            cases++;
        }
    }
    assert_true(cases > 0);
    print_message("%zu (plan, M) cases of row tiles on wider strips\n", cases);
}

/* Special values (the emulator's slow path for every FP operation on them) in every plan: the
 * full tier with each output kind, the quick tier with one, in turn over the plans. */
static void test_special_values(void **state)
{
    (void)state;
    size_t cases = 0, kinds_per_plan = quick_tier() ? 1 : 4;
    for (size_t i = 0; i < gr_registry_count; i++) {
        const struct gr_plan *e = gr_registry[i];
        if (e->format != GR_FORMAT_BF16) /* test_q8_0.c drives the Q8_0 plans */
            continue;
        if (e->n * e->k > 40000)
            continue;
        for (size_t j = 0; j < kinds_per_plan; j++) {
            size_t v = (i + j) % 4;
            check_case(e, e->bucket, kinds[v], 1, 0xD1B54A32D192ED03ull + i * 7 + v);
            cases++;
        }
    }
    assert_true(cases > 0);
    print_message("%zu (shape key, output kind) cases with special values\n", cases);
}

/* All products -0: the sum is -0 (it starts from -0.0, which keeps every product's bits). */
static void test_negative_zero(void **state)
{
    (void)state;
    for (size_t i = 0; i < gr_registry_count; i++) {
        const struct gr_plan *e = gr_registry[i];
        if (e->format != GR_FORMAT_BF16) /* test_q8_0.c drives the Q8_0 plans */
            continue;
        if (e->n * e->k > 40000)
            continue;
        struct rng r = {42 + i};
        struct problem p = problem_make(e, e->bucket, &r, 0);
        for (size_t j = 0; j < p.m * p.ldx; j++)
            p.x[j] = 0x8000; /* -0 */
        for (size_t j = 0; j < p.n * p.ldw; j++)
            p.w[j] = 0x3f80; /* +1 */
        problem_pack(&p);
        for (int run = 0; run < 2 * (int)isa_variant_count; run++) {
            const struct gr_variant *isa = isa_variants[run / 2];
            int packed = run % 2;
            struct output_kind v = {0, 0};
            uint32_t *y = y_alloc(&p, 0);
            run_kernel(&p, e, isa, packed, packed, v, y, 0, p.n);
            for (size_t row = 0; row < p.m; row++)
                for (size_t col = 0; col < p.n; col++)
                    if (y[row * p.ldy + col] != 0x80000000u)
                        fail_msg("%s %s, %s tiles: y[%zu][%zu] = 0x%08x, want -0 (0x80000000)",
                                 e->name, packed ? "packed" : "plain", isa->name, row, col,
                                 y[row * p.ldy + col]);
            free(y);
        }
        problem_free(&p);
    }
}

/* BF16 output rounding, through K = 1 kernels: with X = +0 each output is exactly its bias,
 * so chosen FP32 values reach the rounding step. Expected values are worked out by hand. */
static void test_bf16_rounding(void **state)
{
    (void)state;
    static const struct { uint32_t in; uint16_t out; } cases[] = {
        {0x3f808000u, 0x3f80}, /* tie, even below: down */
        {0x3f818000u, 0x3f82}, /* tie, odd below: up */
        {0x3f808001u, 0x3f81}, /* above the tie: up */
        {0xbf807fffu, 0xbf80}, /* below the tie, negative: down in magnitude */
        {0x7f7fffffu, 0x7f80}, /* largest FP32 rounds to +Inf */
        {0xff7f8000u, 0xff80}, /* tie at the top, negative: -Inf */
        {0x00008000u, 0x0000}, /* subnormal tie, even below: +0 */
        {0x00018000u, 0x0002}, /* subnormal tie, odd below: up */
        {0x7f800000u, 0x7f80}, /* +Inf */
        {0xff800000u, 0xff80}, /* -Inf */
        {0x7f800001u, 0x7fc0}, /* a NaN: the sum is RISC-V's canonical NaN, never Inf */
        {0xffffffffu, 0x7fc0}, /* a NaN with every bit set: canonical too */
    };
    size_t ncase = sizeof cases / sizeof cases[0], tested = 0;
    for (size_t i = 0; i < gr_registry_count; i++) {
        const struct gr_plan *e = gr_registry[i];
        if (e->format != GR_FORMAT_BF16) /* test_q8_0.c drives the Q8_0 plans */
            continue;
        if (e->k != 1 || e->n < ncase)
            continue;
        struct rng r = {7};
        struct problem p = problem_make(e, e->bucket, &r, 0);
        memset(p.x, 0, p.m * p.ldx * sizeof *p.x);
        for (size_t j = 0; j < p.n; j++) {
            uint32_t bits = cases[j % ncase].in;
            memcpy(&p.bias[j], &bits, sizeof bits);
            p.w[j * p.ldw] = 0x3f80; /* +1: +0 * 1 = +0, and +0 + bias = bias */
        }
        problem_pack(&p);
        struct output_kind v = {1, 1};
        for (int run = 0; run <= 2 * (int)isa_variant_count; run++) {
            const struct gr_variant *isa = isa_variants[run / 2 % isa_variant_count];
            int fallback = run == 2 * (int)isa_variant_count, packed = run % 2;
            uint16_t *y = y_alloc(&p, 1);
            if (fallback)
                run_fallback(&p, v, y);
            else
                run_kernel(&p, e, isa, packed, packed, v, y, 0, p.n);
            for (size_t row = 0; row < p.m; row++)
                for (size_t col = 0; col < p.n; col++)
                    if (y[row * p.ldy + col] != cases[col % ncase].out)
                        fail_msg("%s %s: bias 0x%08x gave 0x%04x, want 0x%04x", e->name,
                                 fallback ? "fallback" : packed ? "packed" : "plain",
                                 cases[col % ncase].in, y[row * p.ldy + col],
                                 cases[col % ncase].out);
            free(y);
        }
        problem_free(&p);
        tested++;
    }
    assert_true(tested > 0);
}

/* Threads split calls into column ranges starting on panel boundaries: the pieces must equal
 * the whole. The full tier cuts every panel apart at the bucket's M; the quick tier three
 * pieces (the first panel, the panels between, the last), each starting on a panel boundary,
 * at 9 rows at most (a tile and a tail: the columns are what is cut). */
static void test_column_ranges(void **state)
{
    (void)state;
    size_t tested = 0;
    for (size_t i = 0; i < gr_registry_count; i++) {
        const struct gr_plan *e = gr_registry[i];
        if (e->format != GR_FORMAT_BF16) /* test_q8_0.c drives the Q8_0 plans */
            continue;
        size_t pw = gr_panel_width();
        if (e->n <= pw || e->n * e->k > BIG_WEIGHT)
            continue;
        struct rng r = {99 + i};
        size_t m = quick_tier() && e->bucket > 9 ? 9 : e->bucket;
        struct problem p = problem_make(e, m, &r, 0);
        struct output_kind v = {0, 1};
        for (int run = 0; run < 2 * (int)isa_variant_count; run++) {
            const struct gr_variant *isa = isa_variants[run / 2];
            int packed = run % 2;
            void *whole = y_alloc(&p, 0), *parts = y_alloc(&p, 0);
            run_kernel(&p, e, isa, packed, 0, v, whole, 0, p.n);
            const size_t last = (p.n - 1) / pw * pw; /* the last panel's first column */
            for (size_t c = 0; c < p.n;) {
                size_t end = c + pw < p.n ? c + pw : p.n;
                if (quick_tier() && c == pw && last > pw)
                    end = last; /* the panels between the first and the last, in one piece */
                run_kernel(&p, e, isa, packed, 0, v, parts, c, end);
                c = end;
            }
            expect_same(packed ? "packed, by panels" : "plain, by panels", e, isa, &p, v, parts,
                        whole);
            free(whole);
            free(parts);
        }
        problem_free(&p);
        tested++;
    }
    assert_true(tested > 0);
}

/* Plan e with small K and column blocks of both orders that copy X, for plans of 32 rows or
 * more: each participant its own copy, or (shared) one copy for the call with column blocks in
 * rounds, the plain weights then taking the other order. */
static struct gr_plan small_blocks(const struct gr_plan *e, uint32_t shared)
{
    struct gr_plan small = *e;
    small.blocking[GR_L2_ALONE] =
        (struct gr_blocking){.order = GR_ORDER_STRIPS, .k_block = 8, .col_block = 64,
                             .x_copy_rows = 1, .x_copy_cols = 1, .x_copy_stride = 512,
                             .x_copy_shared = shared, .col_rounds = shared};
    small.blocking[GR_L2_SHARED] =
        (struct gr_blocking){.order = GR_ORDER_TILES, .k_block = 16, .col_block = 64,
                             .x_copy_rows = 1, .x_copy_cols = 1, .x_copy_stride = 512,
                             .x_copy_shared = shared, .col_rounds = shared};
    small.plain[GR_L2_ALONE] = small.blocking[shared ? GR_L2_SHARED : GR_L2_ALONE];
    small.plain[GR_L2_SHARED] = small.blocking[shared ? GR_L2_ALONE : GR_L2_SHARED];
    return small;
}

/* Blockings with x_copy_rows read X from a copy in scratch when X's rows are a multiple of
 * x_copy_stride bytes apart: with such rows, the copy's results against the fallback, for
 * every variant, packed and plain weights, with the plan's blockings and with small K and
 * column blocks of both orders that copy X on any piece (several K blocks, K ending mid-pair,
 * several column blocks). */
static void test_x_copy(void **state)
{
    (void)state;
    size_t copied = 0;
    for (size_t i = 0; i < gr_registry_count; i++) {
        const struct gr_plan *e = gr_registry[i];
        if (e->format != GR_FORMAT_BF16) /* test_q8_0.c drives the Q8_0 plans */
            continue;
        const struct gr_blocking *b = &e->blocking[GR_L2_ALONE];
        if (b->x_copy_rows == 0 || e->bucket <= b->x_copy_rows || e->n < 1024 ||
            e->n * e->k > BIG_WEIGHT)
            continue;
        struct gr_plan small = small_blocks(e, 0);
        struct rng r = {77 + i};
        const size_t stride = b->x_copy_stride / sizeof(uint16_t);
        size_t ldx = (e->k + stride) / stride * stride; /* a multiple, past a row */
        struct problem p = problem_make_ldx(e, e->bucket - 1, &r, 0, ldx);
        struct output_kind v = kinds[i % 4];
        void *expected = y_alloc(&p, v.y_bf16);
        run_fallback(&p, v, expected);
        for (int run = 0; run < 8 * (int)isa_variant_count; run++) {
            const struct gr_variant *isa = isa_variants[run / 8];
            const struct gr_plan *plan = run / 4 % 2 ? &small : e;
            int packed = run / 2 % 2, share = run % 2;
            void *got = y_alloc(&p, v.y_bf16);
            copied += (size_t)run_kernel(&p, plan, isa, packed, share, v, got, 0, p.n);
            expect_same(plan == e ? "X copied" : "X copied, small blocks", e, isa, &p, v, got,
                        expected);
            free(got);
        }
        free(expected);
        problem_free(&p);
    }
    print_message("%zu runs read X from its copy\n", copied);
    assert_true(copied > 0);
}

/* Blockings for the cores of a cluster (x_copy_shared, col_rounds: one copy of X for the call,
 * made a share of the rows by each thread before the column loop; column blocks in rounds):
 * the calls of 1, 2 and 3 threads (runtime/plan_call.c's order, one after the other) against
 * the fallback, for every variant, packed and plain weights, with the plans' own cluster
 * blockings and with small K and column blocks of both orders that share X at any size; and
 * rounds without the copy (X's rows not a multiple of the stride apart). */
static void test_shared_x(void **state)
{
    (void)state;
    if (!driver_rules_here())
        skip();
    size_t shared = 0, runs = 0;
    for (size_t i = 0; i < gr_registry_count; i++) {
        const struct gr_plan *e = gr_registry[i];
        if (e->format != GR_FORMAT_BF16) /* test_q8_0.c drives the Q8_0 plans */
            continue;
        if (e->bucket < 32 || e->n * e->k > BIG_WEIGHT)
            continue;
        struct gr_plan small = small_blocks(e, 1);
        struct rng r = {91 + i};
        const size_t stride = 512 / sizeof(uint16_t);
        /* X's rows a multiple of 512 bytes apart (the copy), or not (rounds alone) */
        size_t ldx = i % 3 ? (e->k + stride) / stride * stride : e->k + 3;
        /* the bucket's rows, or one fewer; the quick tier 32 or 33 (enough for the copy) */
        size_t m = !quick_tier() ? e->bucket - i % 2 : e->bucket > 32 ? 33 - i % 2 : 32;
        struct problem p = problem_make_ldx(e, m, &r, 0, ldx);
        struct output_kind v = kinds[i % 4];
        /* Y's rows off their lines, a whole number of lines apart (the lines two column
         * blocks share written once), or as problem_make leaves them */
        const size_t y_off = (size_t[]){0, 4, 16, 60}[i % 4];
        if (y_off)
            problem_y_lines(&p);
        void *expected = y_alloc(&p, v.y_bf16);
        run_fallback(&p, v, expected);
        /* The quick tier takes one of the three piece counts, in turn over the plans. */
        for (size_t run = 0; run < 12 * isa_variant_count; run++) {
            const struct gr_variant *isa = isa_variants[run / 12];
            const struct gr_plan *plan = run / 6 % 2 ? &small : e;
            int packed = run % 2;
            size_t pieces = 1 + run / 2 % 3;
            if (quick_tier() && pieces != 1 + (i + run / 6) % 3)
                continue;
            void *base, *got = y_alloc_at(&p, v.y_bf16, y_off, &base);
            const struct gr_call c = call_of(&p, isa, packed, v, got);
            shared += (size_t)drive_pieces(plan, isa, GR_L2_SHARED, &c, pieces);
            expect_same(plan == e ? "cluster blocking" : "shared X, small blocks", e, isa, &p,
                        v, got, expected);
            free(base);
            runs++;
        }
        free(expected);
        problem_free(&p);
    }
    print_message("%zu runs, %zu read X from one shared copy\n", runs, shared);
    assert_true(shared > 0);
}

/* The problem's X and W moved to x_off and w_off bytes past a line, rows a whole number of
 * lines apart (so that all of a buffer's rows share the offset, as the driver's line rules
 * take them); the old buffers freed. */
static void problem_place(struct problem *p, size_t x_off, size_t w_off)
{
    const size_t line = GR_LINE_BYTES / sizeof(uint16_t);
    const size_t ldx = (p->k + line) / line * line, ldw = (p->k + 2 * line) / line * line;
    uint16_t *x = aligned_alloc(GR_LINE_BYTES, (p->m * ldx + line) * sizeof *x);
    uint16_t *w = aligned_alloc(GR_LINE_BYTES, (p->n * ldw + line) * sizeof *w);
    assert_non_null(x);
    assert_non_null(w);
    memset(x, 0, (p->m * ldx + line) * sizeof *x);
    memset(w, 0, (p->n * ldw + line) * sizeof *w);
    for (size_t i = 0; i < p->m; i++)
        memcpy(x + x_off / 2 + i * ldx, p->x + i * p->ldx, p->k * sizeof *x);
    for (size_t j = 0; j < p->n; j++)
        memcpy(w + w_off / 2 + j * ldw, p->w + j * p->ldw, p->k * sizeof *w);
    free(p->x);
    free(p->w_alloc);
    p->x = x + x_off / 2;
    p->ldx = ldx;
    p->w_alloc = w;
    p->w = w + w_off / 2;
    p->ldw = ldw;
}

/* test_misaligned_starts frees X's allocation, not the moved pointer. */
static void problem_free_placed(struct problem *p, size_t x_off)
{
    p->x -= x_off / 2;
    problem_free(p);
}

/* Where the caller's buffers sit decides where K blocks start (a first block shorter by the
 * offset into its line of W's rows, plain weights, or of X's, packed), which elements of X a
 * block carries to the next, and how Y is written from the partial sums
 * (runtime/lines.h): X, W and Y at offsets past a line, against the fallback bit for bit, for
 * every variant, packed and plain weights, the plan's blockings and small K and column blocks
 * of both orders, with X copied and read in place. */
static void test_misaligned_starts(void **state)
{
    (void)state;
    if (!driver_rules_here())
        skip();
    /* bytes past a line of X, W, Y (BF16 Y takes any even offset, FP32 Y multiples of 4) */
    static const size_t offsets[][3] = {{2, 2, 4}, {16, 16, 16}, {62, 34, 60}, {0, 50, 8}};
    size_t runs = 0, shifted = 0, carried = 0, carried_more = 0, copied = 0;
    for (size_t i = 0; i < gr_registry_count; i++) {
        const struct gr_plan *e = gr_registry[i];
        if (e->format != GR_FORMAT_BF16) /* test_q8_0.c drives the Q8_0 plans */
            continue;
        if (e->k < 1024 || e->n * e->k > BIG_WEIGHT)
            continue;
        const size_t *off = offsets[i % 4];
        struct gr_plan small[2] = {*e, *e};
        for (uint32_t copy = 0; copy < 2; copy++) {
            struct gr_plan *s = &small[copy];
            s->blocking[GR_L2_ALONE] =
                (struct gr_blocking){.order = GR_ORDER_STRIPS, .k_block = 32, .col_block = 64,
                                     .x_copy_rows = copy, .x_copy_cols = 1, .x_copy_stride = 64,
                                     .x_copy_shared = 0, .col_rounds = 0};
            s->blocking[GR_L2_SHARED] =
                (struct gr_blocking){.order = GR_ORDER_TILES, .k_block = 64, .col_block = 64,
                                     .x_copy_rows = copy, .x_copy_cols = 1, .x_copy_stride = 64,
                                     .x_copy_shared = 0, .col_rounds = 0};
            s->plain[GR_L2_ALONE] = s->blocking[GR_L2_ALONE];
            s->plain[GR_L2_SHARED] = s->blocking[GR_L2_SHARED];
        }
        const struct gr_plan *plans[3] = {e, &small[0], &small[1]};
        struct rng r = {555 + i};
        struct problem p = problem_make(e, e->bucket, &r, 0);
        problem_place(&p, off[0], off[1]);
        if (i % 3) /* else Y's rows at different offsets into their lines */
            problem_y_lines(&p);
        struct output_kind v = kinds[i % 4];
        size_t y_off = v.y_bf16 ? off[2] : off[2] / 4 * 4;
        void *expected = y_alloc(&p, v.y_bf16);
        run_fallback(&p, v, expected);
        struct gr_k_blocks w_blocks = gr_k_blocks_lines(p.k, 32, (uintptr_t)p.w, p.ldw * 2, 1);
        struct gr_k_blocks x_blocks = gr_k_blocks_lines(p.k, 32, (uintptr_t)p.x, p.ldx * 2, 2);
        shifted += w_blocks.first < w_blocks.block;
        /* X's elements carried between K blocks: one (packed, an odd offset), or several
         * (plain: blocks cut on W's lines, X off its lines by another offset) */
        carried += gr_k_carry((uintptr_t)p.x, p.k, x_blocks.first) == 1;
        carried_more += gr_k_carry((uintptr_t)p.x, p.k, w_blocks.first) > 1;
        /* The quick tier takes one of the three blockings (the plan's, small blocks with X in
         * place or copied) and one of the two shares of each, in turn over the plans: every
         * combination still runs, on fewer problems. */
        for (int run = 0; run < 12 * (int)isa_variant_count; run++) {
            const struct gr_variant *isa = isa_variants[run / 12];
            const struct gr_plan *plan = plans[run / 4 % 3];
            int packed = run / 2 % 2, share = run % 2;
            if (quick_tier() && ((size_t)share != (i + (size_t)run / 2) % 2 ||
                                 (size_t)(run / 4 % 3) != i % 3))
                continue;
            void *base, *got = y_alloc_at(&p, v.y_bf16, y_off, &base);
            copied += (size_t)run_kernel(&p, plan, isa, packed, share, v, got, 0, p.n);
            expect_same(plan == e ? "buffers off their lines" : "off their lines, small blocks",
                        e, isa, &p, v, got, expected);
            free(base);
            runs++;
        }
        free(expected);
        problem_free_placed(&p, off[0]);
    }
    print_message("%zu runs; plain K blocks shifted in %zu problems, X carried one element in "
                  "%zu, several in %zu; %zu runs copied X\n", runs, shifted, carried,
                  carried_more, copied);
    assert_true(shifted > 0);
    assert_true(carried > 0);
    assert_true(carried_more > 0);
    assert_true(copied > 0);
}

/* The packed layouts: every weight reads back, the padding is zero, and the two layouts put
 * each panel's column at the same bytes (the driver finds a k-pair alike in both). */
static void test_pack_layout(void **state)
{
    (void)state;
    static const size_t shapes[][2] = {{1, 1}, {7, 3}, {33, 31}, {100, 2}, {65, 1025}};
    static const size_t widths[] = {4, 16, 64, 256};
    struct rng r = {5};
    for (size_t s = 0; s < 5; s++) {
        for (size_t wi = 0; wi < 4; wi++) {
            size_t n = shapes[s][0], k = shapes[s][1], ldw = k + 2, pw = widths[wi];
            size_t words = gr_packed_words(n, k, pw);
            uint16_t *w = malloc(n * ldw * sizeof *w);
            uint32_t *packed[2] = {malloc(words * 4), malloc(words * 4)};
            assert_non_null(w);
            assert_non_null(packed[0]);
            assert_non_null(packed[1]);
            fill_bf16(&r, w, n * ldw, 1);
            assert_int_equal(words, (n + pw - 1) / pw * pw * ((k + 1) / 2));
            for (uint32_t layout = 0; layout < 2; layout++) {
                gr_pack(w, n, k, ldw, pw, layout, packed[layout]);
                for (size_t row = 0; row < n; row++)
                    for (size_t col = 0; col < k; col++)
                        assert_int_equal(gr_packed_get(packed[layout], layout, k, pw, row, col),
                                         w[row * ldw + col]);
                size_t nonzero_padding = 0;
                for (size_t row = n; row < (n + pw - 1) / pw * pw; row++)
                    for (size_t col = 0; col < k + k % 2; col++)
                        nonzero_padding += gr_packed_get(packed[layout], layout, k, pw, row,
                                                         col) != 0;
                for (size_t row = 0; row < n && k % 2; row++)
                    nonzero_padding += gr_packed_get(packed[layout], layout, k, pw, row, k) != 0;
                assert_int_equal(nonzero_padding, 0);
            }
            /* Panel p, k-pair q: 4 * pw bytes starting at the same offset in both. */
            for (size_t p = 0; p < words / ((k + 1) / 2) / pw; p++) {
                size_t at = (p * ((k + 1) / 2) + (k - 1) / 2) * pw;
                const uint16_t *rows = (const uint16_t *)(packed[GR_LAYOUT_ROWS] + at);
                uint32_t word = packed[GR_LAYOUT_PAIRS][at];
                assert_int_equal(rows[0], (uint16_t)word);
                assert_int_equal(rows[pw], (uint16_t)(word >> 16));
            }
            free(w);
            free(packed[0]);
            free(packed[1]);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pack_layout),
        cmocka_unit_test(test_bf16_rounding),
        cmocka_unit_test(test_negative_zero),
        cmocka_unit_test(test_special_values),
        cmocka_unit_test(test_column_ranges),
        cmocka_unit_test(test_x_copy),
        cmocka_unit_test(test_shared_x),
        cmocka_unit_test(test_misaligned_starts),
        cmocka_unit_test(test_random_inputs),
        cmocka_unit_test(test_row_tile_calls),
    };
    /* A panel is VLMAX at e32, LMUL 8: 2 * vlenb columns, VLEN / 4. */
    isa_variant_count = runnable_variants(isa_variants);
    printf("VLEN %zu bits, packed panels of %zu columns, tiles of %s%s%s\n",
           gr_panel_width() * 4, gr_panel_width(), isa_variants[0]->name,
           isa_variant_count > 1 ? " and " : "", isa_variant_count > 1 ? isa_variants[1]->name : "");
    int failed = cmocka_run_group_tests_name("kernels", tests, NULL, NULL);
    digest_print("outputs", outputs_digest);
    return failed;
}
