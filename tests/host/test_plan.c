/* The plan (gen/plan.c): which kernels a shapes file needs, how layers share them, and that
 * it does not depend on the order of the layers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "gen_input.h"
#include "plan.h"

static void test_rows(void **state)
{
    (void)state;
    struct shapes s;
    struct plan p;
    plan_from_text(llama_shapes, &s, &p);
    /* 10 (layer, M) entries; only tiny goes to the fallback (up_proj M=200 runs in two row
     * blocks of the M <= 128 plan). */
    assert_int_equal(p.count, 10);
    assert_int_equal(p.fallback_count, 1);
    /* One plan per shape key (N, K, bucket), sorted. */
    static const struct { uint64_t n, k; unsigned bucket; const char *name; } want[] = {
        {4096, 4096, 1, "bf16_gemv_m1_n4096_k4096"},   {4096, 4096, 4, "bf16_gemm_m4_n4096_k4096"},
        {4096, 4096, 16, "bf16_gemm_m16_n4096_k4096"}, {4096, 11008, 1, "bf16_gemv_m1_n4096_k11008"},
        {11008, 4096, 1, "bf16_gemv_m1_n11008_k4096"}, {11008, 4096, 128, "bf16_gemm_m128_n11008_k4096"},
    };
    assert_int_equal(p.row_count, 6);
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(p.rows[i].n, want[i].n);
        assert_int_equal(p.rows[i].k, want[i].k);
        assert_int_equal(p.rows[i].bucket, want[i].bucket);
        assert_string_equal(p.rows[i].name, want[i].name);
    }
    /* q and k share the M=1 and M=4 plans; M=3 and M=4 share the bucket-4 plan. */
    assert_int_equal(p.rows[0].users, 2);
    assert_int_equal(p.rows[1].users, 3);
    assert_int_equal(p.entries[1].m, 3);
    assert_int_equal(p.entries[1].decision.bucket, 4);
    assert_int_equal(p.entries[1].row, 1);
    assert_int_equal(p.entries[7].row, 5);
    assert_int_equal(p.entries[7].decision.row_blocks, 2);
    assert_string_equal(p.entries[7].decision.reason, "M=200 > 128: 2 row blocks of M <= 128");
    assert_int_equal(p.entries[9].row, NO_PLAN);
    assert_string_equal(p.entries[9].decision.reason,
                        "N=896 < 1024, K=896 < 1024, M*N*K=802816 < 1000000");
    /* The micro-kernels to emit, those a call may run: at LMUL 8 the GEMV's and one row's
     * call; at LMUL 4 the 4x4 plan's and the 13x2 plan's row tiles of 2 .. 5 rows (a call's
     * only one, or a row block's last); at LMUL 2 its row tiles of 6 .. 13 rows. */
    assert_int_equal(p.tile_rows_from_lmul[8], 1);
    assert_int_equal(p.tile_rows_by_lmul[8], 1);
    assert_int_equal(p.tile_rows_from_lmul[4], 2);
    assert_int_equal(p.tile_rows_by_lmul[4], 5);
    assert_int_equal(p.tile_rows_from_lmul[2], 6);
    assert_int_equal(p.tile_rows_by_lmul[2], 13);
    assert_int_equal(p.tile_rows_by_lmul[1], 0);
    /* the 13x2 plan's row tiles of each count of rows */
    static const uint8_t row_tile[13] = {8, 4, 4, 4, 4, 2, 2, 2, 2, 2, 2, 2, 2};
    for (unsigned m = 1; m <= 13; m++)
        assert_int_equal(p.rows[5].row_tile_lmul[m - 1], row_tile[m - 1]);
    plan_free(&p);
    shapes_free(&s);
}

static void test_order_does_not_matter(void **state)
{
    (void)state;
    const char *reversed =
        "layers:\n"
        "  - {name: tiny,      N: 896,   K: 896,   M: [1]}\n"
        "  - {name: down_proj, N: 4096,  K: 11008, M: [1]}\n"
        "  - {name: up_proj,   N: 11008, K: 4096,  M: [200, 1]}\n"
        "  - {name: k_proj,    N: 4096,  K: 4096,  M: [4, 1]}\n"
        "  - {name: q_proj,    N: 4096,  K: 4096,  M: [16, 4, 3, 1]}\n";
    struct shapes s1, s2;
    struct plan p1, p2;
    plan_from_text(llama_shapes, &s1, &p1);
    plan_from_text(reversed, &s2, &p2);
    assert_int_equal(p1.row_count, p2.row_count);
    /* Field by field: struct blocking has padding after its enum, whose bytes are unspecified. */
    for (size_t i = 0; i < p1.row_count; i++) {
        const struct plan_row *a = &p1.rows[i], *b = &p2.rows[i];
        assert_true(a->n == b->n && a->k == b->k && a->bucket == b->bucket);
        assert_string_equal(a->name, b->name);
        assert_int_equal(a->users, b->users);
        for (int j = 0; j < SHARES; j++) {
            const struct blocking *ab[2] = {&a->blocking[j], &a->plain[j]};
            const struct blocking *bb[2] = {&b->blocking[j], &b->plain[j]};
            for (int w = 0; w < 2; w++) { /* packed, then plain weights */
                assert_int_equal(ab[w]->order, bb[w]->order);
                assert_int_equal(ab[w]->k_block, bb[w]->k_block);
                assert_int_equal(ab[w]->col_block, bb[w]->col_block);
                assert_int_equal(ab[w]->x_copy.rows, bb[w]->x_copy.rows);
            }
        }
    }
    plan_free(&p1);
    plan_free(&p2);
    shapes_free(&s1);
    shapes_free(&s2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows),
        cmocka_unit_test(test_order_does_not_matter),
    };
    return cmocka_run_group_tests_name("plan", tests, NULL, NULL);
}
