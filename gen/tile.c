/* The kernels' inner step, for one k-pair, one block of R rows and one column strip of LMUL L:
 *   1 vle32 (two BF16 weights of a column per 32-bit lane), 1 vsll + 1 vand to widen them,
 *   2R vfmacc.vf, 2R flw for the activations, all vector ops at LMUL L.
 * At VLEN 256 that is 2 * R * 8L multiply-accumulates. Registers: R*L accumulators, L for the
 * loaded words, L for the widened half. Vector work comes first (it bounds a core whose vector
 * datapath is half its VLEN, as the K1's); instructions weigh a quarter, for issue slots.
 * The tile is chosen for the base tiles, which bind on the K1; the Zvfbfwma tiles of the same
 * shape need fewer registers (R*L accumulators, L/2 for the BF16 weights) and less work per k
 * (one vle16 at L/2, R vfwmaccbf16 at 2L), so every base tile fits them too. */
#include "tile.h"

#include "../runtime/row_steps.h"

unsigned tile_vregs(struct tile t) { return t.rows * t.lmul + 2 * t.lmul; }

int tile_fits(struct tile t) { return tile_vregs(t) + t.lmul <= VREGS; }

static void block_cost(unsigned rows, unsigned lmul, double *vwork, double *insns, double *macs)
{
    *vwork += (3.0 + 2.0 * rows) * lmul;
    *insns += 3.0 + 4.0 * rows;
    *macs += 2.0 * rows * 8.0 * lmul;
}

unsigned tile_rows_least(struct tile t)
{
    const unsigned least = (TILE_FMA_CYCLES + t.lmul - 1) / t.lmul;
    return least < t.rows ? least : t.rows;
}

struct tile_cost tile_cost(struct tile t, unsigned bucket)
{
    double vwork = 0, insns = 0, macs = 0;
    for (uint64_t r = 0, end; r < bucket; r = end) {
        end = gr_row_step_end(r, t.rows, tile_rows_least(t), bucket);
        block_cost((unsigned)(end - r), t.lmul, &vwork, &insns, &macs);
    }
    struct tile_cost c = {vwork / macs, insns / macs};
    return c;
}

double tile_score(struct tile_cost c)
{
    return c.vwork_per_mac + 0.25 * c.insns_per_mac;
}

/* The cheapest tile of rows_lo .. rows_hi rows within the register budget for `bucket` rows;
 * strictly better only: ties keep the smaller tile, found first. */
static struct tile cheapest(unsigned bucket, unsigned rows_lo, unsigned rows_hi)
{
    struct tile best = {rows_lo, 1};
    double best_score = 1e30;
    for (unsigned lmul = 1; lmul <= 8; lmul *= 2) {
        for (unsigned rows = rows_lo; rows <= rows_hi; rows++) {
            struct tile t = {rows, lmul};
            if (!tile_fits(t))
                continue;
            double score = tile_score(tile_cost(t, bucket));
            if (score < best_score - 1e-12) {
                best_score = score;
                best = t;
            }
        }
    }
    return best;
}

struct tile tile_choose(unsigned bucket)
{
    return cheapest(bucket, 1, bucket < TILE_MAX_ROWS ? bucket : TILE_MAX_ROWS);
}

unsigned tile_one_lmul(unsigned rows) { return cheapest(rows, rows, rows).lmul; }

unsigned tile_row_lmul(struct tile t, unsigned rows)
{
    return rows == t.rows ? t.lmul : tile_one_lmul(rows);
}

static void rows_at(unsigned rows, unsigned lmul, unsigned from[9], unsigned most[9])
{
    if (!from[lmul] || rows < from[lmul])
        from[lmul] = rows;
    if (rows > most[lmul])
        most[lmul] = rows;
}

void tile_rows_run(struct tile t, unsigned bucket, unsigned from[9], unsigned most[9])
{
    const unsigned least = tile_rows_least(t);
    /* the row blocks of every call (runtime/driver.c cuts them so; past 2 buckets and `least`
     * rows a call's blocks repeat those of fewer), their row tiles */
    for (uint64_t m = 1; m <= 2 * (uint64_t)bucket + least; m++) {
        const uint32_t tiles = gr_row_tiles(m, bucket, t.rows, least);
        for (unsigned rows = 1; rows <= t.rows; rows++)
            if (tiles >> (rows - 1) & 1)
                rows_at(rows, tile_row_lmul(t, rows), from, most);
    }
}
