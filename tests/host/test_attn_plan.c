/* The attention plans (gen/attn_plan.c): the pairs of a tile for each n_q and GQA group, the
 * plans' names and order (the contract's: head_dim, q_heads, kv_heads, k_type, v_type, n_q),
 * entries sharing a plan, and the gate's fallback with its reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gen_input.h"
#include "plan.h"

/* Decoding: the group's heads, ATTN_PAIRS_MAX at most; prompts: every pair of the call up to
 * ATTN_PAIRS_MAX (rows x heads of the group). */
static void test_pairs(void **state)
{
    (void)state;
    static const struct { uint64_t n_q, group; unsigned pairs; } want[] = {
        {1, 1, 1}, {1, 2, 2}, {1, 3, 3}, {1, 4, 4}, {1, 7, 4}, {1, 8, 4},
        {2, 1, 2}, {2, 2, 4}, {3, 1, 3}, {4, 1, 4}, {128, 1, 4}, {512, 8, 4},
        {2147483647, 2147483647, 4},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (attn_pairs(want[i].n_q, want[i].group) != want[i].pairs)
            fail_msg("n_q %llu, group %llu: %u pairs, expected %u",
                     (unsigned long long)want[i].n_q, (unsigned long long)want[i].group,
                     attn_pairs(want[i].n_q, want[i].group), want[i].pairs);
}

static const char shapes_text[] =
    "layers:\n"
    "  - {name: q, N: 4096, K: 4096, M: 1}\n"
    "attention:\n"
    "  - {name: qwen3, head_dim: 128, q_heads: 16, kv_heads: 8, n_q: [512, 1, 128]}\n"
    "  - {name: wide, head_dim: 512, q_heads: 8, kv_heads: 8, n_q: [1, 4]}\n"
    "  - {name: mixed, head_dim: 64, q_heads: 14, kv_heads: 2, k: bf16, n_q: [2, 1]}\n"
    "  - {name: again, head_dim: 128, q_heads: 16, kv_heads: 8, kv: f16, n_q: 1}\n"
    "  - {name: mha, head_dim: 128, q_heads: 16, kv_heads: 16, kv: bf16, n_q: 1}\n";

static void test_rows_and_entries(void **state)
{
    (void)state;
    struct shapes s;
    struct plan p;
    plan_from_text(shapes_text, &s, &p);
    const struct attn_plan *a = &p.attn;
    /* 9 (entry, n_q) items in file order, n_q increasing; wide's two to the fallback. */
    assert_int_equal(a->count, 9);
    assert_int_equal(a->fallback_count, 2);
    static const struct {
        uint64_t head_dim, q_heads, kv_heads;
        enum kv_type k, v;
        uint64_t n_q;
        unsigned pairs, shared;
        size_t users;
        const char *name;
    } want[] = {
        /* shared: every tile of the KV head, up to 16 KiB of sums (pairs x head_dim floats) */
        {64, 14, 2, KV_bf16, KV_f16, 1, 4, 2, 1, "attn_kbf16_vf16_d64_h14_kv2_q1"},
        {64, 14, 2, KV_bf16, KV_f16, 2, 4, 4, 1, "attn_kbf16_vf16_d64_h14_kv2_q2"},
        {128, 16, 8, KV_f16, KV_f16, 1, 2, 1, 2, "attn_f16_d128_h16_kv8_q1"},
        {128, 16, 8, KV_f16, KV_f16, 128, 4, 8, 1, "attn_f16_d128_h16_kv8_q128"},
        {128, 16, 8, KV_f16, KV_f16, 512, 4, 8, 1, "attn_f16_d128_h16_kv8_q512"},
        {128, 16, 16, KV_bf16, KV_bf16, 1, 1, 1, 1, "attn_bf16_d128_h16_kv16_q1"},
    };
    assert_int_equal(a->row_count, 6);
    for (size_t i = 0; i < 6; i++) {
        const struct attn_row *r = &a->rows[i];
        assert_int_equal(r->head_dim, want[i].head_dim);
        assert_int_equal(r->q_heads, want[i].q_heads);
        assert_int_equal(r->kv_heads, want[i].kv_heads);
        assert_int_equal(r->k_type, want[i].k);
        assert_int_equal(r->v_type, want[i].v);
        assert_int_equal(r->n_q, want[i].n_q);
        assert_int_equal(r->pairs, want[i].pairs);
        assert_int_equal(r->shared, want[i].shared);
        assert_int_equal(r->users, want[i].users);
        assert_string_equal(r->name, want[i].name);
    }
    assert_string_equal(a->rows[0].why, "4 pairs a tile: decoding, the group's 7 query heads "
                                        "4 at a time share each K and V block read; 2 tiles a "
                                        "thread widen each K block once (their sums within "
                                        "16 KiB)");
    assert_string_equal(a->rows[2].why, "2 pairs a tile: decoding, the group's 2 query heads "
                                        "share each K and V block read");
    assert_string_equal(a->rows[3].why, "4 pairs a tile: rows x the group's 2 heads, row then "
                                        "head, share each K and V block read; 8 tiles a thread "
                                        "widen each K block once (their sums within 16 KiB)");
    assert_string_equal(a->rows[5].why, "1 pair a tile: decoding, one query head per KV head");
    /* qwen3's n_q sorted; again shares qwen3's decoding plan; wide is declined, said why. */
    assert_int_equal(a->entries[0].n_q, 1);
    assert_ptr_equal(a->entries[0].row, &a->rows[2]);
    assert_ptr_equal(a->entries[2].row, &a->rows[4]);
    assert_string_equal(a->entries[2].reason, "");
    assert_null(a->entries[3].row);
    assert_null(a->entries[4].row);
    assert_int_equal(a->entries[4].n_q, 4);
    assert_string_equal(a->entries[3].reason, "head_dim=512 > 256: the score tile's scratch "
                                              "(head_dim x 32 floats) would pass 32 KiB");
    assert_ptr_equal(a->entries[7].row, &a->rows[2]);
    assert_int_equal(a->entries[7].attention, 3);
    plan_free(&p);
    shapes_free(&s);
}

/* The plans do not depend on the order of the entries; 256 is the widest head planned. */
static void test_order_and_gate_edge(void **state)
{
    (void)state;
    struct shapes s1, s2;
    struct plan p1, p2;
    plan_from_text("attention:\n"
                   "  - {name: b, head_dim: 256, q_heads: 8, kv_heads: 8, n_q: 1}\n"
                   "  - {name: a, head_dim: 8, q_heads: 3, kv_heads: 1, n_q: [2, 1]}\n",
                   &s1, &p1);
    plan_from_text("attention:\n"
                   "  - {name: a, head_dim: 8, q_heads: 3, kv_heads: 1, n_q: [1, 2]}\n"
                   "  - {name: b, head_dim: 256, q_heads: 8, kv_heads: 8, n_q: 1}\n",
                   &s2, &p2);
    assert_int_equal(p1.attn.fallback_count, 0);
    assert_int_equal(p1.attn.row_count, 3);
    assert_int_equal(p2.attn.row_count, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_string_equal(p1.attn.rows[i].name, p2.attn.rows[i].name);
        assert_int_equal(p1.attn.rows[i].pairs, p2.attn.rows[i].pairs);
    }
    assert_string_equal(p1.attn.rows[2].name, "attn_f16_d256_h8_kv8_q1");
    assert_int_equal(p1.attn.rows[0].pairs, 3);
    assert_int_equal(p1.attn.rows[1].pairs, 4);
    assert_int_equal(p1.count, 0); /* a file of attention entries alone */
    plan_free(&p1);
    plan_free(&p2);
    shapes_free(&s1);
    shapes_free(&s2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pairs),
        cmocka_unit_test(test_rows_and_entries),
        cmocka_unit_test(test_order_and_gate_edge),
    };
    return cmocka_run_group_tests_name("attn_plan", tests, NULL, NULL);
}
