#include "drive_once.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dispatch.h"
#include "driver.h"
#include "isa.h"
#include "scratch.h"

int drive_once(const struct gr_plan *plan, const struct gr_variant *variant, int share,
               const struct gr_call *c, size_t col_begin, size_t col_end)
{
    struct gr_drive d;
    gr_drive_init(&d, plan, variant, share, c);
    void *scratch = gr_alloc_aligned(gr_drive_bytes(&d));
    assert_non_null(scratch);
    const struct gr_cols cols = {col_begin, col_end};
    gr_drive_columns(&d, cols, cols, scratch);
    free(scratch);
    return gr_drive_copies_x(&d, col_begin, col_end);
}

int drive_pieces(const struct gr_plan *plan, const struct gr_variant *variant, int share,
                 const struct gr_call *c, size_t pieces)
{
    struct gr_drive d;
    gr_drive_init(&d, plan, variant, share, c);
    assert_int_equal(gr_drive_call(c, plan, variant, share, pieces), GEMM_RVV_OK);
    return gr_drive_shares_x(&d, c->w.n);
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
