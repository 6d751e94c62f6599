/* The column split over a call's threads (runtime/split.c): pieces of whole panels, as many as
 * asked or one per thread, never more than the panels, the last one shorter; worked out by hand
 * for panels of 32 columns. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dispatch.h"
#include "gemm_rvv.h"

static void expect_split(size_t n, size_t want, size_t pieces, size_t cols)
{
    size_t got_cols = 0;
    assert_int_equal(gr_split_columns(n, 32, want, &got_cols), pieces);
    assert_int_equal(got_cols, cols);
    /* The pieces cover the columns, the last one not empty. */
    assert_true((pieces - 1) * cols < n && pieces * cols >= n);
}

static void test_pieces_of_whole_panels(void **state)
{
    (void)state;
    expect_split(4096, 1, 1, 4096);
    expect_split(4096, 3, 3, 1376);  /* 128 panels: 43, 43, 42 */
    expect_split(4096, 5, 5, 832);   /* 26 panels each, the last 24 */
    expect_split(100, 8, 4, 32);     /* 4 panels (the last of 4 columns): at most 4 pieces */
    expect_split(288, 4, 3, 96);     /* 9 panels in pieces of 3: 3 pieces, not 4 */
    expect_split(31, 2, 1, 32);      /* less than a panel */
}

/* No count asked: one piece per thread of the library's pool. */
static void test_one_piece_per_thread(void **state)
{
    (void)state;
    int before = gemm_rvv_get_threads();
    assert_int_equal(gemm_rvv_set_threads(2), GEMM_RVV_OK);
    expect_split(4096, 0, 2, 2048);
    assert_int_equal(gemm_rvv_set_threads(3), GEMM_RVV_OK);
    expect_split(4096, 0, 3, 1376);
    assert_int_equal(gemm_rvv_set_threads(before), GEMM_RVV_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pieces_of_whole_panels),
        cmocka_unit_test(test_one_piece_per_thread),
    };
    return cmocka_run_group_tests_name("split", tests, NULL, NULL);
}
