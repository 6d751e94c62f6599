/* The blocking of one (N, K, M bucket): loop order, K block and column block, chosen with a
 * model of what one call moves between DRAM and a target's L2 and what it executes. */
#ifndef GEN_BLOCKING_H
#define GEN_BLOCKING_H

#include <stdint.h>

#include "target.h"
#include "tile.h"

enum loop_order { ORDER_STRIPS = 0, ORDER_TILES = 1 }; /* as enum gr_order of the contract */

/* The weights a call reads: packed at create, or plain [N, K] rows (row stride K) that the
 * driver packs into scratch a K block at a time. */
enum weights { WEIGHTS_PACKED = 0, WEIGHTS_PLAIN = 1 };

/* Bytes of one strip's packed words of a K block, at most, on plain weights in strips order:
 * the tiles read them back at once, so they must stay in L1 (half of a 32 KiB L1D, next to
 * the activations). The driver cuts longer K blocks (GR_PLAIN_STRIP_BYTES of the contract). */
#define PLAIN_STRIP_BYTES 16384

/* Rows from which the model counts lines per cache set and the driver copies X (both are
 * about X's rows crowding a few sets), and plain weights get a blocking of their own. */
#define BLOCKING_SET_ROWS 32

/* When a call reads X's K blocks from a copy in scratch (struct gr_blocking's x_copy_*): a
 * row block of `rows` rows or more (0: never), `cols` columns or more (of the participant's
 * piece; of the whole call when shared), and X's rows a multiple of `stride` bytes apart.
 * `shared`: one copy for the call, made by all its participants before the column loop and
 * read by all (else each participant makes its own during its first column block); `rounds`:
 * the participants walk their column blocks in step, one round per column block, so that the
 * cores of a cluster read the same K block of the copy at about the same time (through their
 * one L2). Both only in blockings for several participants on one L2 (parts > 1). */
struct x_copy {
    uint64_t rows, cols, stride, shared, rounds;
};
/* (`rounds` is 0, or the participants a round is planned for: `parts`. A call with fewer on
 * one L2 widens its column blocks to cover a round's columns: runtime/driver.c's
 * gr_drive_rounds.) */

/* The X copy of a blocking with column blocks of col_block, for plans of (N, K, bucket) run
 * by `parts` participants on one L2 (1: a core alone). */
struct x_copy blocking_x_copy(unsigned bucket, uint64_t n, uint64_t k, uint64_t col_block,
                              unsigned parts);

/* Whether a call of `rows` rows, `cols` columns (the piece's, or the call's when c->shared) and
 * X's rows ldx_bytes apart reads X from its copy: what the driver does with the plan's fields. */
int x_copy_applies(const struct x_copy *c, uint64_t rows, uint64_t cols, uint64_t ldx_bytes);

struct blocking {
    enum loop_order order;
    uint64_t k_block;   /* even, or K for one block */
    uint64_t col_block; /* a multiple of the panel width at the target's VLEN */
    struct x_copy x_copy;
    /* The model's figures for one call with M = bucket rows on the weights it was chosen
     * for (packed, or plain), one thread: */
    double dram_bytes;    /* line fills from DRAM + dirty write-backs */
    double min_bytes;     /* packed weights + BF16 activations + FP32 outputs, each once */
    double vwork_per_mac; /* tile work + partial sums + widening, at the target's VLEN */
    double seconds;       /* compute + DRAM time, DRAM at a core's share of the bandwidth */
};

/* Columns of one panel of packed weights at the target's VLEN: VLMAX(e32, m8). */
uint64_t panel_width(const struct target *t);

/* The model for one blocking (k_block and col_block as given, col_block whole panels), the
 * call's columns split into `parts` pieces run at once on one L2 of l2_bytes (1: a core
 * alone). */
struct blocking blocking_model(const struct target *t, struct tile tile, unsigned bucket,
                               uint64_t n, uint64_t k, uint64_t l2_bytes, unsigned parts,
                               enum weights weights, enum loop_order order, uint64_t k_block,
                               uint64_t col_block);

/* The blocking of least modelled time for `parts` participants on one L2 of l2_bytes, among K
 * blocks of 16 .. 2048 and K, and column blocks of whole panels up to N. */
struct blocking blocking_choose(const struct target *t, struct tile tile, unsigned bucket,
                                uint64_t n, uint64_t k, uint64_t l2_bytes, unsigned parts,
                                enum weights weights);

/* The blocking of a Q8_0 plan of (N, K, bucket) with tiles of tile_rows rows for an L2 of
 * l2_bytes (gen/blocking_q8_0.c): strips order, the whole K for the GEMV, else K blocks whose
 * strip of weights fills half the L1; column blocks whose partial sums fill a quarter of the
 * L2; the model's figures for its call (min_bytes counts 34 bytes per 32 weights, FP32 X and
 * Y). */
struct blocking blocking_q8_0(const struct target *t, unsigned tile_rows, unsigned bucket,
                              uint64_t n, uint64_t k, uint64_t l2_bytes);

#endif
