/* gemm-rvv-gen --explain's tables (gen/explain.c), line for line, for a plan made by hand: the
 * (layer, M) table with its widest name, the plans table with each share's order, KC, NC, X copy
 * column, DRAM over the minimum and vector work, and the plain weights' line where it differs;
 * the attention table. */
#define _GNU_SOURCE /* open_memstream on older glibc headers */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "explain.h"

static char *explain(const struct shapes *s, const struct plan *p)
{
    char *text = NULL;
    size_t size;
    FILE *out = open_memstream(&text, &size);
    assert_non_null(out);
    print_explain(out, s, p);
    assert_int_equal(fclose(out), 0);
    return text;
}

static struct layer layers[2] = {
    {.name = "q_proj", .n = 4096, .k = 4096, .format = FORMAT_bf16},
    {.name = "layers.0.tiny", .n = 896, .k = 896, .format = FORMAT_q8_0},
};

/* A kernel entry and a fallback one; no plans. */
static void test_entries(void **state)
{
    (void)state;
    struct shapes s = {.layers = layers, .count = 2};
    struct plan_entry entries[2] = {
        {.layer = 0, .m = 512, .row = 0,
         .decision = {VERDICT_KERNEL, 128, 4, "M=512 > 128: 4 row blocks of M <= 128"}},
        {.layer = 1, .m = 1, .row = NO_PLAN, .decision = {VERDICT_FALLBACK, 0, 0, "N=896 < 1024"}},
    };
    struct plan_row row = {.name = "bf16_gemm_m128_n4096_k4096"};
    struct plan p = {.entries = entries, .count = 2, .rows = &row, .row_count = 0};
    char *text = explain(&s, &p);
    /* The layer column as wide as "layers.0.tiny" (13); no plans table without plans. */
    assert_string_equal(text,
        "layer              M       N       K weights  verdict   plan                                reason\n"
        "q_proj           512    4096    4096 bf16     kernel    bf16_gemm_m128_n4096_k4096          M=512 > 128: 4 row blocks of M <= 128\n"
        "layers.0.tiny      1     896     896 q8_0     fallback  -                                   N=896 < 1024\n");
    free(text);
}

/* One plan, both shares: alone, tiles order, X copied from 32 rows for the piece alone; the
 * cluster, strips order, one copy shared in rounds. Its plain weights' blockings differ, so
 * they get a line, with "-" for X: a copy whose stride (8200) does not divide X's rows' 8192
 * bytes, and none. */
static void test_plans_table(void **state)
{
    (void)state;
    struct shapes s = {.layers = layers, .count = 1};
    struct plan_entry entry = {.layer = 0, .m = 128, .row = 0,
                               .decision = {VERDICT_KERNEL, 128, 1, ""}};
    struct plan_row row = {
        .n = 4096, .k = 4096, .bucket = 128, .tile = {4, 4}, .plain_weights = 1,
        .name = "bf16_gemm_m128_n4096_k4096",
        .blocking = {{ORDER_TILES, 128, 384, {32, 1024, 512, 0, 0}, 1.25e6, 1e6, 0.147, 0},
                     {ORDER_STRIPS, 256, 1536, {32, 1024, 512, 1, 4}, 2e6, 1e6, 0.15, 0}},
        .plain = {{ORDER_STRIPS, 64, 384, {32, 1024, 8200, 0, 0}, 1.5e6, 1e6, 0.147, 0},
                  {ORDER_STRIPS, 256, 1536, {0, 0, 0, 0, 0}, 3e6, 1e6, 0.15, 0}},
    };
    struct plan p = {.entries = &entry, .count = 1, .rows = &row, .row_count = 1,
                     .target = target_default()};
    char *text = explain(&s, &p);
    const char *want =
        "\nplans for VLEN 256, L2 512 KiB: a core alone / its 4 cores at once (DRAM is modelled "
        "bytes over the minimum;\nX: rows from which the call reads X from a copy, X's rows K "
        "apart; s: one copy for all threads,\nr: column blocks in rounds):\n"
        "plan                                tile  order     KC     NC    X   DRAM   vwork  order     KC     NC    X   DRAM   vwork\n"
        "bf16_gemm_m128_n4096_k4096           4x4  tiles    128    384   32   1.25  0.1470  strips   256   1536 32sr   2.00  0.1500\n"
        "  plain [N, K] weights                    strips    64    384    -   1.50  0.1470  strips   256   1536    -   3.00  0.1500\n";
    const char *plans = strstr(text, "\nplans for");
    assert_non_null(plans);
    assert_string_equal(plans, want);
    free(text);
    /* Plain blockings the same as the packed ones: no second line. */
    memcpy(row.plain, row.blocking, sizeof row.plain);
    text = explain(&s, &p);
    assert_null(strstr(text, "plain [N, K]"));
    free(text);
}

/* The attention table after the others: a kernel row with its plan and pairs, a fallback row
 * with its reason, the name column as wide as the widest name; none without entries. */
static void test_attention_table(void **state)
{
    (void)state;
    struct attention attention[2] = {
        {.name = "attn", .head_dim = 128, .q_heads = 16, .kv_heads = 8, .k_type = KV_f16,
         .v_type = KV_f16},
        {.name = "model.wide_heads", .head_dim = 512, .q_heads = 8, .kv_heads = 8,
         .k_type = KV_bf16, .v_type = KV_f16},
    };
    struct shapes s = {.attention = attention, .attention_count = 2};
    struct attn_row row = {.name = "attn_f16_d128_h16_kv8_q1", .why = "2 pairs a tile: decoding"};
    struct attn_entry entries[2] = {
        {.attention = 0, .n_q = 1, .row = &row},
        {.attention = 1, .n_q = 512, .row = NULL, .reason = "head_dim=512 > 256: too wide"},
    };
    struct plan p = {.attn = {.entries = entries, .count = 2, .rows = &row, .row_count = 1}};
    char *text = explain(&s, &p);
    assert_string_equal(text,
        "layer      M       N       K weights  verdict   plan                                reason\n"
        "\n"
        "attention           n_q head_dim q_heads kv_heads k    v     verdict   plan                                reason\n"
        "attn                  1      128      16        8 f16  f16   kernel    attn_f16_d128_h16_kv8_q1            2 pairs a tile: decoding\n"
        "model.wide_heads    512      512       8        8 bf16 f16   fallback  -                                   head_dim=512 > 256: too wide\n");
    free(text);
    p.attn.count = 0;
    text = explain(&s, &p);
    assert_null(strstr(text, "attention"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entries),
        cmocka_unit_test(test_plans_table),
        cmocka_unit_test(test_attention_table),
    };
    return cmocka_run_group_tests_name("explain", tests, NULL, NULL);
}
