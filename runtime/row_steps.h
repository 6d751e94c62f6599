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

#endif
