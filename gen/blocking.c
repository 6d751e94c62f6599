/* The traffic model. One call, M = bucket rows, packed weights, one thread with l2_bytes of
 * L2. The loops (runtime/driver.c) are: column blocks > K blocks > (strips > tiles or tiles >
 * strips), the activations of a K block widened to FP32 into scratch, partial sums of a
 * column block kept in scratch between K blocks.
 *
 * DRAM bytes: each weight once, unless a row tile finds its weights evicted; the BF16
 * activations once per column block, unless they stay in L2 from one to the next; outputs
 * filled and written back once (write-allocate); partial sums written back and filled again
 * when one K block's working set (partial sums, weights and activations of the block) does
 * not fit. "Fits" means within L2_USABLE of the L2: LRU keeps a working set only if a stream
 * passing through leaves it room.
 *
 * Vector work per MAC: the tile's (tile.c), plus loading and storing partial sums between K
 * blocks, plus widening the activations once per column block.
 *
 * The model is the base variant's (FP32 activations in scratch); the Zvfbfwma variant runs the
 * same blocking with BF16 activations, half the scratch, on weights of the same size. */
#include "blocking.h"

#include <stddef.h>

#define L2_USABLE 0.65
/* Vector work to widen one activation at VLEN 256: e16m2 load (2), vzext to m4 (4), vsll (4),
 * strided store (4) per 32 values (templates/support_base.c.in). */
#define WIDEN_VWORK 0.4375

static const uint64_t k_blocks[] = {16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024,
                                    1536, 2048};
static const uint64_t col_panels[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256};

static uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

uint64_t panel_width(const struct target *t) { return t->vlen / 4; }

struct blocking blocking_model(const struct target *t, struct tile tile, unsigned bucket,
                               uint64_t n, uint64_t k, uint64_t l2_bytes, enum loop_order order,
                               uint64_t k_block, uint64_t col_block)
{
    const double m = bucket, rows = tile.rows, vscale = 256.0 / (double)t->vlen;
    const uint64_t pw = panel_width(t), nr = t->vlen / 32 * tile.lmul;
    const uint64_t np = ceil_div(n, pw) * pw;
    const uint64_t kc = k_block < k ? k_block : k, nc = col_block < np ? col_block : np;
    const uint64_t blocks_n = ceil_div(n, nc), blocks_k = ceil_div(k, kc);
    const uint64_t tiles = ceil_div(bucket, tile.rows);
    const double l2 = L2_USABLE * (double)l2_bytes;
    const double w = (double)np * (double)((k + 1) / 2) * 4, x = 2 * m * (double)k,
                 y = 4 * m * (double)n;
    const double partials = blocks_k > 1 ? 4 * m * (double)nc : 0;
    const double w_block = 2.0 * (double)kc * (double)nc, x_block = 2 * m * (double)kc;
    const double xf_block = 4 * (order == ORDER_STRIPS ? m : rows) * (double)kc;

    struct blocking b = {order, kc, nc, 0, w + x + y, 0, 0};
    double dram = w + 2 * y;
    dram += x + 2.0 * (double)nc * (double)k + partials <= l2 ? x : x * (double)blocks_n;
    if (blocks_k > 1 && partials + w_block + x_block + xf_block > l2)
        dram += 8 * m * (double)n * (double)(blocks_k - 1);
    /* A strip's weights are nr of a panel's pw columns: its lines fall in nr / pw of the
     * cache's sets, so they weigh on the lines sharing those sets as pw / nr times as many. */
    const double w_strip = 2.0 * (double)kc * (double)pw;
    if (tiles > 1) {
        /* What passes between two row tiles' reads of the same weights. */
        double between = order == ORDER_STRIPS
                             ? w_strip + xf_block + 4 * m * (double)nr
                             : w_block + 4 * rows * (double)(kc + nc) + 2 * rows * (double)kc;
        if (between > l2)
            dram += w * (double)(tiles - 1);
    }
    if (order == ORDER_STRIPS && nc > nr && xf_block + w_strip > l2)
        dram += 2 * xf_block * (double)(nc / nr) * (double)blocks_k * (double)blocks_n;
    b.dram_bytes = dram;

    double vwork = tile_cost(tile, bucket).vwork_per_mac * vscale;
    vwork += 64.0 * (double)(blocks_k - 1) / ((double)t->vlen * (double)k);
    vwork += WIDEN_VWORK * vscale * (double)blocks_n / (double)n;
    b.vwork_per_mac = vwork;
    double macs = m * (double)n * (double)k;
    b.seconds = vwork * macs * (double)(t->vlen / t->dlen) / ((double)t->mhz * 1e6) +
                dram / ((double)t->dram_mb_s * 1e6 / (double)t->cores);
    return b;
}

/* The choice: the least modelled time among blockings whose vector work is within
 * VWORK_SLACK of the least any blocking needs, where DRAM time counts a core's share of the
 * bandwidth (all cores of the chip run such calls); times within half a percent go to the
 * least work. Candidates are tried in a fixed order, so the choice is deterministic. */
#define VWORK_SLACK 1.08

static int better(const struct blocking *a, const struct blocking *b, double vwork_limit)
{
    int a_ok = a->vwork_per_mac <= vwork_limit, b_ok = b->vwork_per_mac <= vwork_limit;
    if (a_ok != b_ok)
        return a_ok;
    if (a->seconds < b->seconds * 0.995)
        return 1;
    return a->seconds <= b->seconds * 1.005 && a->vwork_per_mac < b->vwork_per_mac;
}

/* Calls fn for every candidate blocking. */
static void each_candidate(const struct target *t, struct tile tile, unsigned bucket, uint64_t n,
                           uint64_t k, uint64_t l2_bytes,
                           void (*fn)(const struct blocking *b, void *ctx), void *ctx)
{
    const uint64_t pw = panel_width(t), np = ceil_div(n, pw) * pw;
    const size_t nk = sizeof k_blocks / sizeof k_blocks[0];
    const size_t nn = sizeof col_panels / sizeof col_panels[0];
    unsigned orders = bucket > tile.rows ? 2 : 1; /* one row tile: the orders are the same */
    for (unsigned o = 0; o < orders; o++) {
        for (size_t i = 0; i <= nk; i++) {
            uint64_t kc = i < nk ? k_blocks[i] : k;
            if (i < nk && kc >= k)
                continue;
            for (size_t j = 0; j <= nn; j++) {
                uint64_t nc = j < nn ? col_panels[j] * pw : np;
                if (j < nn && nc >= np)
                    continue;
                struct blocking b =
                    blocking_model(t, tile, bucket, n, k, l2_bytes, (enum loop_order)o, kc, nc);
                fn(&b, ctx);
            }
        }
    }
}

struct choice {
    double vwork_limit;
    struct blocking best;
    int have;
};

static void least_vwork(const struct blocking *b, void *ctx)
{
    struct choice *c = ctx;
    if (b->vwork_per_mac < c->vwork_limit)
        c->vwork_limit = b->vwork_per_mac;
}

static void keep_better(const struct blocking *b, void *ctx)
{
    struct choice *c = ctx;
    if (!c->have || better(b, &c->best, c->vwork_limit)) {
        c->best = *b;
        c->have = 1;
    }
}

struct blocking blocking_choose(const struct target *t, struct tile tile, unsigned bucket,
                                uint64_t n, uint64_t k, uint64_t l2_bytes)
{
    struct choice c = {1e30, {0}, 0};
    each_candidate(t, tile, bucket, n, k, l2_bytes, least_vwork, &c);
    c.vwork_limit *= VWORK_SLACK;
    each_candidate(t, tile, bucket, n, k, l2_bytes, keep_better, &c);
    return c.best;
}
