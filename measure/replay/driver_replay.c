/* The memory accesses of one call of runtime/driver.c, replayed on the host through the cache
 * model of measure/cache/cache_sim.c, in seconds instead of the 10 to 20 minutes a call with M = 128
 * takes under QEMU with the plugin. It is how the flood terms of the generator's traffic model
 * (gen/blocking.c) were calibrated: any blocking can be tried, not only the plan's.
 *
 * What it replays is the base variant at VLEN 256 with the generator's tile for a bucket of M
 * rows (the 13 x 2 tile of M = 128 plans: strips of 16 columns; panels of 64): the driver's loops (column blocks > K blocks > strips and row
 * tiles in either order), the copy of X's K blocks for plans of 32 rows or more, the widening
 * of activations into scratch, packing plain rows into scratch, the tiles' loads and stores of
 * weights, activations, partial sums and outputs, all at the sizes they have; scratch is laid
 * out as the driver lays it out. It is a model of the driver, not the driver: after a change to
 * the loops, check it against make bench-dram (docs/measurements.md). The caller's buffers sit
 * where PLACEMENT puts them, as measure/dram/placement.h places them for the plugin's runs, and
 * the K blocks and X's copy follow them by the driver's own rules (runtime/lines.c).
 *
 * A call on T threads (threads=T) is replayed as runtime/plan_call.c runs it: the columns
 * split into pieces of whole panels as gr_split_columns splits them, participant i on piece i,
 * each with its own L1 and scratch, four to an L2 (the K1's clusters: 8 threads, two L2s; the
 * DRAM traffic is the sum of both L2s'); the participants run as coroutines, 64 accesses each
 * in turn (skew=S: participant i takes 64 + i S, cores of unequal speed), and wait for each
 * other where the runtime's gr_parallel_for does (after the shared copy of X, after each round
 * of column blocks). Whether X is copied (each participant's own copy, or one for the call)
 * and whether column blocks go in rounds is the generator's rule (blocking_x_copy) for the
 * blocking the runtime takes, a core alone on one thread, the cores of a cluster on more;
 * x= and rounds= force them. In rounds, fewer than four participants on an L2 take column
 * blocks wider than NC, as the runtime does (gr_drive_rounds).
 *
 *   make bench-replay REPLAY_ARGS="M N K strips|tiles KC NC packed|plain L2_KB [PLACEMENT]
 *                                  [x_at=PLACEMENT] [threads=T] [x=plan|none|own|shared]
 *                                  [rounds=plan|0|1] [skew=S]"
 * (PLACEMENT: aligned (the default), malloc or page+B; x_at= puts X elsewhere than W and Y)
 * prints the DRAM bytes over the minimum and the megabytes filled and written back per
 * buffer. */
#include <stdint.h>
#include <ucontext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blocking.h"
#include "cache_sim.h"
#include "lines.h"

#define PANEL 64  /* columns of a panel of packed weights at VLEN 256 */
#define PAGE 4096 /* where placement.h's page+B and malloc placements count from */
#define CHUNK 64  /* BF16 weights of a plain row that one pack load takes (e16m4) */

enum x_copy_mode { X_NONE, X_OWN, X_SHARED };

enum buffer { B_W, B_X, B_Y, B_PARTIALS, B_X_F, B_WORDS, B_X_COPY, B_X_CARRY, B_Y_TAIL, B_END };
static const char *const buffer_names[B_END] = {"weights", "x",      "y",       "partials", "x_f",
                                                "words",   "x_copy", "x_carry", "y_tail"};
#define Y_TAIL_COLS 32 /* runtime/driver.c's room for the sums a column block keeps */

/* Participants of a call (cores): each its own L1 and scratch, its cluster's L2 shared with the
 * other participants of that cluster (CLUSTER of them, as the K1's four cores share one
 * 512 KiB L2). They run as coroutines, each QUANTUM accesses in turn, to mimic cores running at
 * once at the same speed. */
#define MAX_PARTS 16
#define CLUSTER 4
#ifndef QUANTUM
#define QUANTUM 64 /* accesses per turn (cc -DQUANTUM=... to try others) */
#endif

struct replay {
    struct cache_sim sim;     /* its L1; l2[0] shares its cluster's L2's arrays (mirror) */
    struct cache_level *l2;   /* its cluster's L2: the clock and counters between turns */
    uint64_t base[B_END];     /* each buffer's first byte (scratch: its own, or the call's) */
    uint64_t steps, quantum;
    uint64_t blocks_done;     /* column blocks finished */
    ucontext_t ctx;
    int finished;
};

/* Every buffer of the call as an address range, in address order, for the DRAM hook. */
static struct {
    uint64_t start[B_END * MAX_PARTS + B_END];
    int buffer[B_END * MAX_PARTS + B_END];
    int count;
    double filled[B_END], written[B_END];
} traffic;

static void add_range(uint64_t start, int buffer)
{
    traffic.start[traffic.count] = start;
    traffic.buffer[traffic.count++] = buffer;
}

static void on_dram(void *ctx, size_t l2, uint64_t addr, int is_write)
{
    (void)ctx;
    (void)l2;
    int lo = 0, hi = traffic.count - 1; /* the last range starting at or before addr */
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (traffic.start[mid] <= addr)
            lo = mid;
        else
            hi = mid - 1;
    }
    int b = traffic.buffer[lo];
    if (is_write)
        traffic.written[b] += 64;
    else
        traffic.filled[b] += 64;
}

static ucontext_t scheduler;

/* Lets the next participant run. */
static void yield(struct replay *r) { swapcontext(&r->ctx, &scheduler); }

static void load(struct replay *r, uint64_t addr, uint64_t bytes)
{
    cache_sim_access(&r->sim, addr, bytes, 0);
    if (++r->steps % r->quantum == 0)
        yield(r);
}

static void store(struct replay *r, uint64_t addr, uint64_t bytes)
{
    cache_sim_access(&r->sim, addr, bytes, 1);
    if (++r->steps % r->quantum == 0)
        yield(r);
}

static uint64_t align64(uint64_t a) { return (a + 63) / 64 * 64; }
static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

struct call {
    uint64_t m, n, k, kc, nc;
    uint64_t tile_rows, strip; /* the tile's rows, its columns: VLMAX(e32, LMUL) at VLEN 256 */
    uint64_t col_begin, col_end; /* the participant's piece of the columns */
    int tiles_outer, plain;
    int rounds;                  /* the participants wait for each other after each column block */
    int copy_x;                  /* X from a copy: X_OWN, made in the first column block, or
                                    X_SHARED, one for the call, made before the column loop */
    int y_partials;              /* Y finished from the partial sums (gr_y_from_partials) */
    struct gr_k_blocks k_blocks; /* as the driver walks them (runtime/lines.h) */
};

/* pack_base: per column, CHUNK weights loaded, their words stored `stride` words apart. */
static void pack(struct replay *r, const struct call *c, uint64_t col, uint64_t cols,
                 uint64_t k0, uint64_t kc, uint64_t out, uint64_t stride)
{
    for (uint64_t j = 0; j < cols; j++)
        for (uint64_t kk = 0; kk < kc; kk += CHUNK) {
            uint64_t vl = min_u64(CHUNK, kc - kk);
            load(r, r->base[B_W] + ((col + j) * c->k + k0 + kk) * 2, vl * 2);
            for (uint64_t p = 0; p < (vl + 1) / 2; p++)
                store(r, out + ((kk / 2 + p) * stride + j) * 4, 4);
        }
}

/* arrange_base: each row's kc activations widened and stored x_stride floats apart. */
static void arrange(struct replay *r, uint64_t x, uint64_t ldx, uint64_t rows, uint64_t kc)
{
    for (uint64_t i = 0; i < rows; i++)
        for (uint64_t kk = 0; kk < kc; kk++) {
            if (kk % 32 == 0)
                load(r, x + i * ldx + kk * 2, min_u64(32, kc - kk) * 2);
            store(r, r->base[B_X_F] + (kk * rows + i) * 4, 4);
        }
}

/* Where the driver keeps X's elements carried into the K block at k0 (*in, the elements a row
 * from *in_at) and out of the one ending at k1 (the return, a row's from *out_at): rows of
 * gr_k_carry elements one after the other, in two buffers in turn (`turn`: the K block's). */
static uint64_t carried(struct replay *r, const struct call *c, uint64_t k0, uint64_t k1,
                        int turn, uint64_t *in, uint64_t *in_at, uint64_t *out_at)
{
    const uint64_t half = c->m * GR_K_CARRY_MAX * 2;
    const int share = c->k * 2 % GR_LINE_BYTES == 0; /* X's rows K apart */
    *in = share ? gr_k_carry(r->base[B_X], c->k, k0) : 0;
    *in_at = r->base[B_X_CARRY] + (uint64_t)turn * half;
    *out_at = r->base[B_X_CARRY] + (uint64_t)(turn ^ 1) * half;
    return share ? gr_k_carry(r->base[B_X], c->k, k1) : 0;
}

/* The driver's arrange_rows on X in place: rows [r0, r0 + rows) of the K block at k0, its
 * first elements from the carry and the elements after it in its last line into the other,
 * a row at a time. */
static void arrange_x(struct replay *r, const struct call *c, uint64_t r0, uint64_t rows,
                      uint64_t k0, uint64_t kc, int turn)
{
    const uint64_t ldx = c->k * 2, x = r->base[B_X] + r0 * ldx;
    uint64_t in, in_at, out_at, out = carried(r, c, k0, k0 + kc, turn, &in, &in_at, &out_at);
    const uint64_t skip = min_u64(in, kc);
    for (uint64_t i = 0; i < rows; i++) {
        if (skip) {
            load(r, in_at + (r0 + i) * in * 2, skip * 2);
            for (uint64_t kk = 0; kk < skip; kk++)
                store(r, r->base[B_X_F] + (kk * rows + i) * 4, 4);
        }
        for (uint64_t kk = skip; kk < kc; kk++) {
            if ((kk - skip) % 32 == 0)
                load(r, x + i * ldx + (k0 + kk) * 2, min_u64(32, kc - kk) * 2);
            store(r, r->base[B_X_F] + (kk * rows + i) * 4, 4);
        }
        if (out) {
            load(r, x + i * ldx + (k0 + kc) * 2, out * 2);
            store(r, out_at + (r0 + i) * out * 2, out * 2);
        }
    }
}

/* One register tile: partial sums in, a weight row and the rows' activations per k-pair,
 * partial sums out, or outputs where `last` (the last K block, the strip before the block's
 * y_end). */
static void tile(struct replay *r, const struct call *c, uint64_t rows, uint64_t row,
                 uint64_t col, uint64_t col0, uint64_t x_rows, uint64_t x_row, uint64_t w,
                 uint64_t w_stride, uint64_t kc, int first, int last)
{
    uint64_t acc = r->base[B_PARTIALS] + (row * c->nc + col - col0) * 4;
    if (!first)
        for (uint64_t i = 0; i < rows; i++)
            load(r, acc + i * c->nc * 4, c->strip * 4);
    for (uint64_t p = 0; p < kc / 2; p++) {
        load(r, w + p * w_stride, c->strip * 4);
        load(r, r->base[B_X_F] + (2 * p * x_rows + x_row) * 4, rows * 4);
        load(r, r->base[B_X_F] + ((2 * p + 1) * x_rows + x_row) * 4, rows * 4);
    }
    for (uint64_t i = 0; i < rows; i++) {
        if (last)
            store(r, r->base[B_Y] + ((row + i) * c->n + col) * 4, c->strip * 4);
        else
            store(r, acc + i * c->nc * 4, c->strip * 4);
    }
}

/* The driver's copy of X's rows for the K block [k0, k1), with its carry (runtime/driver.c's
 * copy_x). */
static void copy_x(struct replay *r, const struct call *c, uint64_t k0, uint64_t k1, int turn)
{
    const uint64_t kc = k1 - k0, block = r->base[B_X_COPY] + k0 * c->m * 2;
    uint64_t in, in_at, out_at, out = carried(r, c, k0, k1, turn, &in, &in_at, &out_at);
    const uint64_t skip = min_u64(in, kc);
    for (uint64_t i = 0; i < c->m; i++) {
        const uint64_t row = r->base[B_X] + i * c->k * 2;
        if (skip) {
            load(r, in_at + i * in * 2, skip * 2);
            store(r, block + i * kc * 2, skip * 2);
        }
        load(r, row + (k0 + skip) * 2, (kc - skip) * 2);
        store(r, block + (i * kc + skip) * 2, (kc - skip) * 2);
        if (out) {
            load(r, row + k1 * 2, out * 2);
            store(r, out_at + i * out * 2, out * 2);
        }
    }
}

/* How a column block's last K block writes Y (runtime/driver.c's struct work): strips before
 * y_from write it, the rest keep their sums; columns [y_from, y_end) from the sums, the block
 * before's [tail_from, col0) from the tail, columns from y_end kept in the tail. */
struct y_lines {
    uint64_t col0, col_end, y_from, y_end, tail_from;
};

/* The driver's finish_rows: Y's columns [from, to) of rows [r0, r1) from the partial sums,
 * each row after (with_tail) the columns the block before kept. */
static void finish_rows(struct replay *r, const struct call *c, const struct y_lines *yl,
                        uint64_t r0, uint64_t r1, uint64_t from, uint64_t to, int with_tail)
{
    const uint64_t kept = yl->col0 - yl->tail_from;
    for (uint64_t i = r0; i < r1; i++) {
        if (with_tail && kept) {
            load(r, r->base[B_Y_TAIL] + i * kept * 4, kept * 4);
            store(r, r->base[B_Y] + (i * c->n + yl->tail_from) * 4, kept * 4);
        }
        if (to > from) {
            load(r, r->base[B_PARTIALS] + (i * c->nc + from - yl->col0) * 4, (to - from) * 4);
            store(r, r->base[B_Y] + (i * c->n + from) * 4, (to - from) * 4);
        }
    }
}

/* The driver's keep_tail: the sums of columns [y_end, col_end) into the tail. */
static void keep_tail(struct replay *r, const struct call *c, const struct y_lines *yl)
{
    const uint64_t kept = yl->col_end - yl->y_end;
    if (kept)
        for (uint64_t i = 0; i < c->m; i++) {
            load(r, r->base[B_PARTIALS] + (i * c->nc + yl->y_end - yl->col0) * 4, kept * 4);
            store(r, r->base[B_Y_TAIL] + i * kept * 4, kept * 4);
        }
}

/* The shared copy of X (X_SHARED), before the column loop: rows [r0, r1) of X, each read
 * once along K and cut into the K blocks (runtime/driver.c's gr_drive_copy_x_rows). */
static void copy_x_rows(struct replay *r, const struct call *c, uint64_t r0, uint64_t r1)
{
    for (uint64_t i = r0; i < r1; i++)
        for (uint64_t k0 = 0, k1; k0 < c->k; k0 = k1) {
            k1 = gr_k_block_end(&c->k_blocks, k0);
            load(r, r->base[B_X] + (i * c->k + k0) * 2, (k1 - k0) * 2);
            store(r, r->base[B_X_COPY] + (k0 * c->m + i * (k1 - k0)) * 2, (k1 - k0) * 2);
        }
}

static void wait_round(struct replay *r);

static void replay_call(struct replay *r, const struct call *c)
{
    const uint64_t pairs = (c->k + 1) / 2;
    const int sums_kept = c->k_blocks.first < c->k;
    for (uint64_t col0 = c->col_begin; col0 < c->col_end; col0 += c->nc) {
        uint64_t cols = min_u64(c->nc, c->col_end - col0), y_done = col0;
        /* runtime/driver.c's rule for the lines of Y two column blocks share */
        struct y_lines yl = {col0, col0 + cols, 0, col0 + cols, col0};
        if (sums_kept) {
            yl.y_end = gr_y_tail(r->base[B_Y], 4, c->n * 4, col0 + cols, c->col_end);
            if (col0 > c->col_begin)
                yl.tail_from = gr_y_tail(r->base[B_Y], 4, c->n * 4, col0, c->col_end);
        }
        yl.y_from = c->y_partials        ? col0
                    : yl.y_end < yl.col_end ? col0 + (yl.y_end - col0) / c->strip * c->strip
                                            : yl.col_end;
        int turn = 0; /* which carry buffer the K block reads (runtime/driver.c's) */
        for (uint64_t k0 = 0, k1; k0 < c->k; k0 = k1, turn ^= 1) {
            k1 = gr_k_block_end(&c->k_blocks, k0);
            uint64_t kc = k1 - k0;
            int first = k0 == 0, last = k1 == c->k;
            uint64_t x = r->base[B_X] + k0 * 2, ldx = c->k * 2;
            if (c->copy_x) { /* the block's rows one after the other, copied in the first block */
                if (col0 == c->col_begin && c->copy_x == X_OWN)
                    copy_x(r, c, k0, k1, turn);
                x = r->base[B_X_COPY] + k0 * c->m * 2;
                ldx = kc * 2;
            }
            if (c->plain && c->tiles_outer)
                for (uint64_t s = col0; s < col0 + cols; s += c->strip)
                    pack(r, c, s, min_u64(c->strip, col0 + cols - s), k0, kc,
                         r->base[B_WORDS] + (s - col0) * 4, c->nc);
            if (!c->tiles_outer) {
                if (c->copy_x)
                    arrange(r, x, ldx, c->m, kc);
                else
                    arrange_x(r, c, 0, c->m, k0, kc, turn);
                for (uint64_t s = col0; s < col0 + cols; s += c->strip) {
                    uint64_t w = r->base[B_W] + ((s / PANEL) * pairs + k0 / 2) * PANEL * 4 +
                                 s % PANEL * 4,
                             w_stride = PANEL * 4;
                    if (c->plain) {
                        pack(r, c, s, min_u64(c->strip, col0 + cols - s), k0, kc, r->base[B_WORDS],
                             c->strip);
                        w = r->base[B_WORDS];
                        w_stride = c->strip * 4;
                    }
                    int direct = last && s < yl.y_from;
                    for (uint64_t row = 0; row < c->m; row += c->tile_rows)
                        tile(r, c, min_u64(c->tile_rows, c->m - row), row, s, col0, c->m, row, w,
                             w_stride, kc, first, direct);
                    if (last && c->y_partials) {
                        uint64_t to = gr_y_line_col(r->base[B_Y], 4,
                                                    min_u64(s + c->strip, col0 + cols), y_done);
                        if (to > y_done)
                            finish_rows(r, c, &yl, 0, c->m, y_done, to, y_done == col0);
                        y_done = to;
                    }
                }
                continue;
            }
            for (uint64_t row = 0; row < c->m; row += c->tile_rows) {
                uint64_t rows = min_u64(c->tile_rows, c->m - row);
                if (c->copy_x)
                    arrange(r, x + row * ldx, ldx, rows, kc);
                else
                    arrange_x(r, c, row, rows, k0, kc, turn);
                if (last)
                    finish_rows(r, c, &yl, row, row + rows, col0, col0, 1);
                for (uint64_t s = col0; s < col0 + cols; s += c->strip) {
                    uint64_t w = c->plain ? r->base[B_WORDS] + (s - col0) * 4
                                          : r->base[B_W] + ((s / PANEL) * pairs + k0 / 2) * PANEL * 4 +
                                                s % PANEL * 4;
                    tile(r, c, rows, row, s, col0, rows, 0, w, (c->plain ? c->nc : PANEL) * 4, kc,
                         first, last && s < yl.y_from);
                }
                if (last)
                    finish_rows(r, c, &yl, row, row + rows, yl.y_from, yl.y_end, 0);
            }
        }
        if (!c->tiles_outer)
            finish_rows(r, c, &yl, 0, c->m, c->y_partials ? y_done : yl.y_from, yl.y_end,
                        !c->y_partials || y_done == col0);
        keep_tail(r, c, &yl);
        r->blocks_done++;
        if (c->rounds)
            wait_round(r);
    }
}

/* Bytes past a page where PLACEMENT puts a buffer of `element`-byte elements (placement.h:
 * malloc 16, page+B B rounded down to the element), or 0 for aligned; -1 when it is none. */
static int placement_offset(const char *placement, uint64_t element, uint64_t *offset)
{
    char *end;
    *offset = 0;
    if (!strcmp(placement, "aligned"))
        return 0;
    if (!strcmp(placement, "malloc")) {
        *offset = 16;
        return 0;
    }
    if (strncmp(placement, "page+", 5) || placement[5] < '0' || placement[5] > '9')
        return -1;
    unsigned long b = strtoul(placement + 5, &end, 10);
    if (*end || b >= PAGE || b % 2)
        return -1;
    *offset = b / element * element;
    return 0;
}

static struct replay parts[MAX_PARTS];
static struct call calls[MAX_PARTS];
static int current, part_count, arrived;

/* Waits until every participant has finished as many column blocks as r, or all of its own. */
static void wait_round(struct replay *r)
{
    for (int i = 0; i < part_count; i++)
        while (!parts[i].finished && parts[i].blocks_done < r->blocks_done)
            yield(r);
}

/* Keeps the scalars of a participant's mirror of its cluster's L2 in step with the others'. */
static void enter(struct replay *r)
{
    r->sim.l2[0].clock = r->l2->clock;
    r->sim.l2[0].fills = r->l2->fills;
    r->sim.l2[0].writebacks = r->l2->writebacks;
}

static void leave(struct replay *r)
{
    r->l2->clock = r->sim.l2[0].clock;
    r->l2->fills = r->sim.l2[0].fills;
    r->l2->writebacks = r->sim.l2[0].writebacks;
}

/* One participant: its share of the shared copy of X and the wait for the others (the
 * runtime's first parallel loop), then its piece of the columns. */
static void part_main(void)
{
    const int i = current;
    struct replay *r = &parts[i];
    const struct call *c = &calls[i];
    if (c->copy_x == X_SHARED) {
        copy_x_rows(r, c, c->m * (uint64_t)i / (uint64_t)part_count,
                    c->m * (uint64_t)(i + 1) / (uint64_t)part_count);
        arrived++;
        while (arrived < part_count)
            yield(r);
    }
    replay_call(r, c);
    r->finished = 1;
}

/* r's coroutine, to start at part_main and end back in the scheduler. */
static void make_part(struct replay *r, int i)
{
    static char stacks[MAX_PARTS][1 << 16];
    getcontext(&r->ctx);
    r->ctx.uc_stack.ss_sp = stacks[i];
    r->ctx.uc_stack.ss_size = sizeof stacks[i];
    r->ctx.uc_link = &scheduler;
    makecontext(&r->ctx, part_main, 0);
}

static const char *const x_copy_names[] = {"none", "own", "shared"};

int main(int argc, char **argv)
{
    const char *const placement_default = "aligned";
    const char *placement = placement_default, *x_arg = "plan", *rounds_arg = "plan";
    const char *x_placement = NULL;
    uint64_t off_x = 0, off_w = 0, off_y = 0;
    unsigned long threads = 1, skew = 0;
    int bad = 0;
    for (int i = 9; i < argc; i++) {
        if (!strncmp(argv[i], "threads=", 8))
            threads = strtoul(argv[i] + 8, NULL, 10);
        else if (!strncmp(argv[i], "x=", 2))
            x_arg = argv[i] + 2;
        else if (!strncmp(argv[i], "x_at=", 5))
            x_placement = argv[i] + 5;
        else if (!strncmp(argv[i], "rounds=", 7))
            rounds_arg = argv[i] + 7;
        else if (!strncmp(argv[i], "skew=", 5))
            skew = strtoul(argv[i] + 5, NULL, 10);
        else if (placement == placement_default)
            placement = argv[i];
        else
            bad = 1;
    }
    if (argc < 9 || bad ||
        (strcmp(rounds_arg, "plan") && strcmp(rounds_arg, "0") && strcmp(rounds_arg, "1")) || (strcmp(argv[4], "strips") && strcmp(argv[4], "tiles")) ||
        (strcmp(argv[7], "packed") && strcmp(argv[7], "plain")) ||
        placement_offset(x_placement ? x_placement : placement, 2, &off_x) ||
        placement_offset(placement, 2, &off_w) ||
        placement_offset(placement, 4, &off_y) || threads < 1 || threads > MAX_PARTS ||
        (strcmp(x_arg, "plan") && strcmp(x_arg, "none") && strcmp(x_arg, "own") &&
         strcmp(x_arg, "shared"))) {
        fprintf(stderr, "usage: %s M N K strips|tiles KC NC packed|plain L2_KB "
                        "[aligned|malloc|page+B (B even, below %d)] [x_at=PLACEMENT] "
                        "[threads=1..%d] [x=plan|none|own|shared] [rounds=plan|0|1] [skew=S]\n",
                argv[0], PAGE, MAX_PARTS);
        return 2;
    }
    struct call c = {0};
    c.m = strtoull(argv[1], NULL, 10);
    c.n = strtoull(argv[2], NULL, 10);
    c.k = strtoull(argv[3], NULL, 10);
    c.kc = strtoull(argv[5], NULL, 10);
    c.nc = strtoull(argv[6], NULL, 10);
    c.tiles_outer = !strcmp(argv[4], "tiles");
    c.plain = !strcmp(argv[7], "plain");
    uint64_t l2_kb = strtoull(argv[8], NULL, 10);
    if (!c.m || c.m > 128 || !c.n || !c.k || !c.kc || c.kc % 2 || !c.nc || c.nc % PANEL || !l2_kb) {
        fprintf(stderr, "driver_replay: M in 1 .. 128, N, K, L2_KB positive, KC even, NC a "
                        "multiple of %d\n", PANEL);
        return 2;
    }
    /* The generator's tile for a bucket of M rows; strips of VLMAX(e32, LMUL) at VLEN 256. */
    const struct tile t = tile_choose((unsigned)c.m);
    c.tile_rows = t.rows;
    c.strip = 8 * t.lmul;
    c.kc = min_u64(c.kc, c.k);
    if (c.plain && !c.tiles_outer) { /* the driver's cut: a strip's words fit half an L1 */
        uint64_t most = PLAIN_STRIP_BYTES / (2 * c.strip) / 2 * 2;
        c.kc = min_u64(c.kc, most < 2 ? 2 : most);
    }
    /* The columns split over the threads as runtime/dispatch.c's gr_split_columns splits them:
     * whole panels, participant i on piece i, CLUSTER participants to an L2. */
    uint64_t panels = (c.n + PANEL - 1) / PANEL, pieces = min_u64(threads, panels);
    uint64_t per_piece = (panels + pieces - 1) / pieces, piece_cols = per_piece * PANEL;
    part_count = (int)((panels + per_piece - 1) / per_piece);
    /* Whether the driver copies X, and whether the participants walk their column blocks in
     * rounds: the generator's rule for a plan of M rows (gen/blocking.c) in the blocking the
     * runtime takes, for a core alone with one thread, else for the CLUSTER cores of an L2;
     * unless forced. */
    const struct x_copy x_copy =
        blocking_x_copy((unsigned)c.m, c.n, c.k, c.nc, threads > 1 ? CLUSTER : 1);
    if (!strcmp(x_arg, "plan"))
        c.copy_x = !x_copy_applies(&x_copy, c.m, x_copy.shared ? c.n : min_u64(piece_cols, c.n),
                                   2 * c.k) ? X_NONE : x_copy.shared ? X_SHARED : X_OWN;
    else
        c.copy_x = !strcmp(x_arg, "own") ? X_OWN : !strcmp(x_arg, "shared") ? X_SHARED : X_NONE;
    c.rounds = !strcmp(rounds_arg, "plan") ? (int)x_copy.rounds : !strcmp(rounds_arg, "1");
    if (c.rounds) { /* gr_drive_rounds: a round covers NC x CLUSTER columns of an L2's cores */
        uint64_t on_l2 = min_u64((uint64_t)part_count, CLUSTER);
        c.nc = ((c.nc * CLUSTER + on_l2 - 1) / on_l2 + PANEL - 1) / PANEL * PANEL;
    }

    /* The caller's buffers apart, each where the placement puts it in its first page (the
     * same layout whatever the placement, so that only the offsets differ); then the call's
     * scratch as runtime/plan_call.c takes it: the shared part (the shared copy of X), then
     * one piece per participant, laid out as runtime/driver.c lays it out. */
    uint64_t np = panels * PANEL, blocks_k = (c.k + c.kc - 1) / c.kc;
    uint64_t sizes[B_END] = {
        np * ((c.k + 1) / 2) * 4,
        c.m * c.k * 2,
        c.m * c.n * 4,
        blocks_k > 1 ? c.m * c.nc * 4 : 0,
        (c.tiles_outer ? c.tile_rows : c.m) * c.kc * 4,
        c.plain ? c.kc * (c.tiles_outer ? c.nc : c.strip) * 2 : 0,
        c.copy_x == X_OWN || (x_copy.rows && !x_copy.shared && c.copy_x == X_NONE)
            ? c.m * c.k * 2 : 0, /* the driver's layout: a piece's own copy where it may copy */
        2 * c.m * GR_K_CARRY_MAX * 2,
        blocks_k > 1 ? c.m * Y_TAIL_COLS * 4 : 0,
    };
    const uint64_t offsets[B_END] = {c.plain ? off_w : 0, off_x, off_y};
    uint64_t at = 1ull << 32, base[B_END];
    for (int b = 0; b < B_PARTIALS; b++) {
        base[b] = at + offsets[b];
        add_range(base[b], b);
        at = align64(at + sizes[b]) + (1u << 20) + PAGE;
    }
    if (c.copy_x == X_SHARED) {
        base[B_X_COPY] = at;
        add_range(at, B_X_COPY);
        at = align64(at + c.m * c.k * 2);
    }
    c.k_blocks = c.plain ? gr_k_blocks_lines(c.k, c.kc, base[B_W], c.k * 2, 1)
                         : gr_k_blocks_lines(c.k, c.kc, base[B_X], c.k * 2, 2);
    c.y_partials = gr_y_from_partials(base[B_Y], c.n * 4, c.strip * 4, !c.tiles_outer,
                                      c.k_blocks.first < c.k ? 2 : 1);

    static struct cache_level l2s[MAX_PARTS / CLUSTER];
    const char *why = NULL;
    for (int i = 0; i < (part_count + CLUSTER - 1) / CLUSTER; i++)
        if (cache_level_init(&l2s[i], l2_kb * 1024, 16, 64, &why)) {
            fprintf(stderr, "driver_replay: %s\n", why);
            return 2;
        }
    for (int i = 0; i < part_count; i++) {
        struct replay *r = &parts[i];
        if (cache_level_init(&r->sim.l1, 32 * 1024, 8, 64, &why)) {
            fprintf(stderr, "driver_replay: %s\n", why);
            return 2;
        }
        r->l2 = &l2s[i / CLUSTER];
        r->sim.l2[0] = *r->l2; /* the same lines; enter() and leave() carry the clock */
        r->sim.l2_count = 1;
        cache_sim_reset(&r->sim);
        r->sim.hook = on_dram;
        memcpy(r->base, base, sizeof base);
        for (int b = B_PARTIALS; b < B_END; b++) {
            if (b == B_X_COPY && c.copy_x == X_SHARED)
                continue;
            r->base[b] = at;
            add_range(at, b);
            at = align64(at + sizes[b]);
        }
        r->quantum = QUANTUM + (uint64_t)i * skew;
        calls[i] = c;
        calls[i].col_begin = (uint64_t)i * piece_cols;
        calls[i].col_end = min_u64(calls[i].col_begin + piece_cols, c.n);
        make_part(r, i);
    }
    add_range(at, B_X_CARRY); /* past the last piece: nothing, for the search's sake */

    for (int alive = 1; alive;) {
        alive = 0;
        for (int i = 0; i < part_count; i++)
            if (!parts[i].finished) {
                alive = 1;
                current = i;
                enter(&parts[i]);
                swapcontext(&scheduler, &parts[i].ctx);
                leave(&parts[i]);
            }
    }
    for (int i = 0; i < part_count; i++) {
        enter(&parts[i]);
        cache_sim_flush(&parts[i].sim);
        leave(&parts[i]);
    }
    double min = (double)sizes[B_W] + (double)sizes[B_X] + (double)sizes[B_Y], total = 0;
    for (int b = 0; b < B_END; b++)
        total += traffic.filled[b] + traffic.written[b];
    printf("ratio=%.3f dram_bytes=%.0f min_bytes=%.0f placement=%s%s%s threads=%d x_copy=%s "
           "rounds=%d skew=%lu\n", total / min, total, min, placement,
           x_placement ? " x_at=" : "", x_placement ? x_placement : "", part_count,
           x_copy_names[c.copy_x], c.rounds, skew);
    for (int b = 0; b < B_END; b++)
        if (traffic.filled[b] + traffic.written[b] > 0)
            printf("  %-8s %8.2f MiB filled %8.2f MiB written back\n", buffer_names[b],
                   traffic.filled[b] / 1048576, traffic.written[b] / 1048576);
    return 0;
}
