/* A call served by a plan: every row block of the plan's bucket over all the columns, the
 * columns split over the threads, each piece walked by the driver in scratch of its own. */
#include "cpu.h"
#include "dispatch.h"
#include "driver.h"
#include "isa.h"
#include "scratch.h"
#include "settings.h"
#include "threads.h"

struct plan_context {
    struct gr_drive drive;
    size_t n, piece_cols;
    struct gr_scratch scratch; /* one piece per column piece */
};

static void drive_piece(void *ctx, size_t i)
{
    const struct plan_context *p = ctx;
    size_t begin = i * p->piece_cols, end = begin + p->piece_cols;
    gr_drive_columns(&p->drive, begin, end < p->n ? end : p->n, gr_scratch_piece(&p->scratch, i));
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
    size_t pieces = gr_split_columns(w->n, panel_width, &p.piece_cols);
    if (gr_scratch_take(&p.scratch, 0, pieces, gr_drive_bytes(d)) != 0)
        return GEMM_RVV_ERR_NOMEM;
    for (size_t row = 0; row < c->m; row += plan->bucket) {
        d->x = c->x + row * c->ldx;
        d->rows = c->m - row < plan->bucket ? c->m - row : plan->bucket;
        d->y = gr_y_row(c->y, row, c->ldy, c->y_bf16);
        gr_parallel_for(pieces, drive_piece, &p);
    }
    gr_scratch_give_back(&p.scratch);
    return GEMM_RVV_OK;
}
