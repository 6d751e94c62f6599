#include "driver.h"

#include <string.h>

#include "pack.h"
#include "scratch.h"

static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

void gr_drive_init(struct gr_drive *d, const struct gr_plan *plan,
                   const struct gr_variant *variant, int share, size_t panel_width, int packed)
{
    d->plan = plan;
    d->variant = variant;
    d->tiles = variant->tiles[__builtin_ctz(plan->lmul)];
    d->blocking = packed ? plan->blocking[share] : plan->plain[share];
    d->strip = variant->vlenb() / sizeof(float) * plan->lmul;
    d->panel_width = panel_width;
    size_t nc = (d->blocking.col_block + panel_width - 1) / panel_width * panel_width;
    d->col_block = nc ? nc : panel_width;
    d->k_block = d->blocking.k_block >= plan->k ? plan->k : d->blocking.k_block;
    if (!packed && d->blocking.order == GR_ORDER_STRIPS) {
        /* even, k per strip: every layout holds a column's k in 2 bytes */
        size_t most = GR_PLAIN_STRIP_BYTES / (2 * d->strip) / 2 * 2;
        if (most < 2)
            most = 2;
        if (d->k_block > most)
            d->k_block = most;
    }
}

/* The scratch of one participant: partial sums of a column block, the arranged activations of
 * a K block, (plain weights) the packed words of a strip or of a column block, and (blockings
 * that copy X) a copy of X's rows. */
struct layout {
    size_t partials, x_f, words, x_copy; /* offsets in bytes */
    size_t bytes;
};

static struct layout layout_of(const struct gr_drive *d)
{
    const struct gr_plan *p = d->plan;
    const uint32_t layout = d->variant->layout;
    const size_t kc = d->k_block, w_rows = gr_layout_rows(layout, kc);
    const int tiles_outer = d->blocking.order == GR_ORDER_TILES;
    struct layout l = {0, 0, 0, 0, 0};
    size_t partials = kc < p->k ? (size_t)p->bucket * d->col_block * sizeof(float) : 0;
    size_t x_f = (tiles_outer ? p->tile_rows : p->bucket) * kc * d->variant->x_bytes;
    size_t words = d->packed ? 0 : w_rows * (tiles_outer ? d->col_block : d->strip) *
                                       gr_layout_bytes(layout);
    l.x_f = gr_align_up(partials);
    l.words = l.x_f + gr_align_up(x_f);
    l.x_copy = l.words + gr_align_up(words);
    size_t x_copy = d->blocking.x_copy_rows ? (size_t)p->bucket * p->k * sizeof(uint16_t) : 0;
    l.bytes = l.x_copy + gr_align_up(x_copy);
    return l;
}

size_t gr_drive_bytes(const struct gr_drive *d) { return layout_of(d).bytes; }

/* The weights of the strip at column col for the K block at k0 (even): the packed weights in
 * place, or the plain rows packed into buf (stride elements from one layout row to the next). */
static const void *strip_weights(const struct gr_drive *d, size_t col, size_t k0, size_t kc,
                                 size_t vl, void *buf, size_t stride, size_t *w_stride)
{
    if (d->packed) {
        const size_t pw = d->panel_width, pairs = (d->plan->k + 1) / 2;
        *w_stride = pw;
        /* Panels and k-pairs lie alike in both layouts: 4 bytes per column per k-pair. */
        return (const char *)d->packed + (col / pw * pairs + k0 / 2) * pw * 4 +
               col % pw * gr_layout_bytes(d->variant->layout);
    }
    d->variant->pack(d->plain + col * d->ldw + k0, d->ldw, vl, kc, buf, stride);
    *w_stride = stride;
    return buf;
}

static void *y_at(const struct gr_drive *d, size_t row, size_t col)
{
    return d->y_bf16 ? (void *)((uint16_t *)d->y + row * d->ldy + col)
                     : (void *)((float *)d->y + row * d->ldy + col);
}

/* One K block of one column block, strips outside row tiles: the block's activations of all
 * rows are arranged once and read by every strip. */
static void strips_outer(const struct gr_drive *d, struct gr_tile_args *a, size_t col0,
                         size_t cols, size_t k0, float *partials, char *x_f, char *words)
{
    const struct gr_plan *p = d->plan;
    d->variant->arrange(d->x + k0, d->ldx, d->rows, a->kc, x_f, d->rows);
    for (size_t s = col0; s < col0 + cols; s += d->strip) {
        a->vl = min_size(d->strip, col0 + cols - s);
        a->w = strip_weights(d, s, k0, a->kc, a->vl, words, d->strip, &a->w_stride);
        a->bias = d->bias ? d->bias + s : NULL;
        for (size_t r = 0; r < d->rows; r += p->tile_rows) {
            size_t rows = min_size(p->tile_rows, d->rows - r);
            a->x = x_f + r * d->variant->x_bytes;
            a->x_stride = d->rows;
            a->acc = partials + r * d->col_block + (s - col0);
            a->y = y_at(d, r, s);
            d->tiles[rows - 1](a);
        }
    }
}

/* The same, row tiles outside strips: the K block of the column block's weights (packed into
 * scratch first when plain) is read by every row tile. */
static void tiles_outer(const struct gr_drive *d, struct gr_tile_args *a, size_t col0,
                        size_t cols, size_t k0, float *partials, char *x_f, char *words)
{
    const struct gr_plan *p = d->plan;
    const size_t w_bytes = gr_layout_bytes(d->variant->layout);
    if (!d->packed)
        for (size_t s = col0; s < col0 + cols; s += d->strip)
            d->variant->pack(d->plain + s * d->ldw + k0, d->ldw,
                             min_size(d->strip, col0 + cols - s), a->kc,
                             words + (s - col0) * w_bytes, d->col_block);
    for (size_t r = 0; r < d->rows; r += p->tile_rows) {
        size_t rows = min_size(p->tile_rows, d->rows - r);
        d->variant->arrange(d->x + r * d->ldx + k0, d->ldx, rows, a->kc, x_f, rows);
        a->x = x_f;
        a->x_stride = rows;
        for (size_t s = col0; s < col0 + cols; s += d->strip) {
            a->vl = min_size(d->strip, col0 + cols - s);
            if (d->packed) {
                a->w = strip_weights(d, s, k0, a->kc, a->vl, NULL, 0, &a->w_stride);
            } else {
                a->w = words + (s - col0) * w_bytes;
                a->w_stride = d->col_block;
            }
            a->bias = d->bias ? d->bias + s : NULL;
            a->acc = partials + r * d->col_block + (s - col0);
            a->y = y_at(d, r, s);
            d->tiles[rows - 1](a);
        }
    }
}

/* X's rows are copied into scratch a K block at a time during the first column block. */
int gr_drive_copies_x(const struct gr_drive *d, size_t col_begin, size_t col_end)
{
    const struct gr_blocking *b = &d->blocking;
    return b->x_copy_rows && d->rows >= b->x_copy_rows && col_end - col_begin >= b->x_copy_cols &&
           d->ldx * sizeof(uint16_t) % b->x_copy_stride == 0;
}

void gr_drive_columns(const struct gr_drive *d, size_t col_begin, size_t col_end, void *scratch)
{
    const struct layout l = layout_of(d);
    float *partials = (float *)((char *)scratch + l.partials);
    char *x_f = (char *)scratch + l.x_f;
    char *words = (char *)scratch + l.words;
    const size_t k = d->plan->k;

    uint16_t *x_c = gr_drive_copies_x(d, col_begin, col_end)
                        ? (uint16_t *)(void *)((char *)scratch + l.x_copy)
                        : NULL;
    struct gr_drive copied = *d;
    const struct gr_drive *dd = x_c ? &copied : d;

    struct gr_tile_args a = {0};
    a.acc_stride = d->col_block;
    a.ldy = d->ldy;
    a.y_bf16 = d->y_bf16;
    for (size_t col = col_begin; col < col_end; col += d->col_block) {
        size_t cols = min_size(d->col_block, col_end - col);
        for (size_t k0 = 0; k0 < k; k0 += d->k_block) {
            a.kc = min_size(d->k_block, k - k0);
            a.first = k0 == 0;
            a.last = k0 + a.kc == k;
            if (x_c) { /* the block's rows at x_c + k0 * rows, a.kc apart */
                uint16_t *rows = x_c + k0 * d->rows;
                if (col == col_begin)
                    for (size_t r = 0; r < d->rows; r++)
                        memcpy(rows + r * a.kc, d->x + r * d->ldx + k0, a.kc * sizeof(uint16_t));
                copied.x = rows - k0; /* the loops index X at k0: (rows - k0) + k0 + r * kc */
                copied.ldx = a.kc;
            }
            if (d->blocking.order == GR_ORDER_TILES)
                tiles_outer(dd, &a, col, cols, k0, partials, x_f, words);
            else
                strips_outer(dd, &a, col, cols, k0, partials, x_f, words);
        }
    }
}
