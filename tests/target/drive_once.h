/* One call of a plan's loops (runtime/driver.c) outside the API, as a worker runs them: the
 * kernel tests drive a plan with a chosen blocking and weight layout. */
#ifndef DRIVE_ONCE_H
#define DRIVE_ONCE_H

#include <stddef.h>
#include <stdint.h>

#include "gr_contract.h"

struct drive_operands {
    const uint16_t *x;
    size_t ldx, rows;
    const void *packed;     /* packed weights in the variant's layout, or NULL: plain rows */
    const uint16_t *plain;
    size_t ldw, panel_width;
    const float *bias;
    void *y;
    size_t ldy;
    int y_bf16;
};

/* Computes Y's columns [col_begin, col_end) with the variant's tiles and the blocking of L2
 * share `share`, in scratch of its own (fails the test when it cannot allocate it). Returns
 * whether the driver read X from its copy (gr_drive_copies_x). */
int drive_once(const struct gr_plan *plan, const struct gr_variant *variant, int share,
                const struct drive_operands *o, size_t col_begin, size_t col_end);

/* Computes Y's n columns as runtime/plan_call.c does for `pieces` threads, one after the other:
 * the shared copy of X made a share of the rows per piece where the blocking shares it
 * (gr_drive_shares_x), then each piece's column blocks, in rounds where the blocking says
 * col_rounds (the blocks as wide as gr_drive_rounds makes them for that many pieces).
 * Returns whether X was read from the shared copy. */
int drive_pieces(const struct gr_plan *plan, const struct gr_variant *variant, int share,
                 const struct drive_operands *o, size_t n, size_t pieces);

/* The variants this core runs, into out: base, and Zvfbfwma where the core has it; only those
 * GEMM_RVV_TEST_VARIANTS names when it is set (fails the test when none is left). Returns how
 * many. */
size_t runnable_variants(const struct gr_variant *out[2]);

#endif
