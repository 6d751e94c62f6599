/* How a call's rows are cut, into row blocks of a plan's bucket and each row block into row
 * tiles of its tile_rows: the one rule, on plain integers, that the generator's tile model
 * (gen/tile.c) and the driver (runtime/driver.c, on the plan's fields) both evaluate. */
#ifndef GEMM_RVV_ROW_STEPS_H
#define GEMM_RVV_ROW_STEPS_H

#include <stdint.h>

/* The end of the step from row `at` of [at, end): `step` rows; but where the rows after it
 * would be fewer than `least` (and some), this step and the last share them, the larger half
 * first (R = 8, least 3: 10 rows are 5 + 5, 9 are 5 + 4, 11 are 8 + 3). A tile of few rows is
 * slow for its chains of FMAs (gen/tile.c: tile_rows_least); halves of step + fewer than
 * least rows are no wider than a step. */
static inline uint64_t gr_row_step_end(uint64_t at, uint64_t step, uint64_t least, uint64_t end)
{
    const uint64_t left = end - at;
    if (left <= step)
        return end;
    if (left - step >= least || left - step > step)
        return at + step;
    return at + (left + 1) / 2;
}

/* The row tiles a call of m rows runs, as a set: bit r - 1 for a tile of r rows (step <= 32).
 * Its row blocks of `block` rows, each cut into row tiles of `step`, by the rule above. */
static inline uint32_t gr_row_tiles(uint64_t m, uint64_t block, uint64_t step, uint64_t least)
{
    uint32_t set = 0;
    for (uint64_t row = 0, block_end; row < m; row = block_end) {
        block_end = gr_row_step_end(row, block, least, m);
        for (uint64_t r = row, end; r < block_end; r = end) {
            end = row + gr_row_step_end(r - row, step, least, block_end - row);
            set |= UINT32_C(1) << (end - r - 1);
        }
    }
    return set;
}

#endif
