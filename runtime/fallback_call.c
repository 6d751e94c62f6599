/* A call served by the scalar fallback: blocks of FALLBACK_BLOCK_ROWS rows, each widened once
 * into the shared scratch, then its columns split over the threads, each piece with a column
 * buffer of its own. */
#include "activations.h"
#include "dispatch.h"
#include "scratch.h"
#include "threads.h"

/* Rows of X the fallback widens at a time: 64 x K floats stay small, and are shared by all
 * the threads working on the block. */
#define FALLBACK_BLOCK_ROWS 64

struct fallback_context {
    const struct gr_weight_view *w;
    const float *x_f, *bias; /* the block's rows, widened */
    size_t rows;
    void *y; /* the block's first row of Y */
    size_t ldy;
    int y_bf16;
    size_t n, piece_cols;
    struct gr_scratch scratch; /* shared: x_f; one piece per column piece: its columns */
};

static void fallback_piece(void *ctx, size_t i)
{
    const struct fallback_context *f = ctx;
    size_t begin = i * f->piece_cols, end = begin + f->piece_cols;
    gr_fallback(f->x_f, f->rows, f->w, f->bias, f->y, f->ldy, f->y_bf16, begin,
                end < f->n ? end : f->n, gr_scratch_piece(&f->scratch, i));
}

gemm_rvv_status gr_run_fallback(const struct gr_call *c)
{
    const struct gr_weight_view *w = &c->w;
    size_t block = c->m < FALLBACK_BLOCK_ROWS ? c->m : FALLBACK_BLOCK_ROWS;
    struct fallback_context f = {.w = w, .bias = c->bias, .ldy = c->ldy, .y_bf16 = c->y_bf16,
                                 .n = w->n};
    size_t pieces = gr_split_columns(w->n, w->packed ? w->panel_width : GR_FALLBACK_COLS * 16,
                                     &f.piece_cols);
    if (gr_scratch_take(&f.scratch, block * w->k * sizeof(float), pieces,
                        GR_FALLBACK_COLS * w->k * sizeof(float)) != 0)
        return GEMM_RVV_ERR_NOMEM;
    float *x_f = gr_scratch_shared(&f.scratch);
    f.x_f = x_f;
    for (size_t row = 0; row < c->m; row += block) {
        f.rows = c->m - row < block ? c->m - row : block;
        gr_widen_rows(c->x + row * c->ldx, f.rows, c->ldx, w->k, x_f);
        f.y = gr_y_row(c->y, row, c->ldy, c->y_bf16);
        gr_parallel_for(pieces, fallback_piece, &f);
    }
    gr_scratch_give_back(&f.scratch);
    return GEMM_RVV_OK;
}
