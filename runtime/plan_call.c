/* A call served by a plan: every row block of the plan's bucket over all the columns, the
 * columns split over the threads, each piece walked by the driver in scratch of its own. When
 * the blocking says so (gen/blocking.c's blocking_x_copy) the threads first copy the row
 * block's X once for the call, a share of the rows each, and then walk their pieces' column
 * blocks in rounds, one block each per round, so that the cores of a cluster read the copy's
 * K blocks at about the same time; each gr_parallel_for is a barrier. */
#include "cpu.h"
#include "dispatch.h"
#include "driver.h"
#include "isa.h"
#include "scratch.h"
#include "settings.h"
#include "threads.h"

struct plan_context {
    struct gr_drive drive;
    size_t n, piece_cols, pieces;
    size_t round, step;        /* each piece's round and its columns: a column block with
                                  rounds, else one round of the whole piece */
    uint16_t *x_copy;          /* the shared copy of X, in the scratch's shared part */
    struct gr_scratch scratch; /* one piece per column piece */
};

/* Round p->round of piece i: its columns p->step wide from there. */
static void drive_round(void *ctx, size_t i)
{
    const struct plan_context *p = ctx;
    struct gr_cols piece = {i * p->piece_cols, (i + 1) * p->piece_cols};
    if (piece.end > p->n)
        piece.end = p->n;
    struct gr_cols cols = {piece.begin + p->round * p->step, 0};
    cols.end = cols.begin + p->step < piece.end ? cols.begin + p->step : piece.end;
    if (cols.begin < cols.end)
        gr_drive_columns(&p->drive, piece, cols, gr_scratch_piece(&p->scratch, i));
}

/* Share i of the rows of the shared copy of X. */
static void copy_rows(void *ctx, size_t i)
{
    const struct plan_context *p = ctx;
    const size_t rows = p->drive.rows;
    gr_drive_copy_x_rows(&p->drive, p->x_copy, rows * i / p->pieces, rows * (i + 1) / p->pieces);
}

gemm_rvv_status gr_run_plan(const struct gr_call *c, const struct gr_plan *plan)
{
    const struct gr_weight_view *w = &c->w;
    size_t panel_width = w->packed ? w->panel_width : gr_panel_width();
    int forced_share = gr_settings()->share;
    int share = forced_share >= 0 ? forced_share
                                  : gr_threads_get() > 1 ? GR_L2_SHARED : GR_L2_ALONE;
    struct plan_context p = {.n = w->n};
    struct gr_drive *d = &p.drive;
    /* The variant is chosen once per process: packed weights are in its layout. */
    gr_drive_init(d, plan, gr_isa_variant(), share, panel_width, w->packed != NULL);
    d->ldx = c->ldx;
    d->packed = w->packed;
    d->plain = w->plain;
    d->ldw = w->ldw;
    d->bias = c->bias;
    d->ldy = c->ldy;
    d->y_bf16 = c->y_bf16;
    d->x_copy = NULL;
    p.pieces = gr_split_columns(w->n, panel_width, &p.piece_cols);
    p.step = gr_drive_rounds(d, p.pieces);
    if (!p.step)
        p.step = p.piece_cols;
    if (gr_scratch_take(&p.scratch, gr_drive_shared_bytes(d), p.pieces, gr_drive_bytes(d)) != 0)
        return GEMM_RVV_ERR_NOMEM;
    const size_t rounds = (p.piece_cols + p.step - 1) / p.step;
    for (size_t row = 0; row < c->m; row += plan->bucket) {
        d->x = c->x + row * c->ldx;
        d->rows = c->m - row < plan->bucket ? c->m - row : plan->bucket;
        d->y = gr_y_row(c->y, row, c->ldy, c->y_bf16);
        d->x_copy = NULL;
        if (gr_drive_shares_x(d, w->n)) {
            p.x_copy = gr_scratch_shared(&p.scratch);
            gr_parallel_for(p.pieces, copy_rows, &p);
            d->x_copy = p.x_copy;
        }
        for (p.round = 0; p.round < rounds; p.round++)
            gr_parallel_for(p.pieces, drive_round, &p);
    }
    gr_scratch_give_back(&p.scratch);
    return GEMM_RVV_OK;
}
