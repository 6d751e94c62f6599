#include "drive_once.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "driver.h"
#include "isa.h"
#include "scratch.h"

/* The driver set up for the operands o, as the runtime sets it up for a row block. */
static void drive_setup(struct gr_drive *d, const struct gr_plan *plan,
                        const struct gr_variant *variant, int share, const struct drive_operands *o)
{
    memset(d, 0, sizeof *d);
    gr_drive_init(d, plan, variant, share, o->panel_width, o->packed != NULL);
    d->x = o->x;
    d->ldx = o->ldx;
    d->rows = o->rows;
    d->packed = o->packed;
    d->plain = o->packed ? NULL : o->plain;
    d->ldw = o->ldw;
    d->bias = o->bias;
    d->y = o->y;
    d->ldy = o->ldy;
    d->y_bf16 = o->y_bf16;
}

int drive_once(const struct gr_plan *plan, const struct gr_variant *variant, int share,
                const struct drive_operands *o, size_t col_begin, size_t col_end)
{
    struct gr_drive d;
    drive_setup(&d, plan, variant, share, o);
    void *scratch = gr_alloc_aligned(gr_drive_bytes(&d));
    assert_non_null(scratch);
    const struct gr_cols cols = {col_begin, col_end};
    gr_drive_columns(&d, cols, cols, scratch);
    free(scratch);
    return gr_drive_copies_x(&d, col_begin, col_end);
}

int drive_pieces(const struct gr_plan *plan, const struct gr_variant *variant, int share,
                 const struct drive_operands *o, size_t n, size_t pieces)
{
    struct gr_drive d;
    drive_setup(&d, plan, variant, share, o);
    const size_t pw = o->panel_width, panels = (n + pw - 1) / pw;
    if (pieces > panels)
        pieces = panels;
    const size_t per = (panels + pieces - 1) / pieces, piece = per * pw;
    pieces = (panels + per - 1) / per; /* as gr_split_columns counts them */
    const size_t rounds = gr_drive_rounds(&d, pieces);
    const size_t each = gr_align_up(gr_drive_bytes(&d));
    char *scratch = gr_alloc_aligned(each * pieces);
    uint16_t *copy = gr_alloc_aligned(gr_drive_shared_bytes(&d) + 2);
    assert_non_null(scratch);
    assert_non_null(copy);
    const int shared = gr_drive_shares_x(&d, n);
    if (shared) {
        for (size_t i = 0; i < pieces; i++)
            gr_drive_copy_x_rows(&d, copy, d.rows * i / pieces, d.rows * (i + 1) / pieces);
        d.x_copy = copy;
    }
    const size_t step = rounds ? rounds : piece;
    for (size_t round = 0; round * step < piece; round++)
        for (size_t i = 0; i < pieces; i++) {
            struct gr_cols own = {i * piece, (i + 1) * piece < n ? (i + 1) * piece : n};
            struct gr_cols cols = {own.begin + round * step, own.end};
            if (cols.begin + step < cols.end)
                cols.end = cols.begin + step;
            if (cols.begin < cols.end)
                gr_drive_columns(&d, own, cols, scratch + i * each);
        }
    free(scratch);
    free(copy);
    return shared;
}

/* Whether GEMM_RVV_TEST_VARIANTS (a comma-separated list of names; unset: all) takes it. */
static int variant_wanted(const struct gr_variant *v)
{
    const char *list = getenv("GEMM_RVV_TEST_VARIANTS");
    size_t len = strlen(v->name);
    for (const char *s = list; s && *s; s += strcspn(s, ",") + (s[strcspn(s, ",")] == ',')) {
        if (strncmp(s, v->name, len) == 0 && (s[len] == ',' || s[len] == '\0'))
            return 1;
    }
    return list == NULL;
}

size_t runnable_variants(const struct gr_variant *out[2])
{
    size_t n = 0;
    if (variant_wanted(&gr_variant_base))
        out[n++] = &gr_variant_base;
    if (gr_isa_caps()->zvfbfwma && variant_wanted(&gr_variant_zvfbfwma))
        out[n++] = &gr_variant_zvfbfwma;
    if (n == 0)
        fail_msg("GEMM_RVV_TEST_VARIANTS=%s names no variant this core runs",
                 getenv("GEMM_RVV_TEST_VARIANTS"));
    return n;
}
