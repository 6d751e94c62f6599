/* The traffic model. One call, M = bucket rows, packed weights, one thread with l2_bytes of
 * L2, or `parts` threads at once on it (a K1 cluster's 4 cores on their 512 KiB: each its own
 * piece of the columns, partial sums, weights and arranged activations, lines that add up in
 * each set; X one copy for all, read in rounds: blocking_x_copy). The loops (runtime/driver.c) are: column blocks > K blocks > (strips > tiles or tiles >
 * strips), the activations of a K block widened to FP32 into scratch, partial sums of a
 * column block kept in scratch between K blocks.
 *
 * DRAM bytes: each weight once, unless a row tile finds its weights evicted; the BF16
 * activations once per column block, unless they stay in L2 from one to the next; outputs
 * filled and written back once (write-allocate); partial sums written back and filled again
 * when one K block's working set (partial sums, weights and activations of the block) does
 * not fit. "Fits" means within P.l2_usable of the L2: LRU keeps a working set only if a stream
 * passing through leaves it room.
 *
 * Vector work per MAC: the tile's (tile.c), plus loading and storing partial sums between K
 * blocks, plus widening the activations once per column block.
 *
 * The model is the base variant's (FP32 activations in scratch); the Zvfbfwma variant runs the
 * same blocking with BF16 activations, half the scratch, on weights of the same size. */
#include "blocking.h"
#include "../runtime/x_copy.h"

#include <stddef.h>

/* The model's parameters: what each is, and why it has its value. Calibrated on replays of the
 * driver's accesses (measure/replay/driver_replay.c) and the cache-model plugin; the figures
 * are in docs/blocking.md. */
static const struct {
    double l2_usable, widen_vwork, design_vlen, leak_trips, flood_trips_strips,
        flood_trips_tiles, flood_word_trips, x_flood_ways, x_flood_trips, vwork_slack,
        dram_margin, time_tie;
    uint64_t x_copy_stride, x_copy_cost_cols;
} P = {
    /* Share of an L2 a working set may fill and stay: LRU keeps it only if the streams
     * passing through leave it room. */
    .l2_usable = 0.65,
    /* Vector work to widen one activation at design_vlen: e16m2 load (2), vzext to m4 (4),
     * vsll (4), strided store (4) per 32 values (templates/base/support.c.in). */
    .widen_vwork = 0.4375,
    /* The VLEN tile costs are counted at (gen/tile.h); work scales with it. */
    .design_vlen = 256,
    /* Round trips of the partial sums when a K block's sets are filled to their last way:
     * LRU leaks about one over the call. */
    .leak_trips = 1,
    /* Round trips of a flooded set's partial sums per flood, plain weights: strips order
     * packs through the K block (once before a use, once after), tiles order packs the column
     * block first (both calibrated on replays of the driver). */
    .flood_trips_strips = 2.2,
    .flood_trips_tiles = 1.4,
    /* Round trips of the words just packed into a flooded set (tiles order): about two. */
    .flood_word_trips = 2,
    /* Share of a set's ways that X's rows of one K block may take before they evict the
     * partial sums of that set, and the round trips of those per column block. */
    .x_flood_ways = 0.25,
    .x_flood_trips = 2,
    /* The choice: vector work within this factor of the least any blocking needs... */
    .vwork_slack = 1.08,
    /* ...times within time_tie of each other count as equal, and then DRAM bytes fewer by
     * dram_margin win (the bandwidth is what the cores share, a core's share the model's
     * guess). */
    .dram_margin = 0.05,
    .time_tie = 0.005,
    /* X's rows a multiple of this many bytes apart fall in at most 16 places of an 8 KiB way
     * (a 128 KiB, 16-way share): 8 rows or more per set, so the copy pays. */
    .x_copy_stride = 512,
    /* Columns per K of a call piece from which the partial sums the copy keeps weigh more
     * than the copy's own traffic (a fill and a write-back of X): 4 N >= K. */
    .x_copy_cost_cols = 4,
};

static const uint64_t k_blocks[] = {16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024,
                                    1536, 2048};
static const uint64_t col_panels[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256};

static uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

uint64_t panel_width(const struct target *t) { return t->vlen / 4; }

/* X is read again for every column block, and its rows at a stride of a power of two (K =
 * 4096: 8 KiB) fall in a few sets of an L2: every K block of many rows floods those sets and
 * evicts the partial sums there. The copy holds each K block's rows one after the other, so
 * that a block's lines are contiguous and spread over every set. It pays with two column
 * blocks or more, BLOCKING_SET_ROWS rows or more and columns enough (x_copy_cost_cols).
 * Several participants on one L2 (parts > 1) make one copy for the call, before the column
 * loop, and walk their column blocks in rounds: each participant's own copy (1 MiB at M = 128,
 * K = 4096) read once per column block, four at once, would not share the L2 (4 threads on a
 * K1 cluster moved 3.6 x the minimum); one copy read by the four in step is read once per
 * round, and the rounds keep them in step however their speeds differ (the replay with
 * skew=: measure/replay/driver_replay.c). Then the copy pays on the call's columns. */
struct x_copy blocking_x_copy(unsigned bucket, uint64_t n, uint64_t k, uint64_t col_block,
                              unsigned parts)
{
    const uint64_t cost_cols = ceil_div(k, P.x_copy_cost_cols);
    struct x_copy c = {0, col_block + 1 > cost_cols ? col_block + 1 : cost_cols, P.x_copy_stride,
                       parts > 1, parts > 1 ? parts : 0};
    if (bucket >= BLOCKING_SET_ROWS && n >= 2 * col_block && n >= cost_cols)
        c.rows = BLOCKING_SET_ROWS;
    else
        c.shared = c.rounds = 0; /* small X: each piece reads it from its own rows, unsynchronised */
    return c;
}

int x_copy_applies(const struct x_copy *c, uint64_t rows, uint64_t cols, uint64_t ldx_bytes)
{
    return gr_x_copy_applies(c->rows, c->cols, c->stride, rows, cols, ldx_bytes);
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/* DRAM bytes of a plan of BLOCKING_SET_ROWS rows or more, counted in lines per cache set: a set
 * holds `ways` lines, and LRU keeps what fits in each set, whatever the rest of the cache
 * holds. Calibrated on a replay of the driver's accesses through measure/cache/cache_sim.c:
 * - each partial sum is used once per K block; between two uses pass the weights of two K
 *   blocks (the rest of this one, the start of the next), the activations of one and, in
 *   strips order, the widened block of all rows. A panel's K block is 2 kc pw contiguous
 *   bytes and panels are (K / 2) pw 4 bytes apart (512 KiB at K = 4096, VLEN 256): when that
 *   is a multiple of a way, every panel's block falls in the same sets and the column
 *   block's panels stack there. More lines than ways: every K block fills and writes back
 *   the partial sums. Exactly full: LRU leaks P.leak_trips round trips of them (8 M N
 *   bytes each) over the call;
 * - where the blocking copies X (blocking_x_copy, with X's rows K apart) the copy costs a
 *   fill and a write-back of X, the further column blocks read the copy, the first reads X's
 *   own rows;
 * - X's own rows fall in way / gcd(2 K, way) sets of a way: more than a quarter of a set's
 *   ways of them per K block (P.x_flood_ways) evicts the partial sums of that set,
 *   P.x_flood_trips times per column block (only the first column block's with the copy). */
static double dram_by_sets(const struct target *t, struct tile tile, unsigned bucket, uint64_t n,
                           uint64_t k, uint64_t l2_bytes, unsigned parts, enum weights weights,
                           enum loop_order order, uint64_t kc, uint64_t nc,
                           const struct x_copy *x_copy)
{
    const int plain = weights == WEIGHTS_PLAIN;
    const double m = bucket, line = (double)t->line, p = parts;
    const uint64_t pw = panel_width(t), np = ceil_div(n, pw) * pw;
    /* Each participant's piece of whole panels (runtime/dispatch.c's split); X is read once
     * per column block of a piece: in rounds by all participants at once (x_copy->rounds), or
     * by the one participant. */
    const uint64_t piece = ceil_div(ceil_div(n, pw), parts) * pw;
    const uint64_t blocks_n = ceil_div(piece < n ? piece : n, nc), blocks_k = ceil_div(k, kc);
    const uint64_t way = l2_bytes / t->l2_ways, sets = way / t->line;
    const double w = (double)np * (double)((k + 1) / 2) * 4, x = 2 * m * (double)k,
                 y = 4 * m * (double)n;
    const double partials = blocks_k > 1 ? 4 * m * (double)nc : 0;
    /* X's rows K apart; the copy counted on the piece's columns, or the call's when shared. */
    const int copy = x_copy_applies(x_copy, bucket, x_copy->shared ? n : piece, 2 * k);
    const double x_readers = x_copy->rounds ? 1 : p; /* who read X (or its copies) per round */

    double dram = w + 2 * y;
    /* Activations: all of X stays in the L2, or it is read once per column block. */
    if (x + p * (2.0 * (double)nc * (double)k + partials) <= P.l2_usable * (double)l2_bytes)
        dram += x;
    else
        dram += x * (double)blocks_n * x_readers;
    if (copy)
        dram += 2 * x * (x_copy->shared ? 1 : p);

    /* Lines per set of the weights of one K block (alias: every panel's in the same sets),
     * of the activations of one K block, of the widened block. */
    const double ways = (double)t->l2_ways;
    const uint64_t block_bytes = 2 * kc * pw, panel_bytes = (k + 1) / 2 * pw * 4;
    const int alias = !plain && panel_bytes % way == 0;
    double w_lines = alias ? (double)(nc / pw) * (double)ceil_div(block_bytes, way)
                           : 2.0 * (double)kc * (double)nc / (double)way;
    double w2_lines = alias ? (double)(nc / pw) * (double)ceil_div(2 * block_bytes, way)
                            : 2 * w_lines;
    /* Plain weights: the K block's words are packed into scratch (tiles order: the column
     * block's, rewritten in place every K block; strips order: a strip's, in L1), and W's own
     * rows, 2 K bytes apart, pass through the sets their lines fall in: the block's lines of
     * nc rows over the sets they cover (K = 4096: 4 places in a way, nc / 4 lines a set). */
    double flood = 0, flooded_sets = 0;
    if (plain) {
        w_lines = order == ORDER_TILES ? w_lines : 0;
        w2_lines = w_lines;
        uint64_t places = way / gcd(2 * k, way);
        double row_lines = (double)ceil_div(2 * kc, t->line);
        flooded_sets = (double)places * row_lines < (double)sets ? (double)places * row_lines
                                                                 : (double)sets;
        flood = (double)nc * row_lines / flooded_sets;
    }
    /* X's rows of a K block: whole lines of each row, or the copy's contiguous block. */
    double row_lines = 2.0 * (double)kc / line < 1 ? 1 : 2.0 * (double)kc / line;
    /* (Participants in step per round are not in step per K block: each holds its own K
     * block of X, or of the copy, in the L2.) */
    double x_lines = (copy ? 2 * m * (double)kc / (double)way : m * row_lines / (double)sets) * p;
    const double xf_block = 4 * (order == ORDER_STRIPS ? m : tile.rows) * (double)kc;
    double xf_lines = xf_block / (double)way;
    /* Every participant's own: weights (pieces are whole panels apart: they alias alike),
     * partial sums, arranged activations, plain rows' flood. */
    w_lines *= p;
    w2_lines *= p;
    xf_lines *= p;
    flood *= p;
    /* Reuse within a K block: tiles order reads the block's weights once per row tile (one
     * tile's partial sums and activations pass between); strips order reads the widened
     * block once per strip (a strip's weights pass between). */
    if (bucket > tile.rows) {
        double tile_lines = p * 4.0 * tile.rows * (double)nc / (double)way + xf_lines;
        if (order == ORDER_TILES && w_lines + tile_lines > ways)
            dram += w * (double)(ceil_div(bucket, tile.rows) - 1);
    }
    const uint64_t nr = t->vlen / 32 * tile.lmul;
    if (order == ORDER_STRIPS && nc > nr &&
        xf_lines + p * ((double)ceil_div(2 * kc * pw, way) + 4 * m * (double)nr / (double)way) >
            ways)
        dram += 2 * xf_block * (double)(nc / nr) * (double)blocks_k * (double)blocks_n;
    if (blocks_k == 1)
        return dram;

    /* Between two uses of a partial sum. */
    double need = p * partials / (double)way + w2_lines + x_lines +
                  (order == ORDER_STRIPS ? xf_lines : 0);
    if (need > ways)
        dram += 8 * m * (double)n * (double)(blocks_k - 1);
    else if (need + flood > ways) {
        /* The flood evicts what its sets hold: the partial sums there P.flood_trips_* times
         * per flood, at most once per K block; and then (tiles order) the words just packed
         * in those sets, written back and filled again P.flood_word_trips times. A set is
         * flooded once per column block when rows fall in few places (K = 4096), in most K
         * blocks when they spread (K = 11008: 64 places). */
        double floods = (double)blocks_k * flooded_sets / (double)sets; /* a set's, per column block */
        double trips = (order == ORDER_STRIPS ? P.flood_trips_strips : P.flood_trips_tiles) *
                       (floods < 1 ? 1 : floods);
        if (trips > (double)(blocks_k - 1))
            trips = (double)(blocks_k - 1);
        dram += trips * 8 * m * (double)n;
        if (order == ORDER_TILES)
            dram += 2 * P.flood_word_trips * 2.0 * (double)kc * (double)nc * flooded_sets / (double)sets *
                    (double)blocks_k * (double)blocks_n;
    }
    else if (need > ways - 1) /* a set filled to its last way leaks (see above) */
        dram += P.leak_trips * 8 * m * (double)n;

    /* X's own rows flooding a set: all columns, or the first column block of each piece before
     * its copy (none before a shared copy: made row by row before the column loop). */
    uint64_t x_sets = way / gcd(2 * k, way);
    if (m * row_lines / (double)(x_sets < sets ? x_sets : sets) > ways * P.x_flood_ways)
        dram += P.x_flood_trips * 8 * m *
                (!copy ? (double)n : x_copy->shared ? 0 : (double)nc * p);
    return dram;
}

struct blocking blocking_model(const struct target *t, struct tile tile, unsigned bucket,
                               uint64_t n, uint64_t k, uint64_t l2_bytes, unsigned parts,
                               enum weights weights, enum loop_order order, uint64_t k_block,
                               uint64_t col_block)
{
    if (parts < 1)
        parts = 1;
    const double m = bucket, rows = tile.rows, vscale = P.design_vlen / (double)t->vlen;
    const uint64_t pw = panel_width(t), nr = t->vlen / 32 * tile.lmul;
    const uint64_t np = ceil_div(n, pw) * pw;
    const uint64_t kc = k_block < k ? k_block : k, nc = col_block < np ? col_block : np;
    const uint64_t blocks_n = ceil_div(n, nc), blocks_k = ceil_div(k, kc);
    const uint64_t tiles = ceil_div(bucket, tile.rows);
    /* Below BLOCKING_SET_ROWS rows: one participant's share of the L2 */
    const double l2 = P.l2_usable * (double)(l2_bytes / parts);
    const double w = (double)np * (double)((k + 1) / 2) * 4, x = 2 * m * (double)k,
                 y = 4 * m * (double)n;
    const double partials = blocks_k > 1 ? 4 * m * (double)nc : 0;
    const double w_block = 2.0 * (double)kc * (double)nc, x_block = 2 * m * (double)kc;
    const double xf_block = 4 * (order == ORDER_STRIPS ? m : rows) * (double)kc;

    struct blocking b = {.order = order, .k_block = kc, .col_block = nc,
                         .x_copy = blocking_x_copy(bucket, n, k, nc, parts),
                         .min_bytes = w + x + y};
    double dram;
    if (bucket >= BLOCKING_SET_ROWS)
        dram = dram_by_sets(t, tile, bucket, n, k, l2_bytes, parts, weights, order, kc, nc,
                            &b.x_copy);
    else {
        dram = w + 2 * y;
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
    }
    b.dram_bytes = dram;

    double vwork = tile_cost(tile, bucket).vwork_per_mac * vscale;
    /* a partial sum's store and load (32 bits each) per K block after the first */
    vwork += 64.0 * (double)(blocks_k - 1) / ((double)t->vlen * (double)k);
    vwork += P.widen_vwork * vscale * (double)blocks_n / (double)n;
    b.vwork_per_mac = vwork;
    double macs = m * (double)n * (double)k;
    b.seconds = vwork * macs * (double)(t->vlen / t->dlen) / ((double)t->mhz * 1e6) +
                dram / ((double)t->dram_mb_s * 1e6 / (double)t->cores);
    return b;
}

/* The choice: the least modelled time among blockings whose vector work is within
 * P.vwork_slack of the least any blocking needs, where DRAM time counts a core's share of the
 * bandwidth (all cores of the chip run such calls); times within P.time_tie go to the
 * one moving P.dram_margin fewer DRAM bytes (the bandwidth is what the cores share, and a
 * core's share of it is the model's guess), else, on packed weights, to the least work. On
 * plain weights they go to the larger relative saving, bytes against work: the flood terms
 * of their model are calibrated on one shape, and the bytes are what plain weights pay for
 * against packed ones. Candidates are tried in a fixed order, so the choice is
 * deterministic. */

struct choice {
    enum weights weights;
    double vwork_limit;
    struct blocking best;
    int have;
};

static int better(const struct blocking *a, const struct blocking *b, const struct choice *c)
{
    int a_ok = a->vwork_per_mac <= c->vwork_limit, b_ok = b->vwork_per_mac <= c->vwork_limit;
    if (a_ok != b_ok)
        return a_ok;
    if (a->seconds < b->seconds * (1 - P.time_tie))
        return 1;
    if (a->seconds > b->seconds * (1 + P.time_tie))
        return 0;
    if (a->dram_bytes < b->dram_bytes * (1 - P.dram_margin))
        return 1;
    if (b->dram_bytes < a->dram_bytes * (1 - P.dram_margin))
        return 0;
    if (c->weights == WEIGHTS_PLAIN)
        return a->dram_bytes * a->vwork_per_mac < b->dram_bytes * b->vwork_per_mac;
    return a->vwork_per_mac < b->vwork_per_mac;
}

/* Calls fn for every candidate blocking. */
static void each_candidate(const struct target *t, struct tile tile, unsigned bucket, uint64_t n,
                           uint64_t k, uint64_t l2_bytes, unsigned parts, enum weights weights,
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
                /* Plain weights: in strips order the driver cuts longer K blocks (L1); and a
                 * K block that ends inside a line of W's rows leaves that line to be read
                 * again by the next block, after the flood has evicted it. */
                if (weights == WEIGHTS_PLAIN &&
                    ((o == ORDER_STRIPS && kc > PLAIN_STRIP_BYTES / (2 * t->vlen / 32 * tile.lmul)) ||
                     (kc < k && 2 * kc % t->line != 0)))
                    continue;
                struct blocking b = blocking_model(t, tile, bucket, n, k, l2_bytes, parts,
                                                   weights, (enum loop_order)o, kc, nc);
                fn(&b, ctx);
            }
        }
    }
}

static void least_vwork(const struct blocking *b, void *ctx)
{
    struct choice *c = ctx;
    if (b->vwork_per_mac < c->vwork_limit)
        c->vwork_limit = b->vwork_per_mac;
}

static void keep_better(const struct blocking *b, void *ctx)
{
    struct choice *c = ctx;
    if (!c->have || better(b, &c->best, c)) {
        c->best = *b;
        c->have = 1;
    }
}

struct blocking blocking_choose(const struct target *t, struct tile tile, unsigned bucket,
                                uint64_t n, uint64_t k, uint64_t l2_bytes, unsigned parts,
                                enum weights weights)
{
    struct choice c = {weights, 1e30, {0}, 0};
    each_candidate(t, tile, bucket, n, k, l2_bytes, parts, weights, least_vwork, &c);
    c.vwork_limit *= P.vwork_slack;
    each_candidate(t, tile, bucket, n, k, l2_bytes, parts, weights, keep_better, &c);
    return c.best;
}
