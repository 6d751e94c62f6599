/* One Linear call of a chosen kernel variant, outside the API, bracketed by the cache model's
 * markers like dram_call.c, for measuring the DRAM traffic of a variant the emulator's
 * core does not select (measure/dram/dram.sh, path zvfbfwma):
 *   dram_variant base|zvfbfwma M N K [check|check-special]
 * The weights are packed in the variant's layout (gr_pack, outside the region, as at weight
 * create), then the plan's loops run over all the columns with the variant's tiles
 * (gr_drive_init with &gr_variant_VARIANT, gr_drive_columns on scratch of gr_drive_bytes(),
 * taken before the region), one thread, row blocks of the plan's bucket as run_plan walks them.
 * F32 output, no bias; X, W and Y placed (DRAM_PLACEMENT) and filled exactly as dram_call
 * places and fills them.
 * GEMM_RVV_BLOCKING=alone|shared picks the plan's blocking (default alone: one thread).
 * Under QEMU 7.2 the zvfbfwma variant must be the trace twin (tiles_zvfbfwma_twin.c.in).
 * Prints served=kernel, the buffers (x, w, y as dram_call, and the library-side ones this
 * program owns: packed, scratch) and min_bytes, for measure-call.sh.
 * check: also runs the scalar fallback (public API, forced) on the same X and W and compares
 * Y bit for bit: prints "check=match digest=D" (D: FNV-1a of Y's bits) or the first mismatch
 * (exit 1). check-special fills X and W with every kind of BF16 instead (both signs, +-0,
 * subnormals, huge values that overflow, +-Inf; no NaN input). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache_marker.h"
#include "dram_data.h"
#include "cpu.h"
#include "driver.h"
#include "gemm_rvv.h"
#include "gr_contract.h"
#include "pack.h"
#include "placement.h"
#include "registry_lookup.h"
#include "scratch.h"

/* The caller's buffers (X, W, Y) where DRAM_PLACEMENT puts them, as dram_call does. The
 * library's own (the packed weights at weight create, the call's scratch) as the library
 * allocates them; under page+B each in a mapping of its own too, 64 bytes into its first page,
 * so that the plugin's map shows every buffer apart. */
static struct placement placement;

static void *aligned(size_t bytes, size_t element)
{
    return placement_alloc(&placement, bytes, element, "dram_variant");
}

static void *lib_aligned(size_t bytes)
{
    if (placement.kind == PLACEMENT_PAGE)
        return placement_page(bytes, 64, "dram_variant");
    void *p = gr_alloc_aligned(bytes ? bytes : 64);
    if (!p) {
        fprintf(stderr, "dram_variant: cannot allocate %zu bytes\n", bytes);
        exit(1);
    }
    return p;
}

/* dram_call's data (dram_data.h). */
static uint16_t *bf16_data(size_t count, uint32_t seed)
{
    uint16_t *v = aligned(count * sizeof *v, sizeof *v);
    dram_fill_bf16(v, count, seed);
    return v;
}

/* Every kind of BF16 but NaN: ordinary values of both signs over 2^-15 .. 2^13 (products over
 * 2^56, with cancellation), and among them +-0 (1/64), subnormals (1/32), values near the top
 * of the range (1/16384: their products and sums overflow) and +-Inf (1/65536), rare enough
 * that most outputs of a K = 4096 sum stay finite. */
static uint16_t *bf16_special(size_t count, uint32_t seed)
{
    uint16_t *v = aligned(count * sizeof *v, sizeof *v);
    for (size_t i = 0; i < count; i++) {
        seed = seed * 1664525u + 1013904223u;
        uint32_t kind = seed >> 16, r = (seed >> 1) & 0x7fff, sign = (seed & 1) << 15;
        uint16_t mag;
        if (kind < 1024)
            mag = 0;                             /* +-0 */
        else if (kind < 3072)
            mag = (uint16_t)(1 + r % 0x7f);      /* subnormal */
        else if (kind < 3076)
            mag = (uint16_t)(0x7f00 + r % 0x80); /* near FLT_MAX */
        else if (kind == 3076)
            mag = 0x7f80;                        /* Inf */
        else
            mag = (uint16_t)(0x3800 + r % 0xe00); /* ordinary */
        v[i] = (uint16_t)(sign | mag);
    }
    return v;
}

static long positive(const char *s, const char *name)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v <= 0) {
        fprintf(stderr, "dram_variant: %s must be a positive integer, got \"%s\"\n", name, s);
        exit(2);
    }
    return v;
}

static uint64_t digest(const float *y, size_t count)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < count; i++) {
        uint32_t b;
        memcpy(&b, &y[i], sizeof b);
        for (int s = 0; s < 32; s += 8)
            h = (h ^ ((b >> s) & 0xff)) * 1099511628211ull;
    }
    return h;
}

int main(int argc, char **argv)
{
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: dram_variant base|zvfbfwma M N K [check|check-special]\n");
        return 2;
    }
    const struct gr_variant *variant = strcmp(argv[1], "base") == 0       ? &gr_variant_base
                                       : strcmp(argv[1], "zvfbfwma") == 0 ? &gr_variant_zvfbfwma
                                                                          : NULL;
    if (!variant) {
        fprintf(stderr, "dram_variant: unknown variant \"%s\" (base, zvfbfwma)\n", argv[1]);
        return 2;
    }
    size_t m = (size_t)positive(argv[2], "M"), n = (size_t)positive(argv[3], "N"),
           k = (size_t)positive(argv[4], "K");
    const char *mode = argc == 6 ? argv[5] : "";
    int special = strcmp(mode, "check-special") == 0, check = special || strcmp(mode, "check") == 0;
    if (argc == 6 && !check) {
        fprintf(stderr, "dram_variant: unknown mode \"%s\" (check, check-special)\n", mode);
        return 2;
    }
    if (!gr_cpu_has_vector()) {
        fprintf(stderr, "dram_variant: this core has no V\n");
        return 1;
    }
    struct gr_shape_plans plans;
    gr_find_plans(n, k, GR_FORMAT_BF16, &plans);
    const struct gr_plan *plan = plans.count ? gr_pick_plan(&plans, m) : NULL;
    if (!plan) {
        printf("served=fallback\n"); /* dram-measure.sh says which shape lacks a plan */
        return 0;
    }
    placement = placement_from_env("dram_variant");
    const char *b = getenv("GEMM_RVV_BLOCKING");
    int share = b && strcmp(b, "shared") == 0 ? GR_L2_SHARED : GR_L2_ALONE;

    uint16_t *x = special ? bf16_special(m * k, 1) : bf16_data(m * k, 1);
    uint16_t *w = special ? bf16_special(n * k, 2) : bf16_data(n * k, 2);
    float *y = aligned(m * n * sizeof *y, sizeof *y);
    memset(y, 0, m * n * sizeof *y);
    size_t pw = gr_panel_width(), words = gr_packed_words(n, k, pw);
    void *packed = lib_aligned(words * sizeof(uint32_t));
    gr_pack(w, n, k, k, pw, variant->layout, packed);

    const struct gr_call c = {.x = x, .m = m, .ldx = k, .y = y, .ldy = n,
                              .w = {.packed = packed, .layout = variant->layout,
                                    .panel_width = pw, .n = n, .k = k}};
    struct gr_drive d;
    gr_drive_init(&d, plan, variant, share, &c);
    size_t scratch_bytes = gr_drive_bytes(&d);
    void *scratch = lib_aligned(scratch_bytes);

    /* One participant, its scratch ours (placed as the lab's buffers are): the row blocks of
     * runtime/plan_call.c's loop, each over every column. */
    cache_model_start();
    const struct gr_cols all = {0, n};
    for (size_t row = 0; row < m; row += d.rows) {
        gr_drive_row_block(&d, &c, row);
        gr_drive_columns(&d, all, all, scratch);
    }
    cache_model_stop();

    char where[32];
    printf("served=kernel\nvariant=%s plan=%s tile=%ux%u share=%s\nplacement=%s\n", variant->name,
           plan->name, plan->tile_rows, plan->lmul, share == GR_L2_SHARED ? "shared" : "alone",
           placement_name(&placement, where, sizeof where));
    /* for telling the buffers apart in the plugin's regions= map */
    printf("buffer=x addr=%p bytes=%zu\n", (void *)x, m * k * 2);
    printf("buffer=w addr=%p bytes=%zu\n", (void *)w, n * k * 2);
    printf("buffer=y addr=%p bytes=%zu\n", (void *)y, m * n * 4);
    printf("buffer=packed addr=%p bytes=%zu\n", packed, words * sizeof(uint32_t));
    printf("buffer=scratch addr=%p bytes=%zu\n", scratch, scratch_bytes);
    printf("min_bytes=%zu\n", n * k * 2 + m * k * 2 + m * n * 4);

    if (check) {
        float *ref = aligned(m * n * sizeof *ref, sizeof *ref);
        memset(ref, 0xff, m * n * sizeof *ref);
        gemm_rvv_status s = gemm_rvv_set_threads(1);
        gemm_rvv_force_fallback(1);
        if (s == GEMM_RVV_OK)
            s = gemm_rvv_linear_plain(x, (int64_t)m, (int64_t)k, w, (int64_t)n, (int64_t)k,
                                      (int64_t)k, NULL, ref, (int64_t)n, GEMM_RVV_F32);
        if (s != GEMM_RVV_OK) {
            fprintf(stderr, "dram_variant: the fallback failed: %s\n", gemm_rvv_strerror(s));
            return 1;
        }
        for (size_t i = 0; i < m * n; i++)
            if (memcmp(&y[i], &ref[i], sizeof(float)) != 0) {
                uint32_t a, r;
                memcpy(&a, &y[i], 4);
                memcpy(&r, &ref[i], 4);
                printf("check=mismatch row=%zu col=%zu %s=0x%08x fallback=0x%08x\n", i / n,
                       i % n, variant->name, a, r);
                return 1;
            }
        size_t kinds[4] = {0}; /* finite nonzero, zero, infinite, NaN */
        for (size_t i = 0; i < m * n; i++) {
            uint32_t u;
            memcpy(&u, &y[i], 4);
            u &= 0x7fffffffu;
            kinds[u == 0 ? 1 : u < 0x7f800000u ? 0 : u == 0x7f800000u ? 2 : 3]++;
        }
        printf("check=match digest=%016llx finite=%zu zero=%zu inf=%zu nan=%zu\n",
               (unsigned long long)digest(y, m * n), kinds[0], kinds[1], kinds[2], kinds[3]);
    }
    return 0;
}
