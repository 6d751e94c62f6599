/* The blocking of a Q8_0 plan. Its tiles (templates/base/q8_tile_r*.c.in) walk one strip of
 * VLEN / 8 columns over a K block for one or two rows; the driver (runtime/driver.c) walks
 * column blocks > K blocks > strips > row tiles, so a strip's weights of a K block are read
 * from DRAM once and then from L1 by every row tile, a K block of the quantised X (about one
 * byte per element) stays in cache across the column block's strips, and the column block's
 * partial sums (bucket x col_block floats) stay in the L2 between K blocks. */
#include "blocking.h"

/* Bytes per column of one 32-k block of packed Q8_0 weights: an FP16 scale and 32 int8, as
 * GGUF's (gr_contract.h's GR_Q8_PANEL_BLOCK_BYTES). */
#define Q8_PANEL_BLOCK_BYTES 34

/* Vector work of one block (32 k) of one strip for one row, in LMUL units at the tiles'
 * LMULs (int8 m1, int16 m2, int32 and FP32 m4; widening doubled): 16 vwmul + 16 vwmacc (2
 * each), 16 vwadd.wv (4), the sum's zeroing, the scale product, the conversion and the fma
 * (4 each); the block's weight loads (32 registers' worth), shared by the tile's rows; the
 * FP16 scales (2) and their conversion to FP32 (q8_scales: two operations at e16 m2, 2 each,
 * two widening ones, 4 each, three at LMUL 4), by the tile when it is the strip's only one,
 * else once for the strip's `rows` rows, stored (4) and loaded by each tile (4). What make
 * bench-count measures, before the loop overhead. */
static double vwork_per_mac(unsigned tile_rows, unsigned rows, uint64_t vlen)
{
    const double per_row = 16 * 2 + 16 * 2 + 16 * 4 + 4 * 4, widen = 2 + 2 * 2 + 2 * 4 + 3 * 4;
    const double per_tile = rows > tile_rows ? 32 + 4 : 32 + widen;
    const double per_strip = rows > tile_rows ? widen + 4 : 0;
    return (per_row + per_tile / tile_rows + per_strip / rows) / (32.0 * (double)(vlen / 8));
}

/* The model's DRAM bytes of a call with column blocks of cb columns and K blocks of kc, beside
 * the weights, X and Y once: the quantised X again for every column block when the block's
 * weights between two reads of it, and X itself, do not stay in three quarters of the L2
 * (LRU: the weights stream through it); the partial sums written and read back between K
 * blocks when one K block's pass over the column block (its weights, the sums, X's K block)
 * does not stay there either. */
static double extra_bytes(uint64_t bucket, uint64_t n_pad, uint64_t k, uint64_t kc, uint64_t cb,
                          uint64_t l2_bytes)
{
    const double room = 0.75 * (double)l2_bytes, q8 = 1 + 4.0 / 32; /* bytes per X element */
    const double x_q = (double)bucket * (double)k * q8, sums = (double)bucket * (double)cb * 4;
    const double col_blocks = (double)((n_pad + cb - 1) / cb);
    const double k_blocks = (double)((k + kc - 1) / kc);
    double extra = 0;
    if ((double)cb * (double)k * Q8_PANEL_BLOCK_BYTES / 32 + x_q > room)
        extra += x_q * (col_blocks - 1);
    const double pass = (double)cb * (double)kc * Q8_PANEL_BLOCK_BYTES / 32 + sums +
                        (double)bucket * (double)kc * q8;
    if (k_blocks > 1 && pass > room)
        extra += 2 * sums * col_blocks * (k_blocks - 1);
    return extra;
}

struct blocking blocking_q8_0(const struct target *t, unsigned tile_rows, unsigned bucket,
                              uint64_t n, uint64_t k, uint64_t l2_bytes)
{
    const uint64_t pw = t->vlen / 8, strips = (n + pw - 1) / pw;
    struct blocking b = {.order = ORDER_STRIPS, .col_block = bucket > 1 ? pw : strips * pw};
    /* The GEMV reads each weight once whatever the block sizes: one K block (sums in
     * registers), one column block of every column (no sums kept, so the driver steps once
     * per block for nothing). Else the K block and column block of least modelled traffic:
     * K blocks of 64, 128, 256 or as many k as fill half the L1 with a strip's weights (read
     * by every row tile), never more than K; column blocks of 1, 2, 4, ... panels up to N.
     * Ties go to the larger K block (fewer passes over the partial sums), then the smaller
     * column block. */
    uint64_t kc_l1 = t->l1d_kib * 1024 / 2 / (pw * Q8_PANEL_BLOCK_BYTES) * 32;
    kc_l1 = kc_l1 < 64 ? 64 : kc_l1;
    b.k_block = k;
    double extra = 0;
    if (bucket > 1) {
        static const uint64_t fixed[] = {256, 128, 64};
        b.k_block = kc_l1 > k ? k : kc_l1;
        extra = extra_bytes(bucket, strips * pw, k, b.k_block, pw, l2_bytes);
        for (unsigned i = 0; i <= sizeof fixed / sizeof fixed[0]; i++) {
            uint64_t kc = i == 0 ? b.k_block : fixed[i - 1];
            if (kc > b.k_block)
                continue;
            for (uint64_t cb = pw; cb < 2 * strips * pw; cb *= 2) {
                uint64_t c = cb > strips * pw ? strips * pw : cb;
                double e = extra_bytes(bucket, strips * pw, k, kc, c, l2_bytes);
                if (e < extra) {
                    extra = e;
                    b.k_block = kc;
                    b.col_block = c;
                }
            }
        }
    }
    const double weights = (double)(strips * pw) * (double)k / 32 * Q8_PANEL_BLOCK_BYTES;
    const double x = (double)bucket * (double)k * 4, y = (double)bucket * (double)n * 4;
    b.min_bytes = (double)n * (double)k / 32 * 34 + x + y;
    b.dram_bytes = weights + x + y + extra;
    b.vwork_per_mac = vwork_per_mac(bucket > 1 ? tile_rows : 1, bucket, t->vlen);
    const double macs = (double)bucket * (double)n * (double)k;
    b.seconds = b.vwork_per_mac * macs * ((double)t->vlen / (double)t->dlen) /
                    ((double)t->mhz * 1e6) +
                b.dram_bytes / ((double)t->dram_mb_s * 1e6);
    return b;
}
