/* Q8_0 plans in the driver (gen/blocking_q8_0.c says why they are blocked so): each row block's
 * X quantised once for the call into the shared scratch, a share of the rows per participant,
 * and read by the tiles in place; a strip read by more than one row tile has its K block's
 * scales widened to FP32 once, for all of them. Panels: blocks of 32 k, 34 bytes a column. */
#include "driver.h"
#include "q8_0.h"

/* The row block's quantised rows, laid out for a bucket of rows. */
static struct gr_q8_x q8_quantised(const struct gr_drive *d)
{
    return gr_q8_x_at((void *)d->x_shared, d->plan->bucket, d->plan->k);
}

static void q8_prepare_x(const struct gr_drive *d, void *shared, size_t r0, size_t r1)
{
    const size_t k = d->plan->k;
    const struct gr_q8_x x = gr_q8_x_at(shared, d->plan->bucket, k);
    /* the tiles' vector rule where they run: a plan's call has them */
    gr_q8_0_quantize((const float *)d->x + r0 * d->ldx, r1 - r0, d->ldx, k, x.q + r0 * k,
                     x.d + r0 * (k / GR_Q8_BLOCK));
}

static void q8_tile_x(const struct gr_drive *d, struct gr_tile_args *a, size_t r, size_t k0)
{
    const size_t k = d->plan->k, blocks = k / GR_Q8_BLOCK;
    const struct gr_q8_x x = q8_quantised(d);
    a->x = x.q + r * k + k0;
    a->x_stride = k;
    a->x_scale = x.d + r * blocks + k0 / GR_Q8_BLOCK;
    a->x_scale_stride = blocks;
}

/* Several row tiles read a strip when the row block may hold more rows than a tile. */
static int q8_strip_shared(const struct gr_drive *d)
{
    return d->plan->bucket > d->plan->tile_rows;
}

static size_t q8_strip_bytes(const struct gr_drive *d)
{
    return q8_strip_shared(d) ? d->k_block / GR_Q8_BLOCK * d->strip * sizeof(float) : 0;
}

/* The strip's scales as FP32 for its row tiles of 2 rows: widened here, or, where the row
 * block ends in a tile of one row (which runs first, d->single_row, and converts them anyway),
 * written by that tile (gr_contract.h). */
static void q8_strip_first(const struct gr_drive *d, struct gr_tile_args *a, void *buf)
{
    a->w_scale = NULL;
    if (d->rows > d->plan->tile_rows) {
        if (d->single_row == d->rows)
            gr_q8_0_widen_scales(a->w, a->kc / GR_Q8_BLOCK, buf);
        a->w_scale = buf;
    }
}

static const gr_tile_fn *q8_tiles(const struct gr_variant *variant, uint32_t lmul)
{
    (void)variant, (void)lmul; /* one set, for every core with V, on panels of VLMAX(e8, m1) */
    return gr_q8_0_tiles;
}

const struct gr_format_desc gr_format_q8_0 = {
    .name = "q8_0",
    .x_bytes = sizeof(float),
    .k_unit = GR_Q8_BLOCK,
    .unit_bytes = GR_Q8_PANEL_BLOCK_BYTES,
    .x_prepared_bytes = gr_q8_x_bytes,
    .x_prepared_elem = sizeof(int8_t),
    .prepare_x = q8_prepare_x,
    .tile_x = q8_tile_x,
    .strip_bytes = q8_strip_bytes,
    .strip_first = q8_strip_first,
    .sums_by_strip = 1,
    .tiles = q8_tiles,
};
