/* The blocking of a Q8_0 plan. Its tiles (templates/base/q8_tiles.c.in) walk one strip of
 * VLEN / 8 columns over a K block for one or two rows, with the strip's partial sums between K
 * blocks kept per row; the driver (runtime/q8_0_plan.c) walks strips > K blocks > row tiles,
 * so a strip's weights of a K block are read from DRAM once and then from L1 by every row
 * tile, and the quantised X (about one byte per element) is read from the L2 by each strip. */
#include "blocking.h"

/* Bytes per column of one 32-k block of packed Q8_0 weights: an FP32 scale and 32 int8. */
#define Q8_PANEL_BLOCK_BYTES 36

/* Vector work of one block (32 k) of one strip for one row, in LMUL units at the tiles'
 * LMULs (int8 m1, int16 m2, int32 and FP32 m4; widening doubled): 16 vwmul + 16 vwmacc (2
 * each), 16 vwadd.wv (4), the sum's zeroing, the scale product, the conversion and the fma
 * (4 each); the block's weight loads (32 registers' worth) and scales (4) shared by the tile's
 * rows. What make bench-count measures, before the strips' loop overhead. */
static double vwork_per_mac(unsigned tile_rows, uint64_t vlen)
{
    double per_row = 16 * 2 + 16 * 2 + 16 * 4 + 4 * 4, shared = 32 + 4;
    return (per_row + shared / tile_rows) / (32.0 * (double)(vlen / 8));
}

struct blocking blocking_q8_0(const struct target *t, unsigned tile_rows, unsigned bucket,
                              uint64_t n, uint64_t k)
{
    const uint64_t pw = t->vlen / 8, strips = (n + pw - 1) / pw;
    struct blocking b = {.order = ORDER_STRIPS, .col_block = strips * pw};
    /* The GEMV reads each weight once whatever the K block: one block, sums in registers.
     * Else a strip's weights of a K block stay in half the L1 while the row tiles read them
     * (at least two blocks, so that K blocks end inside K in the test shapes too). */
    uint64_t kc = k;
    if (bucket > 1) {
        kc = t->l1d_kib * 1024 / 2 / (pw * Q8_PANEL_BLOCK_BYTES) * 32;
        kc = kc < 64 ? 64 : kc;
        kc = kc > k ? k : kc;
    }
    b.k_block = kc;
    const double weights = (double)(strips * pw) * (double)k / 32 * Q8_PANEL_BLOCK_BYTES;
    const double x = (double)bucket * (double)k * 4, y = (double)bucket * (double)n * 4;
    const double x_q = (double)bucket * (double)k * (1 + 4.0 / 32);
    /* The quantised X is read by every strip: from DRAM again when it does not stay in half
     * the L2 beside the weights streaming through. */
    const double x_again = x_q > (double)t->l2_kib * 1024 / 2 ? x_q * (double)(strips - 1) : 0;
    b.min_bytes = (double)n * (double)k / 32 * 34 + x + y;
    b.dram_bytes = weights + x + y + x_again;
    b.vwork_per_mac = vwork_per_mac(bucket > 1 ? tile_rows : 1, t->vlen);
    const double macs = (double)bucket * (double)n * (double)k;
    b.seconds = b.vwork_per_mac * macs * ((double)t->vlen / (double)t->dlen) /
                    ((double)t->mhz * 1e6) +
                b.dram_bytes / ((double)t->dram_mb_s * 1e6);
    return b;
}
