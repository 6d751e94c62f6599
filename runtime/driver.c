#include "driver.h"

#include <string.h>

#include "bf16.h"
#include "cpu.h"
#include "lines.h"
#include "pack.h"
#include "row_steps.h"
#include "scratch.h"
#include "x_copy.h"

static size_t drive_min_size(size_t a, size_t b) { return a < b ? a : b; }

/* The columns of the widest strip among the row tiles of a call of m rows (cut as the loops
 * cut them: row_steps.h). */
static size_t drive_widest_strip(const struct gr_drive *d, size_t m)
{
    const struct gr_plan *p = d->plan;
    const uint32_t tiles = gr_row_tiles(m, p->bucket, p->tile_rows, p->tile_rows_least);
    size_t widest = 0;
    for (uint32_t r = 1; r <= p->tile_rows; r++)
        if (tiles >> (r - 1) & 1 && d->tile_cols[r - 1] > widest)
            widest = d->tile_cols[r - 1];
    return widest ? widest : d->tile_cols[p->tile_rows - 1];
}

void gr_drive_init(struct gr_drive *d, const struct gr_plan *plan,
                   const struct gr_variant *variant, int share, const struct gr_call *c)
{
    const int packed = c->w.packed != NULL;
    const size_t panel_width = packed ? c->w.panel_width : gr_panel_width();
    d->plan = plan;
    d->format = gr_format_of(plan->format);
    d->variant = variant;
    /* a row tile of fewer rows than the plan's runs at the LMUL its rows want: wider strips
     * over the same panels */
    const size_t m1_cols = variant->vlenb() / sizeof(float);
    for (uint32_t r = 1; r <= plan->tile_rows; r++) {
        const uint32_t lmul = plan->row_tile_lmul[r - 1] ? plan->row_tile_lmul[r - 1] : plan->lmul;
        const gr_tile_fn *tiles = d->format->tiles(variant, lmul);
        d->tile[r - 1] = tiles ? tiles[r - 1] : NULL;
        d->tile_cols[r - 1] = m1_cols * lmul;
    }
    d->blocking = packed ? plan->blocking[share] : plan->plain[share];
    d->strip = drive_widest_strip(d, c->m);
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
    d->ldx = c->ldx;
    d->packed = c->w.packed;
    d->plain = c->w.plain;
    d->ldw = c->w.ldw;
    d->bias = c->bias;
    d->ldy = c->ldy;
    d->y_bf16 = c->y_bf16;
    gr_drive_row_block(d, c, 0);
}

void gr_drive_row_block(struct gr_drive *d, const struct gr_call *c, size_t row)
{
    d->x = (const char *)c->x + row * c->ldx * d->format->x_bytes;
    d->rows = gr_row_step_end(row, d->plan->bucket, d->plan->tile_rows_least, c->m) - row;
    d->single_row = d->rows;
    for (size_t r = 0, r_end; r < d->rows; r = r_end) {
        r_end = gr_row_step_end(r, d->plan->tile_rows, d->plan->tile_rows_least, d->rows);
        if (r > 0 && r_end == d->rows && r_end - r == 1)
            d->single_row = r;
    }
    d->y = gr_y_row(c->y, row, c->ldy, c->y_bf16);
    d->x_shared = NULL;
}

/* Columns of Y a column block leaves to the next (gr_y_tail), at most: less than a line. */
#define Y_TAIL_COLS (GR_LINE_BYTES / sizeof(uint16_t))

/* The scratch of one participant: partial sums of a column block, the arranged activations of
 * a K block, (plain weights) the packed words of a strip or of a column block, (blockings
 * that copy X) a copy of X's rows, the elements of X a row carries between K blocks, (several
 * K blocks) the sums of the columns of Y a column block leaves to the next, and what the
 * format's strips need first. Formats that prepare X for the call arrange, copy and carry
 * none of it. */
struct layout {
    size_t partials, x_f, words, x_copy, x_carry, y_tail, strip; /* offsets in bytes */
    size_t bytes;
};

static struct layout drive_layout_of(const struct gr_drive *d)
{
    const struct gr_plan *p = d->plan;
    const uint32_t layout = d->variant->layout;
    const size_t kc = d->k_block, w_rows = gr_layout_rows(layout, kc);
    const int tiles_outer = d->blocking.order == GR_ORDER_TILES;
    const int in_place = d->format->x_prepared_bytes == NULL;
    struct layout l = {0, 0, 0, 0, 0, 0, 0, 0};
    size_t partials = kc < p->k ? (size_t)p->bucket * d->col_block * sizeof(float) : 0;
    size_t x_f = in_place ? (tiles_outer ? p->tile_rows : p->bucket) * kc * d->variant->x_bytes
                          : 0;
    size_t words = d->packed ? 0 : w_rows * (tiles_outer ? d->col_block : d->strip) *
                                       gr_layout_bytes(layout);
    l.x_f = gr_align_up(partials);
    l.words = l.x_f + gr_align_up(x_f);
    l.x_copy = l.words + gr_align_up(words);
    size_t x_copy = d->blocking.x_copy_rows && !d->blocking.x_copy_shared
                        ? (size_t)p->bucket * p->k * sizeof(uint16_t)
                        : 0;
    l.x_carry = l.x_copy + gr_align_up(x_copy);
    size_t carry = in_place ? 2 * (size_t)p->bucket * GR_K_CARRY_MAX * sizeof(uint16_t) : 0;
    l.y_tail = l.x_carry + gr_align_up(carry);
    const size_t y_tail = partials ? (size_t)p->bucket * Y_TAIL_COLS * sizeof(float) : 0;
    l.strip = l.y_tail + gr_align_up(y_tail);
    l.bytes = l.strip + (d->format->strip_bytes ? gr_align_up(d->format->strip_bytes(d)) : 0);
    return l;
}

size_t gr_drive_bytes(const struct gr_drive *d) { return drive_layout_of(d).bytes; }

void gr_drive_scratch_parts(const struct gr_drive *d, size_t at[GR_DRIVE_SCRATCH_PARTS + 1])
{
    const struct layout l = drive_layout_of(d);
    at[0] = l.partials;
    at[1] = l.x_f;
    at[2] = l.words;
    at[3] = l.x_copy;
    at[4] = l.x_carry;
    at[5] = l.y_tail;
    at[6] = l.strip;
    at[7] = l.bytes;
}

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

/* Whether the packed weights go on past the K block [k0, k0 + kc) of the strip at column col:
 * all but the weight's last panel's last block (gr_tile_args.w_more). */
static int drive_weights_go_on(const struct gr_drive *d, size_t col, size_t k0, size_t kc)
{
    const size_t pw = d->panel_width;
    return d->packed && (k0 + kc < d->plan->k || col / pw + 1 < (d->plan->n + pw - 1) / pw);
}

/* The weights of the strip at column col for the K block at k0 (even): the packed weights in
 * place, or the plain rows packed into buf (stride elements from one layout row to the next). */
static const void *drive_strip_weights(const struct gr_drive *d, size_t col, size_t k0, size_t kc,
                                       size_t vl, void *buf, size_t stride, size_t *w_stride)
{
    if (d->packed) {
        const size_t pw = d->panel_width;
        const struct gr_format_desc *f = d->format;
        *w_stride = pw;
        /* BF16: panels and k-pairs lie alike in both layouts, 4 bytes per column per k-pair;
         * Q8_0's strips are whole panels. */
        return (const char *)d->packed + gr_panel_offset(f, d->plan->k, pw, col, k0 / f->k_unit) +
               col % pw * gr_layout_bytes(d->variant->layout);
    }
    d->variant->pack(d->plain + col * d->ldw + k0, d->ldw, vl, kc, buf, stride);
    *w_stride = stride;
    return buf;
}

static void *drive_y_at(const struct gr_drive *d, size_t row, size_t col)
{
    return d->y_bf16 ? (void *)((uint16_t *)d->y + row * d->ldy + col)
                     : (void *)((float *)d->y + row * d->ldy + col);
}

/* Every loop's partition step but the rows' (drive_row_tile_end): from `at`, `step` wide, the
 * last step cut at `end` (the edge: a narrower strip, a narrower column block; the tiles take
 * any). */
static size_t drive_step_end(size_t at, size_t step, size_t end)
{
    return end - at < step ? end : at + step;
}

/* ---- Y: which loop writes which of Y's columns ----------------------------------------------
 * A line of Y that two column blocks share is written once, by the later (when the sums are
 * kept between K blocks, gr_y_tail): in the column block's last K block, the strips before
 * `from` write Y themselves; the rest keep their sums, from which columns [from, end) are
 * written and [end, the block's end) kept in `tail` for the next block, after the columns
 * [tail_from, the block's start) that the block before kept there (a row's at a time, as the
 * rows of Y crowd a few L2 sets). In strips order with Y from the partial sums
 * (gr_y_from_partials) Y's whole lines are written after each strip, while their sums are at
 * hand. Every rule about Y is in this section. */
struct y_rules {
    size_t from, end, tail_from;
};

/* What every column block of a piece shares: its K blocks, the loop order, whether the sums
 * are kept between K blocks and whether Y is written from them, where X is read from. */
struct walk {
    struct gr_k_blocks kb;
    int strips, sums_kept, y_partials;
    const uint16_t *x_c; /* X's copy (the call's or this piece's), or NULL: X itself */
    uint16_t *own_copy;  /* this piece's copy, made during its first column block */
    uint16_t *x_carry;   /* two buffers of X's elements carried between K blocks */
};

/* Where a K block's BF16 X is read from, set once per K block: element k of row r at
 * base[r * ld + k] (the caller's rows, or the block of a copy, based so that it is indexed at
 * the block's k as the rows are), and the elements carried into the block and out of it
 * (X's own rows: two buffers in turn; NULL from a copy). */
struct x_source {
    const uint16_t *base;
    size_t ld;
    const uint16_t *carry_in;
    uint16_t *carry_out;
};

/* The scratch the loops work in: partial sums, arranged activations, packed words, the
 * elements of X that one K block reads for the next (NULL when X is read from its copy), the
 * sums a column block keeps for the next, and its Y rules. */
struct work {
    float *partials;
    char *x_f, *words;
    void *strip;                /* what the format's strips need first */
    struct x_source x;          /* the K block's */
    int last;                   /* the last K block */
    struct y_rules y;           /* the column block's */
    float *tail;                /* rows x (columns kept) sums */
    size_t *y_done;             /* strips order, Y from the sums: columns written so far */
};

/* The Y rules of the column block [col, col_end) of `piece`. */
static struct y_rules drive_y_rules_of(const struct gr_drive *d, const struct walk *k,
                                       struct gr_cols piece, size_t col, size_t col_end)
{
    const uintptr_t y = (uintptr_t)d->y;
    const size_t y_bytes = d->y_bf16 ? sizeof(uint16_t) : sizeof(float);
    const size_t ldy_bytes = d->ldy * y_bytes;
    struct y_rules r;
    r.end = k->sums_kept ? gr_y_tail(y, y_bytes, ldy_bytes, col_end, piece.end) : col_end;
    r.from = k->y_partials ? col /* strips order writes Y from the sums */
             : r.end < col_end ? col + (r.end - col) / d->strip * d->strip
                               : col_end;
    r.tail_from = k->sums_kept && col > piece.begin
                      ? gr_y_tail(y, y_bytes, ldy_bytes, col, piece.end)
                      : col;
    return r;
}

/* The partial sum of row r, column j of the column block at col0: rows col_block apart, or
 * (sums_by_strip) each strip's rows one after the other. */
static float *drive_sum(const struct gr_drive *d, const struct work *w, size_t col0, size_t r,
                        size_t j)
{
    const size_t c = j - col0;
    if (d->format->sums_by_strip)
        return w->partials + (c / d->strip * d->plan->bucket + r) * d->strip + c % d->strip;
    return w->partials + r * d->col_block + c;
}

/* Whether the tiles of the strip at column s write Y themselves. */
static int drive_tiles_write_y(const struct work *w, size_t s)
{
    return w->last && s < w->y.from;
}

/* Y's columns [from, to) of rows [r0, r1) from the partial sums of the column block at col0,
 * each row after (with_tail) the columns the block before kept: a row's line written at once. */
static void drive_finish_rows(const struct gr_drive *d, const struct work *w, size_t col0,
                              size_t r0, size_t r1, size_t from, size_t to, int with_tail)
{
    const size_t kept = col0 - w->y.tail_from;
    /* the sums of [from, to) in pieces that lie one after the other: a row a column block
     * wide, or (by_strip) a strip's part of it, the next strip's bucket rows of sums on */
    const int by_strip = d->format->sums_by_strip;
    const size_t piece = by_strip ? d->strip : to - from;
    const size_t first = by_strip ? d->strip - (from - col0) % d->strip : piece;
    const size_t next = by_strip ? d->plan->bucket * d->strip : 0; /* a strip's sums to the next */
    void *const y = d->y;
    const size_t ldy = d->ldy;
    const int y_bf16 = d->y_bf16;
    const float *const bias = d->bias;
    for (size_t r = r0; r < r1; r++) {
        for (size_t j = w->y.tail_from; with_tail && j < col0; j++)
            gr_store_output(y, r * ldy + j, y_bf16, w->tail[r * kept + (j - w->y.tail_from)],
                            bias, j);
        if (from >= to)
            continue;
        const float *const at = drive_sum(d, w, col0, r, from);
        for (size_t j = from, end, step = first, n = 0; j < to; j = end, step = piece, n++) {
            end = drive_step_end(j, step, to);
            /* piece n: the first from its column on, the others from their strip's first */
            const float *sums = n == 0 ? at : at - (piece - first) + n * next;
            gr_store_outputs(y, r * ldy + j, y_bf16, sums, end - j, bias, j);
        }
    }
}

/* Tiles order, last K block: before a row tile's strips, the columns the block before kept;
 * after them, the columns from the sums. */
static void drive_y_before_row_tile(const struct gr_drive *d, const struct work *w, size_t col0,
                                    size_t r0, size_t r1)
{
    if (w->last)
        drive_finish_rows(d, w, col0, r0, r1, col0, col0, 1);
}

static void drive_y_after_row_tile(const struct gr_drive *d, const struct work *w, size_t col0,
                                   size_t r0, size_t r1)
{
    if (w->last)
        drive_finish_rows(d, w, col0, r0, r1, w->y.from, w->y.end, 0);
}

/* Strips order, Y from the sums, last K block: Y's whole lines up to the strip ending at
 * s_end. */
static void drive_y_after_strip(const struct gr_drive *d, const struct work *w, size_t col0,
                                size_t s_end)
{
    if (!w->y_done)
        return;
    size_t to = gr_y_line_col((uintptr_t)d->y, d->y_bf16 ? 2 : 4, s_end, *w->y_done);
    if (to > *w->y_done)
        drive_finish_rows(d, w, col0, 0, d->rows, *w->y_done, to, *w->y_done == col0);
    *w->y_done = to;
}

/* After the column block [col0, col_end)'s K blocks: in strips order what the strips left
 * (from y_done, or the strips from `from`); then the sums of [end, col_end) kept for the
 * next block. */
static void drive_y_after_block(const struct gr_drive *d, const struct walk *k,
                                const struct work *w, size_t col0, size_t col_end, size_t y_done)
{
    if (k->strips)
        drive_finish_rows(d, w, col0, 0, d->rows, k->y_partials ? y_done : w->y.from, w->y.end,
                     !k->y_partials || y_done == col0);
    const size_t kept = col_end - w->y.end;
    for (size_t r = 0; r < d->rows; r++)
        for (size_t j = w->y.end; j < col_end; j++)
            w->tail[r * kept + (j - w->y.end)] = *drive_sum(d, w, col0, r, j);
}

/* ---- the loops -------------------------------------------------------------------------- */

/* The elements of X's rows carried into the K block at k0 (*in, kept `in` apart a row) and
 * out of the one ending at k1 (the return, kept that far apart): gr_k_carry of the rows when
 * they share their offset into a line, else none. Kept close, not a line a row, so that the
 * carry adds a few lines, not one in every cache set. */
static size_t drive_carried(const struct gr_drive *d, size_t k0, size_t k1, size_t *in)
{
    const int share = d->ldx * sizeof(uint16_t) % GR_LINE_BYTES == 0;
    *in = share ? gr_k_carry((uintptr_t)d->x, d->plan->k, k0) : 0;
    return share ? gr_k_carry((uintptr_t)d->x, d->plan->k, k1) : 0;
}

/* X's rows [r0, r0 + rows) of the K block [k0, k0 + kc) arranged into x_f, x_stride apart,
 * from the block's source (w->x); where it carries, the block's first elements that the block
 * before read with the rest of their line come from carry_in, and the elements after the
 * block in its last line go to carry_out (drive_carried), a row at a time: X's rows crowd a
 * few cache sets, so a row's last line is at hand only until the next row's. */
static void drive_arrange_rows(const struct gr_drive *d, const struct work *w, size_t r0,
                               size_t rows, size_t k0, size_t kc, char *x_f, size_t x_stride)
{
    const struct x_source *src = &w->x;
    const uint16_t *x = src->base + r0 * src->ld;
    const size_t xb = d->variant->x_bytes, ld = src->ld;
    size_t in = 0, out = src->carry_in ? drive_carried(d, k0, k0 + kc, &in) : 0;
    const size_t skip = drive_min_size(in, kc);
    if (!skip && !out) {
        d->variant->arrange(x + k0, ld, rows, kc, x_f, x_stride);
        return;
    }
    for (size_t r = 0; r < rows; r++) {
        if (skip)
            d->variant->arrange(src->carry_in + (r0 + r) * in, in, 1, skip, x_f + r * xb,
                                x_stride);
        if (kc > skip)
            d->variant->arrange(x + r * ld + k0 + skip, ld, 1, kc - skip,
                                x_f + (skip * x_stride + r) * xb, x_stride);
        memcpy(src->carry_out + (r0 + r) * out, x + r * ld + k0 + kc, out * sizeof(uint16_t));
    }
}

/* The end of the row tile from row r: the plan's rule (row_steps.h). */
static size_t drive_row_tile_end(const struct gr_drive *d, size_t r)
{
    return gr_row_step_end(r, d->plan->tile_rows, d->plan->tile_rows_least, d->rows);
}

/* Row 0's partial sums of the strip at s (it starts a strip: drive_sum without its
 * divisions); row r's are r * drive_sums_row(d) floats on. */
static float *drive_strip_sums(const struct gr_drive *d, const struct work *w, size_t s,
                               size_t col0)
{
    return w->partials + (s - col0) * (d->format->sums_by_strip ? d->plan->bucket : 1);
}

static size_t drive_sums_row(const struct gr_drive *d)
{
    return d->format->sums_by_strip ? d->strip : d->col_block;
}

/* One register tile: `rows` rows from r by the strip at s of the column block at col0, its
 * activations, weights, first, last and vl already in a. Inlined: it runs once per row tile,
 * strip and K block. */
static inline __attribute__((always_inline)) void
drive_tile(const struct gr_drive *d, struct gr_tile_args *a, const struct work *w,
                       size_t r, size_t rows, size_t s, size_t col0)
{
    a->acc = drive_strip_sums(d, w, s, col0) + r * drive_sums_row(d);
    a->y = drive_y_at(d, r, s);
    d->tile[rows - 1](a);
}

/* What a strip's row tiles share (strips order), read from d once: after each tile's indirect
 * call the compiler would read every field of d again. */
struct strip_rows {
    const char *x0;       /* the rows' activations (x_row bytes a row; in_place: arranged with
                             x_stride their rows, else quantised with scales from scale0) */
    size_t x_row;
    const float *scale0;
    size_t scale_row;
    int in_place;
    float *acc;           /* the strip's partial sums, acc_row floats a row */
    size_t acc_row;
    char *y;              /* the strip's first output, y_row bytes a row */
    size_t y_row, y_bytes;
    const char *w0;       /* the strip's weights, vl and bias as the caller set them in a */
    size_t w_bytes;
    const float *bias;
};

/* The row tile of rows [r, r_end) over the strip [s, s_end). A tile of the loops' strips takes
 * it as it is; a tile of narrower strips walks it in its own and leaves a's strip as it found
 * it (BF16 only: Q8_0's tiles all take whole panels). */
static inline void drive_row_tile(const struct gr_drive *d, struct gr_tile_args *a,
                                  const struct strip_rows *sr, size_t s, size_t s_end, size_t r,
                                  size_t r_end)
{
    a->x = sr->x0 + r * sr->x_row;
    if (sr->in_place)
        a->x_stride = r_end - r;
    else
        a->x_scale = sr->scale0 + r * sr->scale_row;
    const size_t cols = d->tile_cols[r_end - r - 1];
    const gr_tile_fn tile = d->tile[r_end - r - 1];
    if (s_end - s <= cols) {
        a->acc = sr->acc + r * sr->acc_row;
        a->y = sr->y + r * sr->y_row;
        tile(a);
        return;
    }
    for (size_t t = s, t_end; t < s_end; t = t_end) {
        t_end = drive_step_end(t, cols, s_end);
        a->vl = t_end - t;
        a->w = sr->w0 + (t - s) * sr->w_bytes;
        a->bias = sr->bias ? sr->bias + (t - s) : NULL;
        a->acc = sr->acc + r * sr->acc_row + (t - s);
        a->y = sr->y + r * sr->y_row + (t - s) * sr->y_bytes;
        tile(a);
    }
    a->vl = s_end - s; /* the loop's strip again, for the next row tile */
    a->w = sr->w0;
    a->bias = sr->bias;
}

/* The row tiles of the strip [s, s_end) (strips order; its weights, vl and bias in a), the
 * block's single-row tile first where it has one (d->single_row). */
static void drive_strip_rows(const struct gr_drive *d, struct gr_tile_args *a,
                             const struct work *w, size_t s, size_t s_end, size_t col0,
                             const char *x0, size_t x_row, const float *scale0, int in_place)
{
    const size_t tile_rows = d->plan->tile_rows, least = d->plan->tile_rows_least;
    const size_t rows = d->rows, single = d->single_row;
    const size_t y_bytes = d->y_bf16 ? sizeof(uint16_t) : sizeof(float);
    const struct strip_rows sr = {
        .x0 = x0, .x_row = x_row, .scale0 = scale0, .scale_row = a->x_scale_stride,
        .in_place = in_place, .acc = drive_strip_sums(d, w, s, col0),
        .acc_row = drive_sums_row(d), .y = drive_y_at(d, 0, s), .y_row = d->ldy * y_bytes,
        .y_bytes = y_bytes, .w0 = a->w, .w_bytes = gr_layout_bytes(d->variant->layout),
        .bias = a->bias};
    if (single < rows)
        drive_row_tile(d, a, &sr, s, s_end, single, rows);
    for (size_t r = 0, r_end; r < single; r = r_end) {
        r_end = gr_row_step_end(r, tile_rows, least, rows);
        drive_row_tile(d, a, &sr, s, s_end, r, r_end);
    }
}

/* One K block of one column block, strips outside row tiles: the block's activations of all
 * rows are arranged once and read by every strip, each row tile's apart with x_stride its
 * rows (as drive_tiles_outer arranges them; gr_contract.h). */
static void drive_strips_outer(const struct gr_drive *d, struct gr_tile_args *a, size_t col0,
                               size_t col_end, size_t k0, const struct work *w)
{
    const int in_place = d->format->x_prepared_bytes == NULL;
    const char *x0;
    const float *scale0 = NULL;
    size_t x_row; /* x0 + r * x_row: the activations of the row tile from row r on */
    if (in_place) {
        for (size_t r = 0, r_end; r < d->rows; r = r_end) {
            r_end = drive_row_tile_end(d, r);
            drive_arrange_rows(d, w, r, r_end - r, k0, a->kc,
                               w->x_f + r * a->kc * d->variant->x_bytes, r_end - r);
        }
        x0 = w->x_f;
        x_row = a->kc * d->variant->x_bytes;
    } else {
        d->format->tile_x(d, a, 0, k0);
        x0 = a->x;
        scale0 = a->x_scale;
        x_row = a->x_stride * d->format->x_prepared_elem;
    }
    for (size_t s = col0, s_end; s < col_end; s = s_end) {
        s_end = drive_step_end(s, d->strip, col_end);
        a->vl = s_end - s;
        a->last = drive_tiles_write_y(w, s);
        a->w = drive_strip_weights(d, s, k0, a->kc, a->vl, w->words, d->strip, &a->w_stride);
        a->w_more = drive_weights_go_on(d, s, k0, a->kc);
        if (d->format->strip_first)
            d->format->strip_first(d, a, w->strip);
        a->bias = d->bias ? d->bias + s : NULL;
        drive_strip_rows(d, a, w, s, s_end, col0, x0, x_row, scale0, in_place);
        drive_y_after_strip(d, w, col0, s_end);
    }
}

/* The same, row tiles outside strips: the K block of the column block's weights (packed into
 * scratch first when plain) is read by every row tile. */
static void drive_tiles_outer(const struct gr_drive *d, struct gr_tile_args *a, size_t col0,
                              size_t col_end, size_t k0, const struct work *w)
{
    const size_t w_bytes = gr_layout_bytes(d->variant->layout);
    if (!d->packed)
        for (size_t s = col0, s_end; s < col_end; s = s_end) {
            s_end = drive_step_end(s, d->strip, col_end);
            d->variant->pack(d->plain + s * d->ldw + k0, d->ldw, s_end - s, a->kc,
                             w->words + (s - col0) * w_bytes, d->col_block);
        }
    for (size_t r = 0, r_end; r < d->rows; r = r_end) {
        r_end = drive_row_tile_end(d, r);
        if (d->format->x_prepared_bytes) {
            d->format->tile_x(d, a, r, k0);
        } else {
            drive_arrange_rows(d, w, r, r_end - r, k0, a->kc, w->x_f, r_end - r);
            a->x = w->x_f;
            a->x_stride = r_end - r;
        }
        drive_y_before_row_tile(d, w, col0, r, r_end);
        const size_t cols = d->tile_cols[r_end - r - 1]; /* the row tile's own strips */
        for (size_t s = col0, s_end; s < col_end; s = s_end) {
            s_end = drive_step_end(s, cols, col_end);
            a->vl = s_end - s;
            a->last = drive_tiles_write_y(w, s);
            if (d->packed) {
                /* a strip's scratch is not kept across row tiles: its tiles do their own */
                a->w = drive_strip_weights(d, s, k0, a->kc, a->vl, NULL, 0, &a->w_stride);
                a->w_more = drive_weights_go_on(d, s, k0, a->kc);
                a->w_scale = NULL;
            } else {
                a->w = w->words + (s - col0) * w_bytes;
                a->w_stride = d->col_block;
            }
            a->bias = d->bias ? d->bias + s : NULL;
            drive_tile(d, a, w, r, r_end - r, s, col0);
        }
        drive_y_after_row_tile(d, w, col0, r, r_end);
    }
}

/* X's rows are copied into scratch a K block at a time during the first column block, as the
 * plan's x_copy_* fields say (runtime/x_copy.h, the generator's rule). */
static int drive_x_copy_applies(const struct gr_drive *d, size_t cols)
{
    const struct gr_blocking *b = &d->blocking;
    return gr_x_copy_applies(b->x_copy_rows, b->x_copy_cols, b->x_copy_stride, d->rows, cols,
                             d->ldx * sizeof(uint16_t));
}

int gr_drive_copies_x(const struct gr_drive *d, size_t col_begin, size_t col_end)
{
    return !d->format->x_prepared_bytes && !d->blocking.x_copy_shared &&
           drive_x_copy_applies(d, col_end - col_begin);
}

/* One copy for the call: read by every participant, its columns counted on the call's. */
int gr_drive_shares_x(const struct gr_drive *d, size_t n)
{
    return d->format->x_prepared_bytes || (d->blocking.x_copy_shared && drive_x_copy_applies(d, n));
}

size_t gr_drive_shared_bytes(const struct gr_drive *d)
{
    const struct gr_blocking *b = &d->blocking;
    if (d->format->x_prepared_bytes)
        return d->format->x_prepared_bytes(d->plan->bucket, d->plan->k);
    return b->x_copy_rows && b->x_copy_shared
               ? (size_t)d->plan->bucket * d->plan->k * sizeof(uint16_t)
               : 0;
}

/* The K blocks d walks: the plan's, shifted so that the rows they are cut from (W's for plain
 * weights, X's for packed ones) are read in whole lines (runtime/lines.h); from k = 0 where X
 * is prepared for the call (in scratch, its blocks whole units of the packed layout). */
static struct gr_k_blocks drive_k_blocks_of(const struct gr_drive *d)
{
    const size_t k = d->plan->k;
    if (d->format->x_prepared_bytes)
        return (struct gr_k_blocks){k, d->k_block, d->k_block};
    if (d->packed)
        return gr_k_blocks_lines(k, d->k_block, (uintptr_t)d->x, d->ldx * sizeof(uint16_t), 2);
    return gr_k_blocks_lines(k, d->k_block, (uintptr_t)d->plain, d->ldw * sizeof(uint16_t), 1);
}

/* Copies X's rows for the K block [k0, k1) into `block`, one row after the other: the
 * block's first elements from carry_in where the block before read their line, and the
 * elements after the block in its last line into carry_out for the next (carried). */
static void drive_copy_x(const struct gr_drive *d, uint16_t *block, const uint16_t *carry_in,
                         uint16_t *carry_out, size_t k0, size_t k1)
{
    const size_t kc = k1 - k0;
    size_t in, out = drive_carried(d, k0, k1, &in);
    const size_t skip = drive_min_size(in, kc);
    for (size_t r = 0; r < d->rows; r++) {
        const uint16_t *row = (const uint16_t *)d->x + r * d->ldx;
        memcpy(block + r * kc, carry_in + r * in, skip * sizeof(uint16_t));
        memcpy(block + r * kc + skip, row + k0 + skip, (kc - skip) * sizeof(uint16_t));
        memcpy(carry_out + r * out, row + k1, out * sizeof(uint16_t));
    }
}

void gr_drive_prepare_x_rows(const struct gr_drive *d, void *shared, size_t r0, size_t r1)
{
    if (d->format->prepare_x) {
        d->format->prepare_x(d, shared, r0, r1);
        return;
    }
    const struct gr_k_blocks kb = drive_k_blocks_of(d);
    const size_t k = d->plan->k;
    uint16_t *copy = shared;
    for (size_t r = r0; r < r1; r++) /* each row read once along K, so no carry is needed */
        for (size_t k0 = 0, k1; k0 < k; k0 = k1) {
            k1 = gr_k_block_end(&kb, k0);
            memcpy(copy + k0 * d->rows + r * (k1 - k0), (const uint16_t *)d->x + r * d->ldx + k0,
                   (k1 - k0) * sizeof(uint16_t));
        }
}


/* One K block [k0, k1) of the column block [col, col_end): the carry buffers in turn, X's
 * block copied during the piece's first column block (own copy), then the inner loops in the
 * plan's order. */
static void drive_k_block(const struct gr_drive *d, const struct walk *k, struct work *w,
                          struct gr_tile_args *a, size_t col, size_t col_end, size_t k0,
                          size_t k1, int turn, int copies, size_t *y_done)
{
    a->kc = k1 - k0;
    a->first = k0 == 0;
    w->last = k1 == d->plan->k;
    w->y_done = w->last && k->y_partials ? y_done : NULL;
    uint16_t *carry_in = k->x_carry + turn * d->plan->bucket * GR_K_CARRY_MAX;
    uint16_t *carry_out = k->x_carry + (turn ^ 1) * d->plan->bucket * GR_K_CARRY_MAX;
    if (k->x_c) { /* the block's rows at x_c + k0 * rows, kc apart */
        if (copies)
            drive_copy_x(d, k->own_copy + k0 * d->rows, carry_in, carry_out, k0, k1);
        w->x = (struct x_source){k->x_c + k0 * d->rows - k0, a->kc, NULL, NULL};
    } else {
        w->x = (struct x_source){d->x, d->ldx, carry_in, carry_out};
    }
    if (k->strips)
        drive_strips_outer(d, a, col, col_end, k0, w);
    else
        drive_tiles_outer(d, a, col, col_end, k0, w);
}

/* One column block [col, col_end) of `piece`: its Y rules, its K blocks, then what Y needs
 * after them. */
static void drive_column_block(const struct gr_drive *d, const struct walk *k, struct work *w,
                               struct gr_tile_args *a, struct gr_cols piece, size_t col,
                               size_t col_end, int first)
{
    size_t y_done = col;
    w->y = drive_y_rules_of(d, k, piece, col, col_end);
    for (size_t k0 = 0, k1, turn = 0; k0 < d->plan->k; k0 = k1, turn ^= 1) {
        k1 = gr_k_block_end(&k->kb, k0);
        drive_k_block(d, k, w, a, col, col_end, k0, k1, (int)turn, first && k->own_copy,
                      &y_done);
    }
    drive_y_after_block(d, k, w, col, col_end, y_done);
}

void gr_drive_columns(const struct gr_drive *d, struct gr_cols piece, struct gr_cols cols,
                      void *scratch)
{
    const struct layout l = drive_layout_of(d);
    const size_t y_bytes = d->y_bf16 ? sizeof(uint16_t) : sizeof(float);
    struct walk k;
    k.kb = drive_k_blocks_of(d);
    k.strips = d->blocking.order == GR_ORDER_STRIPS;
    k.sums_kept = k.kb.first < d->plan->k;
    k.y_partials = gr_y_from_partials((uintptr_t)d->y, d->ldy * y_bytes, d->strip * y_bytes,
                                      k.strips, k.sums_kept ? 2 : 1);
    const int in_place = d->format->x_prepared_bytes == NULL;
    k.own_copy = !d->x_shared && gr_drive_copies_x(d, cols.begin, cols.end)
                     ? (uint16_t *)(void *)((char *)scratch + l.x_copy)
                     : NULL;
    k.x_c = !in_place ? NULL : d->x_shared ? (const uint16_t *)d->x_shared : k.own_copy;
    k.x_carry = (uint16_t *)(void *)((char *)scratch + l.x_carry);
    struct work w = {(float *)(void *)((char *)scratch + l.partials), (char *)scratch + l.x_f,
                     (char *)scratch + l.words, (char *)scratch + l.strip, {NULL, 0, NULL, NULL},
                     0, {0, 0, 0}, (float *)(void *)((char *)scratch + l.y_tail), NULL};
    struct gr_tile_args a = {0};
    a.acc_stride = d->format->sums_by_strip ? d->strip : d->col_block;
    a.ldy = d->ldy;
    a.y_bf16 = d->y_bf16;
    for (size_t col = cols.begin, col_end; col < cols.end; col = col_end) {
        col_end = drive_step_end(col, d->col_block, cols.end);
        drive_column_block(d, &k, &w, &a, piece, col, col_end, col == cols.begin);
    }
}
