/* A call served by the scalar fallback, of either format: blocks of FALLBACK_BLOCK_ROWS rows,
 * each prepared once into the shared scratch (BF16 widened to FP32, Q8_0 quantised), then its
 * columns split over the threads, each piece with a buffer of its own (BF16: the columns it
 * widens at a time; Q8_0: one column's scales). */
#include "activations.h"
#include "dispatch.h"
#include "q8_0.h"
#include "scratch.h"
#include "threads.h"

/* Rows of X the fallback prepares at a time: 64 x K floats (or K + K / 8 bytes of Q8_0) stay
 * small, and are shared by all the threads working on the block. */
#define FALLBACK_BLOCK_ROWS 64

struct fallback_context {
    const struct gr_call *c;
    int q8;
    void *x;            /* the block's rows, prepared (room for `block` rows) */
    size_t block, row, rows;
    size_t piece_cols;
    struct gr_scratch scratch; /* shared: x; one piece per column piece */
};

static void fallback_piece(void *ctx, size_t i)
{
    const struct fallback_context *f = ctx;
    const struct gr_call *c = f->c;
    const size_t begin = i * f->piece_cols, n = c->w.n;
    const size_t end = begin + f->piece_cols < n ? begin + f->piece_cols : n;
    void *y = gr_y_row(c->y, f->row, c->ldy, c->y_bf16), *buf = gr_scratch_piece(&f->scratch, i);
    if (f->q8) {
        const struct gr_q8_x x = gr_q8_x_at(f->x, f->block, c->w.k);
        gr_q8_fallback(&x, f->rows, &c->w, c->bias, y, c->ldy, c->y_bf16, begin, end, buf);
    } else {
        gr_fallback(f->x, f->rows, &c->w, c->bias, y, c->ldy, c->y_bf16, begin, end, buf);
    }
}

gemm_rvv_status gr_run_fallback(const struct gr_call *c)
{
    const struct gr_weight_view *w = &c->w;
    struct fallback_context f = {.c = c, .q8 = w->format == GR_FORMAT_Q8_0};
    f.block = c->m < FALLBACK_BLOCK_ROWS ? c->m : FALLBACK_BLOCK_ROWS;
    const size_t shared = f.q8 ? gr_q8_x_bytes(f.block, w->k) : f.block * w->k * sizeof(float);
    const size_t each = (f.q8 ? w->k / GR_Q8_BLOCK : GR_FALLBACK_COLS * w->k) * sizeof(float);
    size_t pieces = gr_split_columns(w->n, w->packed && !f.q8 ? w->panel_width
                                                              : GR_FALLBACK_COLS * 16,
                                     0, &f.piece_cols);
    if (gr_scratch_take(&f.scratch, shared, pieces, each) != 0)
        return GEMM_RVV_ERR_NOMEM;
    f.x = gr_scratch_shared(&f.scratch);
    for (f.row = 0; f.row < c->m; f.row += f.block) {
        f.rows = c->m - f.row < f.block ? c->m - f.row : f.block;
        if (f.q8) {
            const struct gr_q8_x x = gr_q8_x_at(f.x, f.block, w->k);
            gr_q8_quantize_rows((const float *)c->x + f.row * c->ldx, f.rows, c->ldx, w->k, &x);
        } else {
            gr_widen_rows((const uint16_t *)c->x + f.row * c->ldx, f.rows, c->ldx, w->k, f.x);
        }
        gr_parallel_for(pieces, fallback_piece, &f);
    }
    gr_scratch_give_back(&f.scratch);
    return GEMM_RVV_OK;
}
