/* The loops around the micro-kernels, written once for every plan (BLIS's loops around its
 * micro-kernel, IREE's mmt4d outer loop): column blocks > K blocks > strips and row tiles in
 * the plan's order, for every weight format (its descriptor, format.h, says what differs).
 * Built for the base ISA: only the micro-kernels run vector code. Every function of driver.c
 * and plan_call.c is named gr_drive_* or drive_*: the lab counts the driver by those prefixes
 * (measure/count/count.sh). */
#ifndef GEMM_RVV_DRIVER_H
#define GEMM_RVV_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#include "format.h"
#include "gr_contract.h"
#include "operands.h"

/* One block of rows of one call, as the driver walks it. */
struct gr_drive {
    const struct gr_plan *plan;
    const struct gr_format_desc *format; /* the plan's weights' */
    const struct gr_variant *variant; /* whose tiles run (BF16), on weights in its layout */
    gr_tile_fn tile[GR_TILE_ROWS_MAX]; /* [r - 1]: the tile a row tile of r rows runs, of the
                                          plan's format and variant at its row_tile_lmul */
    size_t tile_cols[GR_TILE_ROWS_MAX]; /* [r - 1]: the columns of that tile's strips,
                                           VLMAX(e32, its LMUL) */
    struct gr_blocking blocking; /* the plan's, for the L2 share this call runs with */
    size_t strip;                /* columns per strip of the loops: the widest of the call's
                                    row tiles' (narrower ones walk it in strips of their own) */
    size_t panel_width;          /* columns per panel of packed weights */
    size_t col_block, k_block;   /* rounded to whole panels; K for a single block */
    const void *x;               /* the block's first row of X as the caller gave it (the
                                    format's type: BF16, or FP32 for Q8_0) */
    size_t ldx, rows;            /* rows <= plan->bucket */
    size_t single_row;           /* the row of the block's last row tile when that tile has one
                                    row and others come before it, else rows: that tile runs
                                    first in each strip (Q8_0's converts the strip's scales for
                                    the others) */
    const void *packed;          /* packed weights in the variant's layout, or NULL for plain */
    const uint16_t *plain;       /* plain [N, K] weights, row stride ldw (BF16 only) */
    size_t ldw;
    const float *bias;
    void *y;                     /* the block's first row of Y */
    size_t ldy;
    int y_bf16;
    const void *x_shared;        /* the block's X prepared once for the call's participants:
                                    BF16, the shared copy (gr_drive_shares_x, made by
                                    gr_drive_prepare_x_rows), or NULL: none; formats that
                                    prepare X (x_prepared_bytes), its prepared rows */
};

/* Sets d up for call c on its plan: the block sizes from the plan, its format's descriptor,
 * the variant that runs it (BF16) and the blocking of L2 share `share` (GR_L2_ALONE or
 * GR_L2_SHARED) for c's weights, packed or plain; c's operands. gr_drive_row_block then points
 * it at one block of rows. */
void gr_drive_init(struct gr_drive *d, const struct gr_plan *plan,
                   const struct gr_variant *variant, int share, const struct gr_call *c);

/* Points d at c's block of rows from `row` (plan->bucket rows at most, cut by the plan's rule,
 * row_steps.h; the next block starts d->rows on): X, Y, the rows, no X prepared yet. */
void gr_drive_row_block(struct gr_drive *d, const struct gr_call *c, size_t row);

/* Whether gr_drive_columns on columns [col_begin, col_end) reads X from a copy of its own in
 * scratch: as the blocking's x_copy_* fields say (never when the copy is shared). */
int gr_drive_copies_x(const struct gr_drive *d, size_t col_begin, size_t col_end);

/* Whether a call of n columns prepares d's row block of X once for all its participants
 * (the format prepares X; BF16: the blocking's x_copy_shared and x_copy_* fields say one copy
 * is shared), and the bytes of that preparation for a bucket of rows (0: never prepared). */
int gr_drive_shares_x(const struct gr_drive *d, size_t n);
size_t gr_drive_shared_bytes(const struct gr_drive *d);

/* Rows [r0, r1) of d's row block of X prepared at `shared` (BF16: copied, cut into the K
 * blocks d walks, each block's rows one after the other, as the own copy). */
void gr_drive_prepare_x_rows(const struct gr_drive *d, void *shared, size_t r0, size_t r1);

/* For a call of `pieces` participants in rounds (the blocking's col_rounds; compact threads,
 * col_rounds to an L2): a round covers col_block x col_rounds columns of one L2's
 * participants, so with fewer each takes a wider column block, whole panels. Sets
 * d->col_block to it and returns it; 0, d unchanged, for blockings without rounds. */
size_t gr_drive_rounds(struct gr_drive *d, size_t pieces);

/* Scratch bytes one participant needs for d (a row block of plan->bucket rows at most). */
size_t gr_drive_bytes(const struct gr_drive *d);

/* Where the parts of a participant's scratch start, in bytes from its start, in this order:
 * partial sums, arranged activations, packed words (plain weights), its own copy of X, X's
 * carried elements, the sums of Y kept for the next column block, what the format's strips
 * need first; then its end (gr_drive_bytes). A part of no bytes starts where the next does.
 * For the measurement lab, which names the traffic of each (measure/replay/driver_replay.c). */
enum { GR_DRIVE_SCRATCH_PARTS = 7 };
void gr_drive_scratch_parts(const struct gr_drive *d, size_t at[GR_DRIVE_SCRATCH_PARTS + 1]);

/* Columns [begin, end) of Y. */
struct gr_cols {
    size_t begin, end;
};

/* Computes Y's columns `cols` (cols.begin a multiple of the panel width) of a participant's
 * piece of the columns with `scratch` of gr_drive_bytes() bytes, 64-byte aligned. One call
 * may walk the whole piece, or several calls its column blocks in order with the same
 * scratch: a column block leaves the last line of Y it shares with the next to that block
 * (gr_y_tail). */
void gr_drive_columns(const struct gr_drive *d, struct gr_cols piece, struct gr_cols cols,
                      void *scratch);

#endif
