#include "driver.h"

#include <string.h>

#include "bf16.h"
#include "lines.h"
#include "pack.h"
#include "scratch.h"
#include "x_copy.h"

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

/* Columns of Y a column block leaves to the next (gr_y_tail), at most: less than a line. */
#define Y_TAIL_COLS (GR_LINE_BYTES / sizeof(uint16_t))

/* The scratch of one participant: partial sums of a column block, the arranged activations of
 * a K block, (plain weights) the packed words of a strip or of a column block, (blockings
 * that copy X) a copy of X's rows, the elements of X a row carries between K blocks, and
 * (several K blocks) the sums of the columns of Y a column block leaves to the next. */
struct layout {
    size_t partials, x_f, words, x_copy, x_carry, y_tail; /* offsets in bytes */
    size_t bytes;
};

static struct layout layout_of(const struct gr_drive *d)
{
    const struct gr_plan *p = d->plan;
    const uint32_t layout = d->variant->layout;
    const size_t kc = d->k_block, w_rows = gr_layout_rows(layout, kc);
    const int tiles_outer = d->blocking.order == GR_ORDER_TILES;
    struct layout l = {0, 0, 0, 0, 0, 0, 0};
    size_t partials = kc < p->k ? (size_t)p->bucket * d->col_block * sizeof(float) : 0;
    size_t x_f = (tiles_outer ? p->tile_rows : p->bucket) * kc * d->variant->x_bytes;
    size_t words = d->packed ? 0 : w_rows * (tiles_outer ? d->col_block : d->strip) *
                                       gr_layout_bytes(layout);
    l.x_f = gr_align_up(partials);
    l.words = l.x_f + gr_align_up(x_f);
    l.x_copy = l.words + gr_align_up(words);
    size_t x_copy = d->blocking.x_copy_rows && !d->blocking.x_copy_shared
                        ? (size_t)p->bucket * p->k * sizeof(uint16_t)
                        : 0;
    l.x_carry = l.x_copy + gr_align_up(x_copy);
    l.y_tail = l.x_carry + gr_align_up(2 * (size_t)p->bucket * GR_K_CARRY_MAX * sizeof(uint16_t));
    l.bytes = l.y_tail + (partials ? gr_align_up((size_t)p->bucket * Y_TAIL_COLS * sizeof(float)) : 0);
    return l;
}

size_t gr_drive_bytes(const struct gr_drive *d) { return layout_of(d).bytes; }

size_t gr_drive_rounds(struct gr_drive *d, size_t pieces)
{
    const size_t planned = d->blocking.col_rounds, pw = d->panel_width;
    if (!planned)
        return 0;
    const size_t on_l2 = pieces < planned ? (pieces ? pieces : 1) : planned;
    const size_t cols = (d->col_block * planned + on_l2 - 1) / on_l2;
    d->col_block = (cols + pw - 1) / pw * pw;
    return d->col_block;
}

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

/* The scratch the loops work in: partial sums, arranged activations, packed words, the
 * elements of X that one K block reads for the next (NULL when X is read from its copy); and
 * how the column block's last K block writes Y (gr_y_tail): strips before y_from write it
 * themselves, the rest keep their sums, from which the loops write columns [y_from, y_end)
 * and keep [y_end, the block's end) in `tail` for the next block, after writing the columns
 * [tail_from, the block's start) the block before kept there (a row's at a time). */
struct work {
    float *partials;
    char *x_f, *words;
    const uint16_t *carry_in;   /* X's elements carried into the K block, out of it (NULL */
    uint16_t *carry_out;        /* when X is read from its copy): two buffers in turn */
    int last;                   /* the last K block */
    size_t y_from, y_end, tail_from;
    float *tail;                /* rows x (columns kept) sums */
    size_t *y_done;             /* strips order, Y from the sums: columns written so far */
};

/* The elements of X's rows carried into the K block at k0 (*in, kept `in` apart a row) and
 * out of the one ending at k1 (the return, kept that far apart): gr_k_carry of the rows when
 * they share their offset into a line, else none. Kept close, not a line a row, so that the
 * carry adds a few lines, not one in every cache set. */
static size_t carried(const struct gr_drive *d, size_t k0, size_t k1, size_t *in)
{
    const int share = d->ldx * sizeof(uint16_t) % GR_LINE_BYTES == 0;
    *in = share ? gr_k_carry((uintptr_t)d->x, d->plan->k, k0) : 0;
    return share ? gr_k_carry((uintptr_t)d->x, d->plan->k, k1) : 0;
}

/* X's rows [r0, r0 + rows) of the K block [k0, k0 + kc) arranged into x_f, x_stride apart;
 * with w->carry_in, the block's first elements that the block before read with the rest of
 * their line come from there, and the elements after the block in its last line go to
 * w->carry_out (carried), a row at a time: X's rows crowd a few cache sets, so a row's last
 * line is at hand only until the next row's. */
static void arrange_rows(const struct gr_drive *d, const struct work *w, size_t r0, size_t rows,
                         size_t k0, size_t kc, char *x_f, size_t x_stride)
{
    const uint16_t *x = d->x + r0 * d->ldx;
    const size_t xb = d->variant->x_bytes;
    size_t in = 0, out = w->carry_in ? carried(d, k0, k0 + kc, &in) : 0;
    const size_t skip = min_size(in, kc);
    if (!skip && !out) {
        d->variant->arrange(x + k0, d->ldx, rows, kc, x_f, x_stride);
        return;
    }
    for (size_t r = 0; r < rows; r++) {
        if (skip)
            d->variant->arrange(w->carry_in + (r0 + r) * in, in, 1, skip, x_f + r * xb,
                                x_stride);
        if (kc > skip)
            d->variant->arrange(x + r * d->ldx + k0 + skip, d->ldx, 1, kc - skip,
                                x_f + (skip * x_stride + r) * xb, x_stride);
        memcpy(w->carry_out + (r0 + r) * out, x + r * d->ldx + k0 + kc, out * sizeof(uint16_t));
    }
}

/* Y's columns [from, to) of rows [r0, r1) from the partial sums of the column block at col0,
 * each row after (with_tail) the columns the block before kept: a row's line written at once,
 * as the rows of Y crowd a few L2 sets. */
static void finish_rows(const struct gr_drive *d, const struct work *w, size_t col0, size_t r0,
                        size_t r1, size_t from, size_t to, int with_tail)
{
    const size_t kept = col0 - w->tail_from;
    for (size_t r = r0; r < r1; r++) {
        for (size_t j = w->tail_from; with_tail && j < col0; j++)
            gr_store_output(d->y, r * d->ldy + j, d->y_bf16,
                            w->tail[r * kept + (j - w->tail_from)], d->bias, j);
        for (size_t j = from; j < to; j++)
            gr_store_output(d->y, r * d->ldy + j, d->y_bf16,
                            w->partials[r * d->col_block + (j - col0)], d->bias, j);
    }
}

/* The sums of the columns [w->y_end, col_end) of the column block at col0, for the next. */
static void keep_tail(const struct gr_drive *d, const struct work *w, size_t col0,
                      size_t col_end)
{
    const size_t kept = col_end - w->y_end;
    for (size_t r = 0; r < d->rows; r++)
        for (size_t j = w->y_end; j < col_end; j++)
            w->tail[r * kept + (j - w->y_end)] = w->partials[r * d->col_block + (j - col0)];
}

/* One K block of one column block, strips outside row tiles: the block's activations of all
 * rows are arranged once and read by every strip. */
static void strips_outer(const struct gr_drive *d, struct gr_tile_args *a, size_t col0,
                         size_t cols, size_t k0, const struct work *w)
{
    const struct gr_plan *p = d->plan;
    char *x_f = w->x_f, *words = w->words;
    float *partials = w->partials;
    arrange_rows(d, w, 0, d->rows, k0, a->kc, x_f, d->rows);
    for (size_t s = col0; s < col0 + cols; s += d->strip) {
        a->vl = min_size(d->strip, col0 + cols - s);
        a->last = w->last && s < w->y_from;
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
        if (w->y_done) { /* Y's whole lines so far, while their partial sums are at hand */
            size_t to = gr_y_line_col((uintptr_t)d->y, d->y_bf16 ? 2 : 4, s + a->vl,
                                      *w->y_done);
            if (to > *w->y_done)
                finish_rows(d, w, col0, 0, d->rows, *w->y_done, to, *w->y_done == col0);
            *w->y_done = to;
        }
    }
}

/* The same, row tiles outside strips: the K block of the column block's weights (packed into
 * scratch first when plain) is read by every row tile. */
static void tiles_outer(const struct gr_drive *d, struct gr_tile_args *a, size_t col0,
                        size_t cols, size_t k0, const struct work *w)
{
    char *x_f = w->x_f, *words = w->words;
    float *partials = w->partials;
    const struct gr_plan *p = d->plan;
    const size_t w_bytes = gr_layout_bytes(d->variant->layout);
    if (!d->packed)
        for (size_t s = col0; s < col0 + cols; s += d->strip)
            d->variant->pack(d->plain + s * d->ldw + k0, d->ldw,
                             min_size(d->strip, col0 + cols - s), a->kc,
                             words + (s - col0) * w_bytes, d->col_block);
    for (size_t r = 0; r < d->rows; r += p->tile_rows) {
        size_t rows = min_size(p->tile_rows, d->rows - r);
        arrange_rows(d, w, r, rows, k0, a->kc, x_f, rows);
        a->x = x_f;
        a->x_stride = rows;
        if (w->last) /* the rows' columns the block before kept, with their first line */
            finish_rows(d, w, col0, r, r + rows, col0, col0, 1);
        for (size_t s = col0; s < col0 + cols; s += d->strip) {
            a->vl = min_size(d->strip, col0 + cols - s);
            a->last = w->last && s < w->y_from;
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
        if (w->last)
            finish_rows(d, w, col0, r, r + rows, w->y_from, w->y_end, 0);
    }
}

/* X's rows are copied into scratch a K block at a time during the first column block, as the
 * plan's x_copy_* fields say (runtime/x_copy.h, the generator's rule). */
static int x_copy_applies(const struct gr_drive *d, size_t cols)
{
    const struct gr_blocking *b = &d->blocking;
    return gr_x_copy_applies(b->x_copy_rows, b->x_copy_cols, b->x_copy_stride, d->rows, cols,
                             d->ldx * sizeof(uint16_t));
}

int gr_drive_copies_x(const struct gr_drive *d, size_t col_begin, size_t col_end)
{
    return !d->blocking.x_copy_shared && x_copy_applies(d, col_end - col_begin);
}

/* One copy for the call: read by every participant, its columns counted on the call's. */
int gr_drive_shares_x(const struct gr_drive *d, size_t n)
{
    return d->blocking.x_copy_shared && x_copy_applies(d, n);
}

size_t gr_drive_shared_bytes(const struct gr_drive *d)
{
    const struct gr_blocking *b = &d->blocking;
    return b->x_copy_rows && b->x_copy_shared
               ? (size_t)d->plan->bucket * d->plan->k * sizeof(uint16_t)
               : 0;
}

/* The K blocks d walks: the plan's, shifted so that the rows they are cut from (W's for plain
 * weights, X's for packed ones) are read in whole lines (runtime/lines.h). */
static struct gr_k_blocks k_blocks_of(const struct gr_drive *d)
{
    const size_t k = d->plan->k;
    if (d->packed)
        return gr_k_blocks_lines(k, d->k_block, (uintptr_t)d->x, d->ldx * sizeof(uint16_t), 2);
    return gr_k_blocks_lines(k, d->k_block, (uintptr_t)d->plain, d->ldw * sizeof(uint16_t), 1);
}

/* Copies X's rows for the K block [k0, k1) into `block`, one row after the other: the
 * block's first elements from carry_in where the block before read their line, and the
 * elements after the block in its last line into carry_out for the next (carried). */
static void copy_x(const struct gr_drive *d, uint16_t *block, const uint16_t *carry_in,
                   uint16_t *carry_out, size_t k0, size_t k1)
{
    const size_t kc = k1 - k0;
    size_t in, out = carried(d, k0, k1, &in);
    const size_t skip = min_size(in, kc);
    for (size_t r = 0; r < d->rows; r++) {
        const uint16_t *row = d->x + r * d->ldx;
        memcpy(block + r * kc, carry_in + r * in, skip * sizeof(uint16_t));
        memcpy(block + r * kc + skip, row + k0 + skip, (kc - skip) * sizeof(uint16_t));
        memcpy(carry_out + r * out, row + k1, out * sizeof(uint16_t));
    }
}

void gr_drive_copy_x_rows(const struct gr_drive *d, uint16_t *copy, size_t r0, size_t r1)
{
    const struct gr_k_blocks kb = k_blocks_of(d);
    const size_t k = d->plan->k;
    for (size_t r = r0; r < r1; r++) /* each row read once along K, so no carry is needed */
        for (size_t k0 = 0, k1; k0 < k; k0 = k1) {
            k1 = gr_k_block_end(&kb, k0);
            memcpy(copy + k0 * d->rows + r * (k1 - k0), d->x + r * d->ldx + k0,
                   (k1 - k0) * sizeof(uint16_t));
        }
}

void gr_drive_columns(const struct gr_drive *d, struct gr_cols piece, struct gr_cols cols,
                      void *scratch)
{
    const struct layout l = layout_of(d);
    float *partials = (float *)((char *)scratch + l.partials);
    uint16_t *x_carry = (uint16_t *)(void *)((char *)scratch + l.x_carry);
    const size_t k = d->plan->k;
    const struct gr_k_blocks kb = k_blocks_of(d);
    const int strips = d->blocking.order == GR_ORDER_STRIPS, sums_kept = kb.first < k;
    const uintptr_t y = (uintptr_t)d->y;
    const size_t y_bytes = d->y_bf16 ? sizeof(uint16_t) : sizeof(float);
    const size_t ldy_bytes = d->ldy * y_bytes;
    const int y_partials = gr_y_from_partials(y, ldy_bytes, d->strip * y_bytes, strips,
                                              sums_kept ? 2 : 1);

    uint16_t *own_copy = !d->x_copy && gr_drive_copies_x(d, cols.begin, cols.end)
                             ? (uint16_t *)(void *)((char *)scratch + l.x_copy)
                             : NULL;
    const uint16_t *x_c = d->x_copy ? d->x_copy : own_copy;
    struct gr_drive copied = *d;
    const struct gr_drive *dd = x_c ? &copied : d;
    struct work w = {partials, (char *)scratch + l.x_f, (char *)scratch + l.words,
                     NULL, NULL, 0, 0, 0, 0,
                     (float *)(void *)((char *)scratch + l.y_tail), NULL};
    size_t y_done = 0;

    struct gr_tile_args a = {0};
    a.acc_stride = d->col_block;
    a.ldy = d->ldy;
    a.y_bf16 = d->y_bf16;
    for (size_t col = cols.begin; col < cols.end; col += d->col_block) {
        const size_t col_end = col + min_size(d->col_block, cols.end - col);
        /* A line of Y that two column blocks share is written once, by the later (kept sums
         * needed): this block keeps the columns from y_end, and writes those the block
         * before kept from tail_from. */
        w.y_end = sums_kept ? gr_y_tail(y, y_bytes, ldy_bytes, col_end, piece.end) : col_end;
        w.y_from = y_partials          ? col /* strips order writes Y from the sums */
                   : w.y_end < col_end ? col + (w.y_end - col) / d->strip * d->strip
                                       : col_end;
        w.tail_from = sums_kept && col > piece.begin
                          ? gr_y_tail(y, y_bytes, ldy_bytes, col, piece.end)
                          : col;
        for (size_t k0 = 0, k1, turn = 0; k0 < k; k0 = k1, turn ^= 1) {
            k1 = gr_k_block_end(&kb, k0);
            a.kc = k1 - k0;
            a.first = k0 == 0;
            w.last = k1 == k;
            uint16_t *carry_in = x_carry + turn * d->plan->bucket * GR_K_CARRY_MAX;
            w.carry_out = x_carry + (turn ^ 1) * d->plan->bucket * GR_K_CARRY_MAX;
            w.carry_in = x_c ? NULL : carry_in;
            y_done = col;
            w.y_done = w.last && y_partials ? &y_done : NULL;
            if (x_c) { /* the block's rows at x_c + k0 * rows, a.kc apart */
                if (own_copy && col == cols.begin)
                    copy_x(d, own_copy + k0 * d->rows, carry_in, w.carry_out, k0, k1);
                copied.x = x_c + k0 * d->rows - k0; /* the loops index X at k0 */
                copied.ldx = a.kc;
            }
            if (strips)
                strips_outer(dd, &a, col, col_end - col, k0, &w);
            else
                tiles_outer(dd, &a, col, col_end - col, k0, &w);
        }
        if (strips) /* what the strips left: from y_done, or the strips from y_from */
            finish_rows(d, &w, col, 0, d->rows, y_partials ? y_done : w.y_from, w.y_end,
                        !y_partials || y_done == col);
        keep_tail(d, &w, col, col_end);
    }
}
