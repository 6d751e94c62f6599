/* Runs one path of one shape once, for the instruction-counting plugin to measure:
 *   count_call PATH M N K [COLUMNS]
 * PATH: kernel-packed, kernel-plain (the generated kernel on packed or [N, K] weights),
 * fallback (the scalar fallback), plain-c (GCC's autovectorized triple loop), q8-packed (the
 * Q8_0 plan of the shape on packed Q8_0 weights, FP32 X: runtime/plan_call.c's call, X
 * quantised once, on one thread). COLUMNS, when
 * given, limits the run to the first COLUMNS output columns (slow paths on big shapes: every
 * column costs the same). Prints the multiply-accumulates measured. Single-threaded: the
 * kernels are called directly, as the runtime's workers call them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "activations.h"
#include "cpu.h"
#include "dispatch.h"
#include "driver.h"
#include "fallback.h"
#include "isa.h"
#include "pack.h"
#include "q8_0.h"
#include "q8_0_pack.h"
#include "registry_lookup.h"

void plain_c_linear_zvl256(const uint16_t *x, const uint16_t *w, float *y, int m, int n, int k);
void plain_c_linear_zvl128(const uint16_t *x, const uint16_t *w, float *y, int m, int n, int k);

static uint16_t *data(size_t count, uint32_t seed)
{
    uint16_t *v = malloc(count * sizeof *v);
    if (!v)
        exit(1);
    for (size_t i = 0; i < count; i++) {
        seed = seed * 1664525u + 1013904223u;
        v[i] = (uint16_t)(0x3c00 + (seed >> 20) % 0x600); /* |v| in [2^-7, 8) */
    }
    return v;
}

/* Q8_0 blocks: FP16 scales of 2^-8 .. 2^-5, values over the whole int8 range. */
static unsigned char *q8_blocks(size_t count, uint32_t seed)
{
    unsigned char *b = malloc(count * GR_Q8_BLOCK_BYTES);
    if (!b)
        exit(1);
    for (size_t i = 0; i < count * GR_Q8_BLOCK_BYTES; i++) {
        seed = seed * 1664525u + 1013904223u;
        b[i] = (unsigned char)(seed >> 24);
        if (i % GR_Q8_BLOCK_BYTES == 1)
            b[i] = (unsigned char)(0x1c + (seed >> 30)); /* the scale's high byte */
    }
    return b;
}

/* The Q8_0 plan of (n, k) for m rows on the first cols columns (whole panels of the packed
 * form, which follow each other), one thread. */
static int run_q8(size_t m, size_t n, size_t k, size_t cols, float *y)
{
    struct gr_shape_plans ps;
    gr_find_plans(n, k, GR_FORMAT_Q8_0, &ps);
    const struct gr_plan *plan = gr_pick_plan(&ps, m);
    if (!plan || m > plan->bucket) {
        fprintf(stderr, "count_call: no Q8_0 plan for M=%zu N=%zu K=%zu in this build\n", m, n,
                k);
        return 1;
    }
    const size_t pw = gr_isa_variant()->vlenb(), blocks = n * (k / GR_Q8_BLOCK);
    unsigned char *b = q8_blocks(blocks, 3);
    void *packed = aligned_alloc(64, (gr_q8_packed_bytes(n, k, pw) + 63) / 64 * 64);
    float *x = malloc(m * k * sizeof *x);
    if (!packed || !x)
        return 1;
    gr_q8_pack_zero_padding(n, k, pw, packed);
    gr_q8_pack_blocks(b, 0, blocks, k, pw, packed);
    for (size_t i = 0; i < m * k; i++)
        x[i] = (float)((int)(i * 2654435761u >> 20) % 2001 - 1000) / 256.0f;
    if (gemm_rvv_set_threads(1) != GEMM_RVV_OK)
        return 1;
    const struct gr_call c = {.x = x, .m = m, .ldx = k, .y = y, .ldy = n,
                              .w = {.packed = packed, .panel_width = pw, .n = cols, .k = k,
                                    .format = GR_FORMAT_Q8_0}};
    if (gr_run_plan(&c, plan) != GEMM_RVV_OK)
        return 1;
    printf("kernel=%s\n", plan->name);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: count_call PATH M N K [COLUMNS]\n");
        return 2;
    }
    const char *path = argv[1];
    size_t m = strtoul(argv[2], NULL, 10), n = strtoul(argv[3], NULL, 10);
    size_t k = strtoul(argv[4], NULL, 10);
    size_t cols = argc > 5 ? strtoul(argv[5], NULL, 10) : n;
    if (cols > n)
        cols = n;
    uint16_t *x = data(m * k, 1), *w = data(n * k, 2);
    float *y = calloc(m * n, sizeof *y);
    if (!y)
        return 1;

    if (strncmp(path, "kernel-", 7) == 0) {
        struct gr_shape_plans ps;
        gr_find_plans(n, k, GR_FORMAT_BF16, &ps);
        const struct gr_plan *plan = gr_pick_plan(&ps, m);
        if (!plan || m > plan->bucket) {
            fprintf(stderr, "count_call: no plan for M=%zu N=%zu K=%zu in this build\n", m, n, k);
            return 1;
        }
        size_t pw = gr_panel_width();
        int is_packed = strcmp(path, "kernel-packed") == 0;
        uint32_t *packed = aligned_alloc(64, (gr_packed_words(n, k, pw) * 4 + 63) / 64 * 64);
        if (!packed)
            return 1;
        gr_pack(w, n, k, k, pw, gr_isa_variant()->layout, packed);
        /* One thread: the blocking for a whole L2, as the runtime picks it, unless
         * GEMM_RVV_BLOCKING=shared asks for a core's share of it. */
        if (gemm_rvv_set_threads(1) != GEMM_RVV_OK)
            return 1;
        const struct gr_call c = {.x = x, .m = m, .ldx = k, .y = y, .ldy = n,
                                  .w = {.packed = is_packed ? packed : NULL,
                                        .layout = gr_isa_variant()->layout, .panel_width = pw,
                                        .plain = w, .ldw = k, .n = cols, .k = k}};
        if (gr_run_plan(&c, plan) != GEMM_RVV_OK)
            return 1;
        printf("kernel=%s\n", plan->name);
    } else if (strcmp(path, "fallback") == 0) {
        struct gr_weight_view view = {.plain = w, .ldw = k, .n = n, .k = k};
        float *col = malloc(GR_FALLBACK_COLS * k * sizeof *col);
        float *rows = malloc(m * k * sizeof *rows);
        if (!col || !rows)
            return 1;
        gr_widen_rows(x, m, k, k, rows);
        gr_fallback(rows, m, &view, NULL, y, n, 0, 0, cols, col);
    } else if (strcmp(path, "q8-packed") == 0) {
        if (run_q8(m, n, k, cols, y) != 0)
            return 1;
    } else if (strcmp(path, "plain-c") == 0) {
        /* The loop writes y with row stride cols: it runs on the first cols rows of W. */
        if (gr_panel_width() * 4 >= 256)
            plain_c_linear_zvl256(x, w, y, (int)m, (int)cols, (int)k);
        else
            plain_c_linear_zvl128(x, w, y, (int)m, (int)cols, (int)k);
    } else {
        fprintf(stderr, "count_call: unknown path %s\n", path);
        return 2;
    }
    printf("macs=%zu\n", m * cols * k);
    return 0;
}
