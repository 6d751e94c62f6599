/* The blocking of one (N, K, M bucket): loop order, K block and column block, chosen with a
 * model of what one call moves between DRAM and a target's L2 and what it executes. */
#ifndef GEN_BLOCKING_H
#define GEN_BLOCKING_H

#include <stdint.h>

#include "target.h"
#include "tile.h"

enum loop_order { ORDER_STRIPS = 0, ORDER_TILES = 1 }; /* as enum gr_order of the contract */

struct blocking {
    enum loop_order order;
    uint64_t k_block;   /* even, or K for one block */
    uint64_t col_block; /* a multiple of the panel width at the target's VLEN */
    /* The model's figures for one call with M = bucket rows on packed weights, one thread: */
    double dram_bytes;    /* line fills from DRAM + dirty write-backs */
    double min_bytes;     /* packed weights + BF16 activations + FP32 outputs, each once */
    double vwork_per_mac; /* tile work + partial sums + widening, at the target's VLEN */
    double seconds;       /* compute + DRAM time, DRAM at a core's share of the bandwidth */
};

/* Columns of one panel of packed weights at the target's VLEN: VLMAX(e32, m8). */
uint64_t panel_width(const struct target *t);

/* The model for one blocking (k_block and col_block as given, col_block whole panels). */
struct blocking blocking_model(const struct target *t, struct tile tile, unsigned bucket,
                               uint64_t n, uint64_t k, uint64_t l2_bytes, enum loop_order order,
                               uint64_t k_block, uint64_t col_block);

/* The blocking of least modelled time with l2_bytes of L2, among K blocks of 16 .. 2048 and
 * K, and column blocks of whole panels up to N. */
struct blocking blocking_choose(const struct target *t, struct tile tile, unsigned bucket,
                                uint64_t n, uint64_t k, uint64_t l2_bytes);

#endif
