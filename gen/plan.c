#include "plan.h"
#include "rows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void plan_name(char *buf, size_t size, enum weight_format format, unsigned bucket, uint64_t n,
               uint64_t k)
{
    snprintf(buf, size, "%s_%s_m%u_n%llu_k%llu", weight_format_words[format],
             bucket == 1 ? "gemv" : "gemm", bucket, (unsigned long long)n,
             (unsigned long long)k);
}

unsigned q8_0_tile_rows(unsigned bucket)
{
    return bucket == 1 ? 1 : 2;
}

static int row_cmp(const void *pa, const void *pb)
{
    const struct plan_row *a = pa, *b = pb;
    if (a->n != b->n)
        return a->n < b->n ? -1 : 1;
    if (a->k != b->k)
        return a->k < b->k ? -1 : 1;
    if (a->format != b->format)
        return a->format < b->format ? -1 : 1;
    if (a->bucket != b->bucket)
        return a->bucket < b->bucket ? -1 : 1;
    return 0;
}

static void plan_row_fill(struct plan_row *r, const struct target *t)
{
    plan_name(r->name, sizeof r->name, r->format, r->bucket, r->n, r->k);
    if (r->format == FORMAT_q8_0) {
        /* Packed weights only (Q8_0 objects are always packed where a plan serves, and keep
         * GGUF's blocks for the fallback where none does): no plain blockings. */
        r->tile = (struct tile){q8_0_tile_rows(r->bucket), 4};
        /* A core alone on its L2, or its share of it while its cluster runs. */
        const uint64_t l2[SHARES] = {t->l2_kib * 1024, t->l2_kib * 1024 / t->l2_cores};
        for (int i = 0; i < SHARES; i++) {
            r->blocking[i] = blocking_q8_0(t, r->tile.rows, r->bucket, r->n, r->k, l2[i]);
            r->plain[i] = (struct blocking){0};
        }
        r->plain_weights = 0;
        return;
    }
    r->tile = tile_choose(r->bucket);
    for (unsigned m = 1; m <= r->tile.rows; m++)
        r->row_tile_lmul[m - 1] = tile_row_lmul(r->tile, m);
    r->plain_weights = 1;
    const uint64_t l2 = t->l2_kib * 1024;
    /* A core alone on its L2, and every core of a cluster on it (l2_cores participants). */
    const unsigned parts[SHARES] = {1, (unsigned)t->l2_cores};
    for (int i = 0; i < SHARES; i++) {
        r->blocking[i] =
            blocking_choose(t, r->tile, r->bucket, r->n, r->k, l2, parts[i], WEIGHTS_PACKED);
        /* Below BLOCKING_SET_ROWS rows the model has no term in which plain weights differ
         * (a strip's rows are read once, into L1, and little else is live in the L2): they
         * run the packed blocking, with the driver's cut of a strip's K block. */
        r->plain[i] = r->bucket < BLOCKING_SET_ROWS
                          ? r->blocking[i]
                          : blocking_choose(t, r->tile, r->bucket, r->n, r->k, l2, parts[i],
                                            WEIGHTS_PLAIN);
    }
}

int plan_build(const struct shapes *s, const struct gate *g, const struct buckets *b,
               const struct target *t, struct plan *out)
{
    size_t total = 0;
    for (size_t i = 0; i < s->count; i++)
        total += s->layers[i].m_count;

    struct plan p = {0};
    p.target = *t;
    p.entries = calloc(total ? total : 1, sizeof *p.entries);
    p.rows = calloc(total ? total : 1, sizeof *p.rows);
    if (!p.entries || !p.rows) {
        plan_free(&p);
        return -1;
    }
    /* Every kernel entry's shape key, then sorted and made unique: the output does not
     * depend on the order of the layers in the file. */
    for (size_t i = 0; i < s->count; i++) {
        const struct layer *l = &s->layers[i];
        for (size_t j = 0; j < l->m_count; j++) {
            struct plan_entry *e = &p.entries[p.count++];
            e->layer = i;
            e->m = l->m[j];
            e->decision = gate_decide(g, b, l->m[j], l->n, l->k);
            e->row = NO_PLAN;
            if (e->decision.verdict != VERDICT_KERNEL) {
                p.fallback_count++;
                continue;
            }
            struct plan_row *r = &p.rows[p.row_count++];
            r->n = l->n;
            r->k = l->k;
            r->format = l->format;
            r->bucket = e->decision.bucket;
        }
    }
    p.row_count = sort_unique_rows(p.rows, p.row_count, sizeof *p.rows, row_cmp);
    for (size_t i = 0; i < p.row_count; i++) {
        plan_row_fill(&p.rows[i], t);
        p.format_rows[p.rows[i].format]++;
        if (p.rows[i].format != FORMAT_bf16)
            continue;
        tile_rows_run(p.rows[i].tile, p.rows[i].bucket, p.tile_rows_from_lmul,
                      p.tile_rows_by_lmul);
    }
    if (attn_plan_build(s, &p.attn) != 0) {
        plan_free(&p);
        return -1;
    }
    for (size_t i = 0; i < p.count; i++) {
        struct plan_entry *e = &p.entries[i];
        if (e->decision.verdict != VERDICT_KERNEL)
            continue;
        struct plan_row key = {.n = s->layers[e->layer].n, .k = s->layers[e->layer].k,
                               .format = s->layers[e->layer].format,
                               .bucket = e->decision.bucket};
        struct plan_row *r = bsearch(&key, p.rows, p.row_count, sizeof *p.rows, row_cmp);
        e->row = (size_t)(r - p.rows);
        r->users++;
    }
    *out = p;
    return 0;
}

void plan_free(struct plan *p)
{
    free(p->entries);
    free(p->rows);
    attn_plan_free(&p->attn);
    p->entries = NULL;
    p->rows = NULL;
    p->count = p->row_count = p->fallback_count = 0;
}

static int same_blocking(const struct blocking *a, const struct blocking *b)
{
    uint64_t va[BLOCKING_FIELD_COUNT], vb[BLOCKING_FIELD_COUNT];
    blocking_values(a, va);
    blocking_values(b, vb);
    return a->order == b->order && memcmp(va, vb, sizeof va) == 0;
}

int blockings_same(const struct blocking a[SHARES], const struct blocking b[SHARES])
{
    for (int i = 0; i < SHARES; i++)
        if (!same_blocking(&a[i], &b[i]))
            return 0;
    return 1;
}
