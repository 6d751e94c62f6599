/* A Q8_0 call served by a plan: for each row block of the plan's bucket, X quantised once into
 * the shared scratch (a share of the rows per thread), then each thread's piece of the columns
 * walked column blocks > K blocks > strips > row tiles (gen/blocking_q8_0.c says why): a
 * strip's weights of a K block are read from memory once and from L1 by every row tile, a K
 * block of X stays in cache across a column block, and the column block's partial sums
 * between K blocks stay in the thread's scratch (bucket x col_block floats). A strip read by
 * more than one row tile has its K block's scales widened to FP32 once, for all of them, into
 * the thread's scratch after the sums (kc_blocks x pw floats). */
#include "dispatch.h"
#include "q8_0.h"
#include "q8_0_pack.h"
#include "scratch.h"
#include "settings.h"
#include "threads.h"

struct q8_plan_context {
    const struct gr_call *c;
    const struct gr_plan *plan;
    size_t pw, k_blocks, kc_blocks; /* panel width; blocks of K, of a K block */
    size_t col_block;               /* columns, whole panels */
    size_t rows, row;               /* this row block: its rows, its first row in X */
    struct gr_q8_x x;               /* its rows quantised (bucket rows of room) */
    size_t pieces, piece_cols;
    struct gr_scratch scratch;      /* shared: x; one piece per column piece: partial sums */
};

/* Share i of the row block's rows quantised. */
static void quantize_share(void *ctx, size_t i)
{
    const struct q8_plan_context *p = ctx;
    const size_t k = p->c->w.k, r0 = p->rows * i / p->pieces, r1 = p->rows * (i + 1) / p->pieces;
    const struct gr_q8_x share = {p->x.d + r0 * p->k_blocks, p->x.q + r0 * k};
    /* the tiles' vector rule where they run: a plan's call has them */
    gr_q8_0_quantize(p->c->x_f32 + (p->row + r0) * p->c->ldx, r1 - r0, p->c->ldx, k, share.q,
                     share.d);
}

/* Y's element (row r of the row block, column col). */
static void *y_at(const struct q8_plan_context *p, size_t r, size_t col)
{
    const struct gr_call *c = p->c;
    void *row = gr_y_row(c->y, p->row + r, c->ldy, c->y_bf16);
    return c->y_bf16 ? (void *)((uint16_t *)row + col) : (void *)((float *)row + col);
}

static void q8_piece(void *ctx, size_t i)
{
    const struct q8_plan_context *p = ctx;
    const struct gr_call *c = p->c;
    const size_t pw = p->pw, k = c->w.k, n = c->w.n, tile_rows = p->plan->tile_rows;
    const size_t begin = i * p->piece_cols;
    const size_t end = begin + p->piece_cols < n ? begin + p->piece_cols : n;
    const size_t panel_bytes = p->k_blocks * GR_Q8_PANEL_BLOCK_BYTES * pw;
    float *acc = gr_scratch_piece(&p->scratch, i);
    float *dw = p->rows > tile_rows ? acc + p->plan->bucket * p->col_block : NULL;
    for (size_t block = begin; block < end; block += p->col_block) {
        const size_t block_end = end - block < p->col_block ? end : block + p->col_block;
        for (size_t kb = 0; kb < p->k_blocks; kb += p->kc_blocks) {
            const size_t blocks =
                p->k_blocks - kb < p->kc_blocks ? p->k_blocks - kb : p->kc_blocks;
            for (size_t col = block; col < block_end; col += pw) {
                const unsigned char *panel =
                    (const unsigned char *)c->w.packed + col / pw * panel_bytes;
                float *strip_acc = acc + (col - block) / pw * p->rows * pw;
                const unsigned char *w = panel + kb * GR_Q8_PANEL_BLOCK_BYTES * pw;
                if (dw)
                    gr_q8_0_widen_scales(w, blocks, dw);
                for (size_t r = 0; r < p->rows; r += tile_rows) {
                    const size_t rows = p->rows - r < tile_rows ? p->rows - r : tile_rows;
                    const struct gr_q8_tile_args a = {
                        .xq = p->x.q + r * k + kb * GR_Q8_BLOCK, .xq_stride = k,
                        .dx = p->x.d + r * p->k_blocks + kb, .dx_stride = p->k_blocks,
                        .w = w, .blocks = blocks, .dw = dw,
                        .vl = block_end - col < pw ? block_end - col : pw,
                        .acc = strip_acc + r * pw, .acc_stride = pw, .first = kb == 0,
                        .last = kb + blocks == p->k_blocks, .y = y_at(p, r, col),
                        .ldy = c->ldy, .y_bf16 = c->y_bf16,
                        .bias = c->bias ? c->bias + col : NULL};
                    gr_q8_0_tiles[rows - 1](&a);
                }
            }
        }
    }
}

gemm_rvv_status gr_run_plan_q8_0(const struct gr_call *c, const struct gr_plan *plan)
{
    const struct gr_weight_view *w = &c->w;
    int forced_share = gr_settings()->share;
    int share = forced_share >= 0 ? forced_share
                                  : gr_threads_get() > 1 ? GR_L2_SHARED : GR_L2_ALONE;
    struct q8_plan_context p = {.c = c, .plan = plan, .pw = w->panel_width,
                                .k_blocks = w->k / GR_Q8_BLOCK};
    const struct gr_blocking *b = &plan->blocking[share];
    p.kc_blocks = b->k_block / GR_Q8_BLOCK;
    if (p.kc_blocks == 0 || p.kc_blocks > p.k_blocks)
        p.kc_blocks = p.k_blocks;
    /* The plan's column block in whole panels of this core's width. */
    p.col_block = (b->col_block + p.pw - 1) / p.pw * p.pw;
    if (p.col_block == 0)
        p.col_block = p.pw;
    p.pieces = gr_split_columns(w->n, p.pw, &p.piece_cols);
    if (p.col_block > p.piece_cols)
        p.col_block = p.piece_cols;
    const size_t scales = plan->bucket > plan->tile_rows ? p.kc_blocks * p.pw : 0;
    if (gr_scratch_take(&p.scratch, gr_q8_x_bytes(plan->bucket, w->k), p.pieces,
                        (plan->bucket * p.col_block + scales) * sizeof(float)) != 0)
        return GEMM_RVV_ERR_NOMEM;
    p.x = gr_q8_x_at(gr_scratch_shared(&p.scratch), plan->bucket, w->k);
    for (p.row = 0; p.row < c->m; p.row += plan->bucket) {
        p.rows = c->m - p.row < plan->bucket ? c->m - p.row : plan->bucket;
        gr_parallel_for(p.pieces, quantize_share, &p);
        gr_parallel_for(p.pieces, q8_piece, &p);
    }
    gr_scratch_give_back(&p.scratch);
    return GEMM_RVV_OK;
}
