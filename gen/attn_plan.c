#include "attn_plan.h"
#include "rows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

unsigned attn_pairs(uint64_t n_q, uint64_t group)
{
    /* n_q and group are at most 2^31 - 1 each (the shapes reader's bound): no overflow. */
    uint64_t pairs = n_q * group;
    return pairs < ATTN_PAIRS_MAX ? (unsigned)pairs : ATTN_PAIRS_MAX;
}

unsigned attn_shared(uint64_t n_q, uint64_t group, unsigned pairs, uint64_t head_dim)
{
    const uint64_t tiles = (n_q * group + pairs - 1) / pairs;
    uint64_t fit = ATTN_SHARED_ACC_BYTES / (pairs * head_dim * sizeof(float));
    if (fit > ATTN_SHARED_MAX)
        fit = ATTN_SHARED_MAX;
    if (fit > tiles)
        fit = tiles;
    return fit ? (unsigned)fit : 1;
}

static int row_cmp(const void *pa, const void *pb)
{
    const struct attn_row *a = pa, *b = pb;
    const uint64_t ka[] = {a->head_dim, a->q_heads, a->kv_heads, a->k_type, a->v_type, a->n_q};
    const uint64_t kb[] = {b->head_dim, b->q_heads, b->kv_heads, b->k_type, b->v_type, b->n_q};
    for (size_t i = 0; i < sizeof ka / sizeof ka[0]; i++)
        if (ka[i] != kb[i])
            return ka[i] < kb[i] ? -1 : 1;
    return 0;
}

void attn_types_text(char *buf, size_t size, const char *const words[KV_TYPE_COUNT],
                     enum kv_type k, enum kv_type v, const char *same, const char *apart)
{
    if (k == v)
        snprintf(buf, size, same, words[k]);
    else
        snprintf(buf, size, apart, words[k], words[v]);
}

static void row_fill(struct attn_row *r)
{
    char types[16];
    attn_types_text(types, sizeof types, kv_type_words, r->k_type, r->v_type, "%s", "k%s_v%s");
    snprintf(r->name, sizeof r->name, "attn_%s_d%llu_h%llu_kv%llu_q%llu", types,
             (unsigned long long)r->head_dim, (unsigned long long)r->q_heads,
             (unsigned long long)r->kv_heads, (unsigned long long)r->n_q);
    uint64_t group = r->q_heads / r->kv_heads;
    r->pairs = attn_pairs(r->n_q, group);
    r->shared = attn_shared(r->n_q, group, r->pairs, r->head_dim);
    const char *ps = r->pairs > 1 ? "s" : "", *gs = group > 1 ? "s" : "";
    char at_a_time[24] = "";
    if (r->pairs < group)
        snprintf(at_a_time, sizeof at_a_time, " %u at a time", r->pairs);
    if (r->n_q == 1 && group == 1)
        snprintf(r->why, sizeof r->why, "1 pair a tile: decoding, one query head per KV head");
    else if (r->n_q == 1)
        snprintf(r->why, sizeof r->why, "%u pairs a tile: decoding, the group's %llu query "
                 "heads%s share each K and V block read", r->pairs, (unsigned long long)group,
                 at_a_time);
    else
        snprintf(r->why, sizeof r->why, "%u pair%s a tile: rows x the group's %llu head%s, row "
                 "then head, share each K and V block read", r->pairs, ps,
                 (unsigned long long)group, gs);
    if (r->shared > 1) {
        const size_t len = strlen(r->why);
        snprintf(r->why + len, sizeof r->why - len, "; %u tiles a thread widen each K block "
                 "once (their sums within %u KiB)", r->shared, ATTN_SHARED_ACC_BYTES >> 10);
    }
}

int attn_plan_build(const struct shapes *s, struct attn_plan *out)
{
    size_t total = 0;
    for (size_t i = 0; i < s->attention_count; i++)
        total += s->attention[i].n_q_count;
    struct attn_plan p = {0};
    p.entries = calloc(total ? total : 1, sizeof *p.entries);
    p.rows = calloc(total ? total : 1, sizeof *p.rows);
    if (!p.entries || !p.rows) {
        attn_plan_free(&p);
        return -1;
    }
    /* Every planned entry's row, then sorted and made unique: the output does not depend on
     * the order of the entries in the file. */
    for (size_t i = 0; i < s->attention_count; i++) {
        const struct attention *a = &s->attention[i];
        for (size_t j = 0; j < a->n_q_count; j++) {
            struct attn_entry *e = &p.entries[p.count++];
            e->attention = i;
            e->n_q = a->n_q[j];
            if (a->head_dim > ATTN_HEAD_DIM_PLANNED) {
                snprintf(e->reason, sizeof e->reason, "head_dim=%llu > %d: the score tile's "
                         "scratch (head_dim x %d floats) would pass 32 KiB",
                         (unsigned long long)a->head_dim, ATTN_HEAD_DIM_PLANNED, ATTN_BLOCK);
                p.fallback_count++;
                continue;
            }
            p.rows[p.row_count++] = (struct attn_row){
                .head_dim = a->head_dim, .q_heads = a->q_heads, .kv_heads = a->kv_heads,
                .k_type = a->k_type, .v_type = a->v_type, .n_q = a->n_q[j]};
        }
    }
    p.row_count = sort_unique_rows(p.rows, p.row_count, sizeof *p.rows, row_cmp);
    for (size_t i = 0; i < p.row_count; i++)
        row_fill(&p.rows[i]);
    for (size_t i = 0; i < p.count; i++) {
        struct attn_entry *e = &p.entries[i];
        if (e->reason[0])
            continue;
        const struct attention *a = &s->attention[e->attention];
        struct attn_row key = {.head_dim = a->head_dim, .q_heads = a->q_heads,
                               .kv_heads = a->kv_heads, .k_type = a->k_type,
                               .v_type = a->v_type, .n_q = e->n_q};
        struct attn_row *r = bsearch(&key, p.rows, p.row_count, sizeof *p.rows, row_cmp);
        r->users++;
        e->row = r;
    }
    *out = p;
    return 0;
}

void attn_plan_free(struct attn_plan *p)
{
    free(p->entries);
    free(p->rows);
    *p = (struct attn_plan){0};
}
