/* The cache-line rules of runtime/lines.c, on addresses and sizes worked out by hand (lines of
 * 64 bytes, 32 BF16 elements): where K blocks start, what X carries between them, where Y is
 * finished from the partial sums and what a column block leaves to the next. The driver's
 * results under these rules are test_host_kernels' and the target tests'; the bytes they move,
 * make test-placement's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lines.h"

static const uintptr_t page = 0x10000;

static void expect_blocks(struct gr_k_blocks b, size_t k, size_t first, size_t block)
{
    assert_int_equal(b.k, k);
    assert_int_equal(b.first, first);
    assert_int_equal(b.block, block);
}

/* K blocks of 128 over rows 8 KiB apart. Rows 16 bytes into a line (k 8 of it): a first block
 * of 120, so that the next starts at byte 16 + 240 = 256, a line. Packed weights 18 bytes in
 * (k 9, odd): blocks start at even k, so on a line's last k: 118 (byte 254, k 31 of its line);
 * plain ones there start on the line: 119.
 * Otherwise blocks from k = 0: rows on a line, at an odd byte, not whole lines apart, blocks
 * that are not whole lines, one block for all K; a block of 0 is taken as 1. */
static void test_k_blocks_lines(void **state)
{
    (void)state;
    expect_blocks(gr_k_blocks_lines(4096, 128, page + 16, 8192, 1), 4096, 120, 128);
    expect_blocks(gr_k_blocks_lines(4096, 128, page + 18, 8192, 2), 4096, 118, 128);
    expect_blocks(gr_k_blocks_lines(4096, 128, page + 18, 8192, 1), 4096, 119, 128);
    expect_blocks(gr_k_blocks_lines(4096, 128, page, 8192, 1), 4096, 128, 128);
    expect_blocks(gr_k_blocks_lines(4096, 128, page + 17, 8192, 1), 4096, 128, 128);
    expect_blocks(gr_k_blocks_lines(4096, 128, page + 16, 8194, 1), 4096, 128, 128);
    expect_blocks(gr_k_blocks_lines(4096, 100, page + 16, 8192, 1), 4096, 100, 100);
    expect_blocks(gr_k_blocks_lines(4096, 8192, page + 16, 8192, 1), 4096, 4096, 4096);
    expect_blocks(gr_k_blocks_lines(4096, 0, page, 8192, 1), 4096, 1, 1);
    /* Block ends: the first, a later one, the last cut at K. */
    struct gr_k_blocks b = gr_k_blocks_lines(4096, 128, page + 16, 8192, 1);
    assert_int_equal(gr_k_block_end(&b, 0), 120);
    assert_int_equal(gr_k_block_end(&b, 120), 248);
    assert_int_equal(gr_k_block_end(&b, 120 + 31 * 128), 4096);
}

/* Rows 16 bytes into a line: a boundary at k 120 is on a line (nothing carried); at k 100 it is
 * byte 216, 24 into its line: the 20 k to the line's end; near the end of K, only what is left
 * (k 4090: 30 to the line's end, 6 of K); none at k 0 or K. */
static void test_k_carry(void **state)
{
    (void)state;
    assert_int_equal(gr_k_carry(page + 16, 4096, 120), 0);
    assert_int_equal(gr_k_carry(page + 16, 4096, 100), 20);
    assert_int_equal(gr_k_carry(page + 16, 4096, 4090), 6);
    assert_int_equal(gr_k_carry(page + 16, 4096, 0), 0);
    assert_int_equal(gr_k_carry(page + 16, 4096, 4096), 0);
}

/* Strips order with K blocks finishes Y from the partial sums unless Y, its rows and a strip's
 * piece of a row are all whole lines. */
static void test_y_from_partials(void **state)
{
    (void)state;
    assert_false(gr_y_from_partials(page, 16384, 128, 1, 2));
    assert_true(gr_y_from_partials(page + 4, 16384, 128, 1, 2));
    assert_true(gr_y_from_partials(page, 16388, 128, 1, 2));
    assert_true(gr_y_from_partials(page, 16384, 96, 1, 2));
    assert_false(gr_y_from_partials(page + 4, 16384, 96, 0, 2)); /* tiles order */
    assert_false(gr_y_from_partials(page + 4, 16384, 96, 1, 1)); /* one K block */
}

/* FP32 Y 16 bytes past a line: column 64 is 272 bytes in, its line starts at 256, column 60;
 * never before what is done; a line that starts before Y, or Y off its element: `done`. */
static void test_y_line_col(void **state)
{
    (void)state;
    assert_int_equal(gr_y_line_col(page + 16, 4, 64, 0), 60);
    assert_int_equal(gr_y_line_col(page + 16, 4, 64, 61), 61);
    assert_int_equal(gr_y_line_col(page + 48, 4, 2, 1), 1);
    assert_int_equal(gr_y_line_col(page + 2, 4, 64, 0), 0);
}

/* Where a column block leaves the rest of its last line of Y to the next (runtime/lines.h's
 * gr_y_tail), worked out by hand. */
static void test_y_tail(void **state)
{
    (void)state;
    /* FP32 Y 16 bytes past a line: column 64 is 272 bytes in, its line starts at 256 */
    assert_int_equal(gr_y_tail(page + 16, 4, 4096 * 4, 64, 1024), 60);
    /* BF16 Y 2 bytes past a line: column 64 is 130 bytes in, its line starts at 128 */
    assert_int_equal(gr_y_tail(page + 2, 2, 4096 * 2, 64, 1024), 63);
    /* on its line: nothing left over */
    assert_int_equal(gr_y_tail(page, 4, 4096 * 4, 64, 1024), 64);
    /* the piece's last block, rows at different offsets, Y off its element: nothing kept */
    assert_int_equal(gr_y_tail(page + 16, 4, 4096 * 4, 1024, 1024), 1024);
    assert_int_equal(gr_y_tail(page + 16, 4, 4100, 64, 1024), 64);
    assert_int_equal(gr_y_tail(page + 2, 4, 4096 * 4, 64, 1024), 64);
    /* a line that starts before Y: nothing kept */
    assert_int_equal(gr_y_tail(page + 48, 4, 4096 * 4, 2, 1024), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_k_blocks_lines),
        cmocka_unit_test(test_k_carry),
        cmocka_unit_test(test_y_from_partials),
        cmocka_unit_test(test_y_line_col),
        cmocka_unit_test(test_y_tail),
    };
    return cmocka_run_group_tests_name("lines", tests, NULL, NULL);
}
