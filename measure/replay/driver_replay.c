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
 *   make bench-replay REPLAY_ARGS="M N K strips|tiles KC NC packed|plain L2_KB [PLACEMENT]"
 * (PLACEMENT: aligned (the default), malloc or page+B) prints the DRAM bytes over the minimum
 * and the megabytes filled and written back per buffer. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blocking.h"
#include "cache_sim.h"
#include "lines.h"

#define PANEL 64  /* columns of a panel of packed weights at VLEN 256 */
#define PAGE 4096 /* where placement.h's page+B and malloc placements count from */
#define CHUNK 64  /* BF16 weights of a plain row that one pack load takes (e16m4) */

enum buffer { B_W, B_X, B_Y, B_PARTIALS, B_X_F, B_WORDS, B_X_COPY, B_X_CARRY, B_END };
static const char *const buffer_names[B_END] = {"weights", "x",      "y",      "partials",
                                                "x_f",     "words",  "x_copy", "x_carry"};

struct replay {
    struct cache_sim sim;
    uint64_t base[B_END + 1]; /* each buffer's first byte, in address order */
    double filled[B_END], written[B_END];
};

static void on_dram(void *ctx, size_t l2, uint64_t addr, int is_write)
{
    struct replay *r = ctx;
    (void)l2;
    int b = 0;
    while (b < B_END - 1 && addr >= r->base[b + 1])
        b++;
    if (is_write)
        r->written[b] += 64;
    else
        r->filled[b] += 64;
}

static void load(struct replay *r, uint64_t addr, uint64_t bytes)
{
    cache_sim_access(&r->sim, addr, bytes, 0);
}

static void store(struct replay *r, uint64_t addr, uint64_t bytes)
{
    cache_sim_access(&r->sim, addr, bytes, 1);
}

static uint64_t align64(uint64_t a) { return (a + 63) / 64 * 64; }
static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

struct call {
    uint64_t m, n, k, kc, nc;
    uint64_t tile_rows, strip; /* the tile's rows, its columns: VLMAX(e32, LMUL) at VLEN 256 */
    int tiles_outer, plain, copy_x;
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

/* The driver's arrange_rows on X in place: rows [r0, r0 + rows) of the K block at k0, a first
 * k from the carry and the k after the block into it where gr_k_carried says so. */
static void arrange_x(struct replay *r, const struct call *c, uint64_t r0, uint64_t rows,
                      uint64_t k0, uint64_t kc)
{
    const uint64_t ldx = c->k * 2, x = r->base[B_X] + r0 * ldx;
    const int carries = ldx % GR_LINE_BYTES == 0;
    uint64_t skip = 0;
    if (carries && gr_k_carried(x, c->k, k0)) {
        load(r, r->base[B_X_CARRY] + r0 * 2, rows * 2);
        for (uint64_t i = 0; i < rows; i++)
            store(r, r->base[B_X_F] + i * 4, 4);
        skip = 1;
    }
    for (uint64_t i = 0; i < rows; i++)
        for (uint64_t kk = skip; kk < kc; kk++) {
            if ((kk - skip) % 32 == 0)
                load(r, x + i * ldx + (k0 + kk) * 2, min_u64(32, kc - kk) * 2);
            store(r, r->base[B_X_F] + (kk * rows + i) * 4, 4);
        }
    if (carries && gr_k_carried(x, c->k, k0 + kc))
        for (uint64_t i = 0; i < rows; i++) {
            load(r, x + i * ldx + (k0 + kc) * 2, 2);
            store(r, r->base[B_X_CARRY] + (r0 + i) * 2, 2);
        }
}

/* One register tile: partial sums in, a weight row and the rows' activations per k-pair,
 * partial sums or outputs out. */
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
        if (last && !c->y_partials)
            store(r, r->base[B_Y] + ((row + i) * c->n + col) * 4, c->strip * 4);
        else
            store(r, acc + i * c->nc * 4, c->strip * 4);
    }
}

/* The driver's copy of X's rows for the K block [k0, k1), with its carry of one element a
 * row (runtime/driver.c's copy_x). */
static void copy_x(struct replay *r, const struct call *c, uint64_t k0, uint64_t k1)
{
    const uint64_t kc = k1 - k0, block = r->base[B_X_COPY] + k0 * c->m * 2;
    for (uint64_t i = 0; i < c->m; i++) {
        uint64_t row = r->base[B_X] + i * c->k * 2, from = k0;
        if (gr_k_carried(row, c->k, k0)) {
            load(r, r->base[B_X_CARRY] + i * 2, 2);
            store(r, block + i * kc * 2, 2);
            from++;
        }
        load(r, row + from * 2, (k1 - from) * 2);
        store(r, block + (i * kc + from - k0) * 2, (k1 - from) * 2);
        if (gr_k_carried(row, c->k, k1)) {
            load(r, row + k1 * 2, 2);
            store(r, r->base[B_X_CARRY] + i * 2, 2);
        }
    }
}

/* The driver's finish_y: columns [from, to) of the column block at col0 from its partial
 * sums, row by row. */
static void finish_y(struct replay *r, const struct call *c, uint64_t col0, uint64_t from,
                     uint64_t to)
{
    if (to > from)
        for (uint64_t i = 0; i < c->m; i++) {
            load(r, r->base[B_PARTIALS] + (i * c->nc + from - col0) * 4, (to - from) * 4);
            store(r, r->base[B_Y] + (i * c->n + from) * 4, (to - from) * 4);
        }
}

static void replay_call(struct replay *r, const struct call *c)
{
    const uint64_t pairs = (c->k + 1) / 2;
    for (uint64_t col0 = 0; col0 < c->n; col0 += c->nc) {
        uint64_t cols = min_u64(c->nc, c->n - col0), y_done = col0;
        for (uint64_t k0 = 0, k1; k0 < c->k; k0 = k1) {
            k1 = gr_k_block_end(&c->k_blocks, k0);
            uint64_t kc = k1 - k0;
            int first = k0 == 0, last = k1 == c->k;
            uint64_t x = r->base[B_X] + k0 * 2, ldx = c->k * 2;
            if (c->copy_x) { /* the block's rows one after the other, copied in the first block */
                if (col0 == 0)
                    copy_x(r, c, k0, k1);
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
                    arrange_x(r, c, 0, c->m, k0, kc);
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
                    for (uint64_t row = 0; row < c->m; row += c->tile_rows)
                        tile(r, c, min_u64(c->tile_rows, c->m - row), row, s, col0, c->m, row, w,
                             w_stride, kc, first, last);
                    if (last && c->y_partials) {
                        uint64_t to = gr_y_line_col(r->base[B_Y], 4,
                                                    min_u64(s + c->strip, col0 + cols), y_done);
                        finish_y(r, c, col0, y_done, to);
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
                    arrange_x(r, c, row, rows, k0, kc);
                for (uint64_t s = col0; s < col0 + cols; s += c->strip) {
                    uint64_t w = c->plain ? r->base[B_WORDS] + (s - col0) * 4
                                          : r->base[B_W] + ((s / PANEL) * pairs + k0 / 2) * PANEL * 4 +
                                                s % PANEL * 4;
                    tile(r, c, rows, row, s, col0, rows, 0, w, (c->plain ? c->nc : PANEL) * 4, kc,
                         first, last);
                }
            }
        }
        if (c->y_partials)
            finish_y(r, c, col0, y_done, col0 + cols);
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

int main(int argc, char **argv)
{
    const char *placement = argc == 10 ? argv[9] : "aligned";
    uint64_t off_x = 0, off_w = 0, off_y = 0;
    if ((argc != 9 && argc != 10) || (strcmp(argv[4], "strips") && strcmp(argv[4], "tiles")) ||
        (strcmp(argv[7], "packed") && strcmp(argv[7], "plain")) ||
        placement_offset(placement, 2, &off_x) || placement_offset(placement, 2, &off_w) ||
        placement_offset(placement, 4, &off_y)) {
        fprintf(stderr, "usage: %s M N K strips|tiles KC NC packed|plain L2_KB "
                        "[aligned|malloc|page+B (B even, below %d)]\n", argv[0], PAGE);
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
    /* Whether the driver copies X: the generator's rule for a plan of M rows (gen/blocking.c). */
    const struct x_copy x_copy = blocking_x_copy((unsigned)c.m, c.n, c.k, c.nc);
    c.copy_x = x_copy_applies(&x_copy, c.m, c.n, 2 * c.k);

    static struct replay r;
    const char *why = NULL;
    if (cache_level_init(&r.sim.l1, 32 * 1024, 8, 64, &why) ||
        cache_level_init(&r.sim.l2[0], l2_kb * 1024, 16, 64, &why)) {
        fprintf(stderr, "driver_replay: %s\n", why);
        return 2;
    }
    r.sim.l2_count = 1;
    cache_sim_reset(&r.sim);
    r.sim.hook = on_dram;
    r.sim.hook_ctx = &r;

    /* The caller's buffers apart, each where the placement puts it in its first page (the
     * same layout whatever the placement, so that only the offsets differ); scratch as the
     * driver lays it out (runtime/driver.c). */
    uint64_t np = (c.n + PANEL - 1) / PANEL * PANEL, blocks_k = (c.k + c.kc - 1) / c.kc;
    uint64_t sizes[B_END] = {
        np * ((c.k + 1) / 2) * 4,
        c.m * c.k * 2,
        c.m * c.n * 4,
        blocks_k > 1 ? c.m * c.nc * 4 : 0,
        (c.tiles_outer ? c.tile_rows : c.m) * c.kc * 4,
        c.plain ? c.kc * (c.tiles_outer ? c.nc : c.strip) * 2 : 0,
        c.copy_x ? c.m * c.k * 2 : 0,
        c.m * 2,
    };
    const uint64_t offsets[B_END] = {c.plain ? off_w : 0, off_x, off_y};
    uint64_t at = 1ull << 32;
    for (int b = 0; b < B_END; b++) {
        r.base[b] = at + offsets[b];
        at = align64(at + sizes[b]) + (b < B_PARTIALS ? (1u << 20) + PAGE : 0);
    }
    r.base[B_END] = at;
    c.k_blocks = c.plain ? gr_k_blocks_lines(c.k, c.kc, r.base[B_W], c.k * 2, 1)
                         : gr_k_blocks_lines(c.k, c.kc, r.base[B_X], c.k * 2, 2);
    c.y_partials = gr_y_from_partials(r.base[B_Y], c.n * 4, c.strip * 4, !c.tiles_outer,
                                      c.k_blocks.first < c.k ? 2 : 1);

    replay_call(&r, &c);
    cache_sim_flush(&r.sim);
    double min = (double)sizes[B_W] + (double)sizes[B_X] + (double)sizes[B_Y], total = 0;
    for (int b = 0; b < B_END; b++)
        total += r.filled[b] + r.written[b];
    printf("ratio=%.3f dram_bytes=%.0f min_bytes=%.0f placement=%s\n", total / min, total, min,
           placement);
    for (int b = 0; b < B_END; b++)
        if (r.filled[b] + r.written[b] > 0)
            printf("  %-8s %8.2f MiB filled %8.2f MiB written back\n", buffer_names[b],
                   r.filled[b] / 1048576, r.written[b] / 1048576);
    return 0;
}
