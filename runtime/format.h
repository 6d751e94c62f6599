/* The weight formats (enum gr_format), each described once for the one loop nest that runs
 * every plan (runtime/driver.c, plan_call.c), in the manner of BLIS's context and IREE's tile
 * table: how its packed panels are cut along K, how a row block's X reaches the tiles, which
 * tiles run and what a strip needs first. (Calls without a plan: fallback_call.c.) */
#ifndef GEMM_RVV_FORMAT_H
#define GEMM_RVV_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "gr_contract.h"

struct gr_drive;

struct gr_format_desc {
    const char *name;
    size_t x_bytes;    /* bytes of one of the caller's X values: BF16 or FP32 */
    size_t k_unit;     /* k of one unit of a packed panel along K: a k-pair, a block of 32 */
    size_t unit_bytes; /* bytes of one column of a panel per unit */
    /* X of a row block as the call prepares it once for all its participants, into the
     * shared scratch, or NULL: the driver reads the caller's BF16 rows and arranges each K
     * block for the variant's tiles (from a copy of them where the blocking says so). With it:
     * the bytes for a bucket of rows, rows [r0, r1) of the row block prepared at `shared`,
     * and a row tile's activations at row r of the K block at k0 set in the tile's arguments
     * (row r's are r x_stride elements of x_prepared_elem bytes, and r x_scale_stride
     * scales, past row 0's: the driver steps them so). */
    size_t (*x_prepared_bytes)(size_t rows, size_t k);
    size_t x_prepared_elem;
    void (*prepare_x)(const struct gr_drive *d, void *shared, size_t r0, size_t r1);
    void (*tile_x)(const struct gr_drive *d, struct gr_tile_args *a, size_t r, size_t k0);
    /* Bytes of scratch a strip needs first for its row tiles, and filling it (a->w, a->kc
     * set): Q8_0 widens the strip's scales once when several row tiles read them. NULL: none. */
    size_t (*strip_bytes)(const struct gr_drive *d);
    void (*strip_first)(const struct gr_drive *d, struct gr_tile_args *a, void *buf);
    /* The partial sums between K blocks: each strip's rows one after the other, or (0) rows
     * a column block wide. Q8_0's column blocks are wide where its K blocks are short, and
     * rows a power of two apart would crowd a few cache sets. */
    int sums_by_strip;
    /* The tiles (rows r at [r - 1]) when `variant` serves a call at LMUL lmul (the plan's,
     * or its one_tile_lmul for a call of one row tile). */
    const gr_tile_fn *(*tiles)(const struct gr_variant *variant, uint32_t lmul);
};

extern const struct gr_format_desc gr_format_bf16, gr_format_q8_0;

/* The descriptor of `format` (enum gr_format; only the known ones reach the runtime). */
const struct gr_format_desc *gr_format_of(uint32_t format);

/* Where the weights of column col (of a panel pw wide) at unit `unit` along K start in packed
 * weights of K k: panels one after the other, each its units one after the other, a unit its
 * pw columns' bytes; col % pw's own bytes within the unit are the layout's. */
static inline size_t gr_panel_offset(const struct gr_format_desc *f, size_t k, size_t pw,
                                     size_t col, size_t unit)
{
    const size_t units = (k + f->k_unit - 1) / f->k_unit;
    return (col / pw * units + unit) * f->unit_bytes * pw;
}

#endif
