/* A Q8_0 call served by the scalar fallback: blocks of Q8_FALLBACK_ROWS rows of X, each
 * quantised once into the shared scratch, then its columns split over the threads, each piece
 * with a buffer of one column's scales. */
#include "dispatch.h"
#include "q8_0.h"
#include "scratch.h"
#include "threads.h"

/* Rows of X quantised at a time: 64 x (K + K / 8) bytes, shared by the block's threads. */
#define Q8_FALLBACK_ROWS 64

struct q8_fallback_context {
    const struct gr_weight_view *w;
    struct gr_q8_x x; /* the block's rows, quantised */
    const float *bias;
    size_t rows;
    void *y; /* the block's first row of Y */
    size_t ldy;
    int y_bf16;
    size_t n, piece_cols;
    struct gr_scratch scratch; /* shared: x; one piece per column piece: its scales */
};

static void q8_fallback_piece(void *ctx, size_t i)
{
    const struct q8_fallback_context *f = ctx;
    size_t begin = i * f->piece_cols, end = begin + f->piece_cols;
    gr_q8_fallback(&f->x, f->rows, f->w, f->bias, f->y, f->ldy, f->y_bf16, begin,
                   end < f->n ? end : f->n, gr_scratch_piece(&f->scratch, i));
}

gemm_rvv_status gr_run_fallback_q8_0(const struct gr_call *c)
{
    const struct gr_weight_view *w = &c->w;
    size_t block = c->m < Q8_FALLBACK_ROWS ? c->m : Q8_FALLBACK_ROWS;
    struct q8_fallback_context f = {.w = w, .bias = c->bias, .ldy = c->ldy,
                                    .y_bf16 = c->y_bf16, .n = w->n};
    size_t pieces = gr_split_columns(w->n, GR_FALLBACK_COLS * 16, &f.piece_cols);
    if (gr_scratch_take(&f.scratch, gr_q8_x_bytes(block, w->k), pieces,
                        w->k / GR_Q8_BLOCK * sizeof(float)) != 0)
        return GEMM_RVV_ERR_NOMEM;
    f.x = gr_q8_x_at(gr_scratch_shared(&f.scratch), block, w->k);
    for (size_t row = 0; row < c->m; row += block) {
        f.rows = c->m - row < block ? c->m - row : block;
        gr_q8_quantize_rows(c->x_f32 + row * c->ldx, f.rows, c->ldx, w->k, &f.x);
        f.y = gr_y_row(c->y, row, c->ldy, c->y_bf16);
        gr_parallel_for(pieces, q8_fallback_piece, &f);
    }
    gr_scratch_give_back(&f.scratch);
    return GEMM_RVV_OK;
}
