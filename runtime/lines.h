/* Where a call's K blocks start, which of X's elements its copy carries from one block to the
 * next, and whether Y is finished from the partial sums: from the plan's blocking and the
 * caller's pointers. A block of rows that does not start on a cache line shares its end lines
 * with its neighbours, which read (or fill and write back) them again once the L2 has let
 * them go; these rules keep each line of W, X and Y moved once wherever the caller's buffers
 * sit. Plain C on integers, so that the driver (runtime/driver.c) and its replay
 * (measure/replay/driver_replay.c) share them. */
#ifndef GEMM_RVV_LINES_H
#define GEMM_RVV_LINES_H

#include <stddef.h>
#include <stdint.h>

#define GR_LINE_BYTES 64u /* the cache line the rules align to */

/* K blocks: [0, first), then `block` k each (the last one shorter), 0 < first <= block. */
struct gr_k_blocks {
    size_t k, first, block;
};

/* K blocks of `block` k over the BF16 rows at address `rows`, ld_bytes apart, whose blocks
 * start at multiples of `step` k (1: plain weights; 2: packed, whose k-pairs start at even
 * k): a first block shorter by the rows' offset into their line, so that every later block
 * starts on a line (or, where step 2 cannot, one k before it: gr_k_carry), when the rows
 * share that offset (ld_bytes a whole number of lines) and the block is whole lines; else
 * blocks from k = 0. */
struct gr_k_blocks gr_k_blocks_lines(size_t k, size_t block, uintptr_t rows, size_t ld_bytes,
                                     size_t step);

/* The end of the block that starts at k0. */
size_t gr_k_block_end(const struct gr_k_blocks *b, size_t k0);

/* Elements of X a row carries between K blocks, at most: less than a line. */
#define GR_K_CARRY_MAX (GR_LINE_BYTES / 2)

/* The elements of the BF16 row at address `row` from a K block boundary kk (0 < kk < k) to
 * the end of its line (at most k - kk; 0 when kk starts a line): the block before reads them
 * with the rest of that line and keeps them for the block after, so that a line of X's rows
 * is read once where the blocks do not start on X's lines (blocks cut on W's lines, plain
 * weights; an odd offset, packed). */
size_t gr_k_carry(uintptr_t row, size_t k, size_t kk);

/* Whether strips-order loops finish Y from the partial sums instead of the tiles writing it:
 * when a strip's piece of a row of Y (strip_bytes; rows ldy_bytes apart from y) is not whole
 * lines, a line that two strips share would be filled and written back twice where the rows
 * crowd a few L2 sets (the strips of a column block run one after the other over all rows).
 * Only with more than one K block (the partial sums exist). */
int gr_y_from_partials(uintptr_t y, size_t ldy_bytes, size_t strip_bytes, int strips_order,
                       size_t k_blocks);

/* Where Y's rows from y (elements of y_bytes) can be finished up to once the strips before
 * column `col` are summed: the last column at or before col where row 0 starts a line, or
 * `done` (the columns finished so far) when there is none after it. */
size_t gr_y_line_col(uintptr_t y, size_t y_bytes, size_t col, size_t done);

/* The first column of Y that a column block ending at col_end leaves to the next block of its
 * piece (which ends at piece_end): where the block's last line of each row starts, when the
 * piece goes on and Y's rows share their offset into a line (ldy_bytes whole lines, y a
 * multiple of y_bytes); else col_end. The next block writes those columns with its first
 * ones, so that a line two column blocks share is written once, not filled and written back
 * twice (the blocks between have let it go). */
size_t gr_y_tail(uintptr_t y, size_t y_bytes, size_t ldy_bytes, size_t col_end, size_t piece_end);

#endif
