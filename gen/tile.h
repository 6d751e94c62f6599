/* Picks a kernel's register tile from a model of what one k-pair step executes. */
#ifndef GEN_TILE_H
#define GEN_TILE_H

#include <stdint.h>

/* The vector register file every RVV 1.0 core has: 32 registers. */
#define VREGS 32
/* What a tile may use of them: one register group (LMUL registers) stays free, so the compiler
 * can load the next weights while the last FMAs of a step still read the current ones, and
 * does not spill (make test-spills checks every kernel). */
/* Rows per register block are capped so the remainder paths (one per row count) stay small. */
#define TILE_MAX_ROWS 16

struct tile {
    unsigned rows; /* MR: rows of X per register block */
    unsigned lmul; /* LMUL of each accumulator and weight vector (1, 2, 4 or 8) */
};

/* Estimated cost of serving M = bucket rows with a tile, per multiply-accumulate, at the
 * design VLEN of 256 (the figures scale together with VLEN, so the choice does not). */
struct tile_cost {
    double vwork_per_mac; /* sum over vector instructions of LMUL (doubled when widening) */
    double insns_per_mac; /* scalar + vector instructions */
};

/* Live vector registers of the kernel's inner loop: accumulators + loaded word + widened half. */
unsigned tile_vregs(struct tile t);

/* Whether a tile fits: tile_vregs() plus the one free group within VREGS. */
int tile_fits(struct tile t);

/* An FMA's latency on the X60 (llvm-mca-22's model), in cycles: an accumulator takes its k in
 * order, so it takes an FMA this often at most. */
#define TILE_FMA_CYCLES 5

/* The fewest rows a row tile of t's LMUL runs where the rows allow (runtime/row_steps.h shares
 * a smaller remainder with the tile before it): R rows' FMAs, LMUL L cycles each, fill the FP
 * unit only when R x L covers TILE_FMA_CYCLES (2x2 at most 80 %); t.rows at most. */
unsigned tile_rows_least(struct tile t);

/* The model's cost of a bucket's rows cut into row tiles as the driver cuts them. */
struct tile_cost tile_cost(struct tile t, unsigned bucket);

/* What the choice minimizes: vector work, plus instructions at a quarter weight (they take
 * issue slots, but the vector datapath is the tighter limit). */
double tile_score(struct tile_cost c);

/* The tile for a bucket (1 = the GEMV kernel): the cheapest within the register budget. */
struct tile tile_choose(unsigned bucket);

/* The LMUL of the cheapest tile of exactly `rows` rows within the register budget (the
 * widest that fits). */
unsigned tile_one_lmul(unsigned rows);

/* The LMUL a row tile of `rows` rows runs at on a plan of tile t (gr_plan.row_tile_lmul):
 * t's own for a full tile, tile_one_lmul for fewer rows (a call's only row tile, or the rows
 * a row block leaves after its full ones). A tile of few rows at the plan's LMUL waits on its
 * chains of FMAs; a wider one has fewer. */
unsigned tile_row_lmul(struct tile t, unsigned rows);

/* Every row tile a call may run on a plan of tile t for `bucket` rows, by LMUL: rows
 * from[l] .. most[l] at LMUL l cover them (lowered and raised, not set: the build's tiles are
 * those of all its plans). Row tiles of t over any row block, each at tile_row_lmul. */
void tile_rows_run(struct tile t, unsigned bucket, unsigned from[9], unsigned most[9]);

#endif
