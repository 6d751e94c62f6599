/* A call served by a plan, of any format: every row block of the plan's bucket over all the
 * columns, the columns split over the threads, each piece walked by the driver in scratch of
 * its own. Where the format prepares X (Q8_0 quantises it) or the blocking says so (BF16:
 * gen/blocking.c's blocking_x_copy) the threads first prepare the row block's X once for the
 * call, a share of the rows each, and then walk their pieces' column blocks, in rounds where
 * the blocking says so, one block each per round, so that the cores of a cluster read the
 * same K blocks at about the same time; each gr_parallel_for is a barrier. */
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
    void *x_shared;            /* X prepared for the call, in the scratch's shared part */
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

/* Share i of the rows of X prepared for the call. */
static void drive_prepare_rows(void *ctx, size_t i)
{
    const struct plan_context *p = ctx;
    const size_t rows = p->drive.rows;
    gr_drive_prepare_x_rows(&p->drive, p->x_shared, rows * i / p->pieces,
                            rows * (i + 1) / p->pieces);
}

gemm_rvv_status gr_drive_call(const struct gr_call *c, const struct gr_plan *plan,
                              const struct gr_variant *variant, int share, size_t pieces)
{
    struct plan_context p = {.n = c->w.n};
    struct gr_drive *d = &p.drive;
    gr_drive_init(d, plan, variant, share, c);
    p.pieces = gr_split_columns(c->w.n, d->panel_width, pieces, &p.piece_cols);
    p.step = gr_drive_rounds(d, p.pieces);
    if (!p.step)
        p.step = p.piece_cols;
    if (gr_scratch_take(&p.scratch, gr_drive_shared_bytes(d), p.pieces, gr_drive_bytes(d)) != 0)
        return GEMM_RVV_ERR_NOMEM;
    const size_t rounds = (p.piece_cols + p.step - 1) / p.step;
    for (size_t row = 0; row < c->m; row += d->rows) {
        gr_drive_row_block(d, c, row);
        if (gr_drive_shares_x(d, c->w.n)) {
            p.x_shared = gr_scratch_shared(&p.scratch);
            gr_parallel_for(p.pieces, drive_prepare_rows, &p);
            d->x_shared = p.x_shared;
        }
        for (p.round = 0; p.round < rounds; p.round++)
            gr_parallel_for(p.pieces, drive_round, &p);
    }
    gr_scratch_give_back(&p.scratch);
    return GEMM_RVV_OK;
}

gemm_rvv_status gr_run_plan(const struct gr_call *c, const struct gr_plan *plan)
{
    const int forced_share = gr_settings()->share;
    const int share = forced_share >= 0 ? forced_share
                                        : gr_threads_get() > 1 ? GR_L2_SHARED : GR_L2_ALONE;
    /* The variant is chosen once per process: packed weights are in its layout. */
    return gr_drive_call(c, plan, gr_isa_variant(), share, 0);
}
