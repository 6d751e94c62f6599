/* The memory accesses of one call of runtime/driver.c, replayed on the host through the cache
 * model of measure/cache/cache_sim.c, in seconds instead of the 10 to 20 minutes a call with M = 128
 * takes under QEMU with the plugin. It is how the flood terms of the generator's traffic model
 * (gen/blocking.c) were calibrated: any blocking can be tried, not only the plan's.
 *
 * What it replays is the base variant at VLEN 256 with the 13 x 2 tile of M = 128 plans (strips
 * of 16 columns, panels of 64): the driver's loops (column blocks > K blocks > strips and row
 * tiles in either order), the copy of X's K blocks for plans of 32 rows or more, the widening
 * of activations into scratch, packing plain rows into scratch, the tiles' loads and stores of
 * weights, activations, partial sums and outputs, all at the sizes they have; scratch is laid
 * out as the driver lays it out. It is a model of the driver, not the driver: after a change to
 * the loops, check it against make bench-dram (the replay gives 1.444 and 1.644 for 4096 x 4096
 * packed and plain, M = 128, strips, K blocks of 128, column blocks of 384, 512 KiB, where the
 * plugin measured 1.445 and 1.654).
 *
 *   make bench-replay REPLAY_ARGS="M N K strips|tiles KC NC packed|plain L2_KB"
 * prints the DRAM bytes over the minimum and the megabytes filled and written back per buffer. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blocking.h"
#include "cache_sim.h"

#define TILE_ROWS 13
#define STRIP 16  /* columns: VLMAX(e32, m2) at VLEN 256 */
#define PANEL 64  /* columns of a panel of packed weights at VLEN 256 */
#define CHUNK 64  /* BF16 weights of a plain row that one pack load takes (e16m4) */

enum buffer { B_W, B_X, B_Y, B_PARTIALS, B_X_F, B_WORDS, B_X_COPY, B_END };
static const char *const buffer_names[B_END] = {"weights", "x",     "y",     "partials",
                                                "x_f",     "words", "x_copy"};

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
    int tiles_outer, plain, copy_x;
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

/* One register tile: partial sums in, a weight row and the rows' activations per k-pair,
 * partial sums or outputs out. */
static void tile(struct replay *r, const struct call *c, uint64_t rows, uint64_t row,
                 uint64_t col, uint64_t col0, uint64_t x_rows, uint64_t x_row, uint64_t w,
                 uint64_t w_stride, uint64_t kc, int first, int last)
{
    uint64_t acc = r->base[B_PARTIALS] + (row * c->nc + col - col0) * 4;
    if (!first)
        for (uint64_t i = 0; i < rows; i++)
            load(r, acc + i * c->nc * 4, STRIP * 4);
    for (uint64_t p = 0; p < kc / 2; p++) {
        load(r, w + p * w_stride, STRIP * 4);
        load(r, r->base[B_X_F] + (2 * p * x_rows + x_row) * 4, rows * 4);
        load(r, r->base[B_X_F] + ((2 * p + 1) * x_rows + x_row) * 4, rows * 4);
    }
    for (uint64_t i = 0; i < rows; i++) {
        if (last)
            store(r, r->base[B_Y] + ((row + i) * c->n + col) * 4, STRIP * 4);
        else
            store(r, acc + i * c->nc * 4, STRIP * 4);
    }
}

static void replay_call(struct replay *r, const struct call *c)
{
    const uint64_t pairs = (c->k + 1) / 2;
    for (uint64_t col0 = 0; col0 < c->n; col0 += c->nc) {
        uint64_t cols = min_u64(c->nc, c->n - col0);
        for (uint64_t k0 = 0; k0 < c->k; k0 += c->kc) {
            uint64_t kc = min_u64(c->kc, c->k - k0);
            int first = k0 == 0, last = k0 + kc == c->k;
            uint64_t x = r->base[B_X] + k0 * 2, ldx = c->k * 2;
            if (c->copy_x) { /* the block's rows one after the other, copied in the first block */
                uint64_t block = r->base[B_X_COPY] + k0 * c->m * 2;
                if (col0 == 0)
                    for (uint64_t i = 0; i < c->m; i++) {
                        load(r, r->base[B_X] + (i * c->k + k0) * 2, kc * 2);
                        store(r, block + i * kc * 2, kc * 2);
                    }
                x = block;
                ldx = kc * 2;
            }
            if (c->plain && c->tiles_outer)
                for (uint64_t s = col0; s < col0 + cols; s += STRIP)
                    pack(r, c, s, min_u64(STRIP, col0 + cols - s), k0, kc,
                         r->base[B_WORDS] + (s - col0) * 4, c->nc);
            if (!c->tiles_outer) {
                arrange(r, x, ldx, c->m, kc);
                for (uint64_t s = col0; s < col0 + cols; s += STRIP) {
                    uint64_t w = r->base[B_W] + ((s / PANEL) * pairs + k0 / 2) * PANEL * 4 +
                                 s % PANEL * 4,
                             w_stride = PANEL * 4;
                    if (c->plain) {
                        pack(r, c, s, min_u64(STRIP, col0 + cols - s), k0, kc, r->base[B_WORDS],
                             STRIP);
                        w = r->base[B_WORDS];
                        w_stride = STRIP * 4;
                    }
                    for (uint64_t row = 0; row < c->m; row += TILE_ROWS)
                        tile(r, c, min_u64(TILE_ROWS, c->m - row), row, s, col0, c->m, row, w,
                             w_stride, kc, first, last);
                }
                continue;
            }
            for (uint64_t row = 0; row < c->m; row += TILE_ROWS) {
                uint64_t rows = min_u64(TILE_ROWS, c->m - row);
                arrange(r, x + row * ldx, ldx, rows, kc);
                for (uint64_t s = col0; s < col0 + cols; s += STRIP) {
                    uint64_t w = c->plain ? r->base[B_WORDS] + (s - col0) * 4
                                          : r->base[B_W] + ((s / PANEL) * pairs + k0 / 2) * PANEL * 4 +
                                                s % PANEL * 4;
                    tile(r, c, rows, row, s, col0, rows, 0, w, (c->plain ? c->nc : PANEL) * 4, kc,
                         first, last);
                }
            }
        }
    }
}

int main(int argc, char **argv)
{
    if (argc != 9 || (strcmp(argv[4], "strips") && strcmp(argv[4], "tiles")) ||
        (strcmp(argv[7], "packed") && strcmp(argv[7], "plain"))) {
        fprintf(stderr, "usage: %s M N K strips|tiles KC NC packed|plain L2_KB\n", argv[0]);
        return 2;
    }
    struct call c = {strtoull(argv[1], NULL, 10), strtoull(argv[2], NULL, 10),
                     strtoull(argv[3], NULL, 10), strtoull(argv[5], NULL, 10),
                     strtoull(argv[6], NULL, 10), !strcmp(argv[4], "tiles"),
                     !strcmp(argv[7], "plain"), 0};
    uint64_t l2_kb = strtoull(argv[8], NULL, 10);
    if (!c.m || !c.n || !c.k || !c.kc || c.kc % 2 || !c.nc || c.nc % PANEL || !l2_kb) {
        fprintf(stderr, "driver_replay: M, N, K, L2_KB positive, KC even, NC a multiple of %d\n",
                PANEL);
        return 2;
    }
    c.kc = min_u64(c.kc, c.k);
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

    /* The caller's buffers apart, scratch as the driver lays it out (runtime/driver.c). */
    uint64_t np = (c.n + PANEL - 1) / PANEL * PANEL, blocks_k = (c.k + c.kc - 1) / c.kc;
    uint64_t sizes[B_END] = {
        np * ((c.k + 1) / 2) * 4,
        c.m * c.k * 2,
        c.m * c.n * 4,
        blocks_k > 1 ? c.m * c.nc * 4 : 0,
        (c.tiles_outer ? TILE_ROWS : c.m) * c.kc * 4,
        c.plain ? c.kc * (c.tiles_outer ? c.nc : STRIP) * 2 : 0,
        c.copy_x ? c.m * c.k * 2 : 0,
    };
    uint64_t at = 1ull << 32;
    for (int b = 0; b < B_END; b++) {
        r.base[b] = at;
        at = align64(at + sizes[b]) + (b < B_PARTIALS ? 1u << 20 : 0);
    }
    r.base[B_END] = at;

    replay_call(&r, &c);
    cache_sim_flush(&r.sim);
    double min = (double)sizes[B_W] + (double)sizes[B_X] + (double)sizes[B_Y], total = 0;
    for (int b = 0; b < B_END; b++)
        total += r.filled[b] + r.written[b];
    printf("ratio=%.3f dram_bytes=%.0f min_bytes=%.0f\n", total / min, total, min);
    for (int b = 0; b < B_END; b++)
        if (r.filled[b] + r.written[b] > 0)
            printf("  %-8s %8.2f MiB filled %8.2f MiB written back\n", buffer_names[b],
                   r.filled[b] / 1048576, r.written[b] / 1048576);
    return 0;
}
