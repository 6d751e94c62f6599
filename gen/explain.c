#include "explain.h"

#include <string.h>

/* One line of the plans table: a name, the tile, then each share's blocking; its X column is
 * the rows from which the plan's call on all n columns, X's rows k apart, reads X from a copy
 * ("-": never; "s": one copy shared by the threads, "r": column blocks in rounds). */
static void explain_blockings(FILE *out, const char *name, const char *tile, uint64_t n,
                              uint64_t k, const struct blocking b[SHARES])
{
    fprintf(out, "%-34s %5s", name, tile);
    for (int j = 0; j < SHARES; j++) {
        char x_copy[24] = "-";
        if (x_copy_applies(&b[j].x_copy, b[j].x_copy.rows, n, 2 * k))
            snprintf(x_copy, sizeof x_copy, "%llu%s%s", (unsigned long long)b[j].x_copy.rows,
                     b[j].x_copy.shared ? "s" : "", b[j].x_copy.rounds ? "r" : "");
        fprintf(out, "  %-6s %5llu %6llu %4s %6.2f %7.4f",
                b[j].order == ORDER_STRIPS ? "strips" : "tiles", (unsigned long long)b[j].k_block,
                (unsigned long long)b[j].col_block, x_copy, b[j].dram_bytes / b[j].min_bytes,
                b[j].vwork_per_mac);
    }
    fprintf(out, "\n");
}

/* One row per (attention entry, n_q): its verdict, plan and how its tiles take the pairs, or
 * why the fallback; nothing for a file without attention entries. */
static void explain_attention(FILE *out, const struct shapes *s, const struct attn_plan *a)
{
    if (a->count == 0)
        return;
    int w = 9;
    for (size_t i = 0; i < s->attention_count; i++)
        if ((int)strlen(s->attention[i].name) > w)
            w = (int)strlen(s->attention[i].name);
    fprintf(out, "\n%-*s %6s %8s %7s %8s %-4s %-4s  %-8s  %-34s  %s\n", w, "attention", "n_q",
            "head_dim", "q_heads", "kv_heads", "k", "v", "verdict", "plan", "reason");
    for (size_t i = 0; i < a->count; i++) {
        const struct attn_entry *e = &a->entries[i];
        const struct attention *at = &s->attention[e->attention];
        fprintf(out, "%-*s %6llu %8llu %7llu %8llu %-4s %-4s  %-8s  %-34s  %s\n", w, at->name,
                (unsigned long long)e->n_q, (unsigned long long)at->head_dim,
                (unsigned long long)at->q_heads, (unsigned long long)at->kv_heads,
                kv_type_words[at->k_type], kv_type_words[at->v_type],
                e->row ? "kernel" : "fallback", e->row ? e->row->name : "-",
                e->row ? e->row->why : e->reason);
    }
}

/* The plans table: each plan's tile and both blockings. */
static void explain_plans(FILE *out, const struct plan *p)
{
    if (p->row_count == 0)
        return;
    const struct target *t = &p->target;
    fprintf(out, "\nplans for VLEN %llu, L2 %llu KiB: a core alone / its %llu cores at once "
                 "(DRAM is modelled bytes over the minimum;\nX: rows from which the call reads "
                 "X from a copy, X's rows K apart; s: one copy for all threads,\nr: column "
                 "blocks in rounds):\n",
            (unsigned long long)t->vlen, (unsigned long long)t->l2_kib,
            (unsigned long long)t->l2_cores);
    fprintf(out, "%-34s %5s  %-6s %5s %6s %4s %6s %7s  %-6s %5s %6s %4s %6s %7s\n", "plan",
            "tile", "order", "KC", "NC", "X", "DRAM", "vwork", "order", "KC", "NC", "X", "DRAM",
            "vwork");
    for (size_t i = 0; i < p->row_count; i++) {
        const struct plan_row *r = &p->rows[i];
        char tile[16];
        snprintf(tile, sizeof tile, "%ux%u", r->tile.rows, r->tile.lmul);
        explain_blockings(out, r->name, tile, r->n, r->k, r->blocking);
        if (r->plain_weights && !blockings_same(r->plain, r->blocking))
            explain_blockings(out, "  plain [N, K] weights", "", r->n, r->k, r->plain);
    }
}

void print_explain(FILE *out, const struct shapes *s, const struct plan *p)
{
    int w = 5;
    for (size_t i = 0; i < s->count; i++)
        if ((int)strlen(s->layers[i].name) > w)
            w = (int)strlen(s->layers[i].name);
    fprintf(out, "%-*s %6s %7s %7s %-7s  %-8s  %-34s  %s\n", w, "layer", "M", "N", "K",
            "weights", "verdict", "plan", "reason");
    for (size_t i = 0; i < p->count; i++) {
        const struct plan_entry *e = &p->entries[i];
        const struct layer *l = &s->layers[e->layer];
        int kernel = e->row != NO_PLAN;
        fprintf(out, "%-*s %6llu %7llu %7llu %-7s  %-8s  %-34s  %s\n", w, l->name,
                (unsigned long long)e->m, (unsigned long long)l->n, (unsigned long long)l->k,
                weight_format_words[l->format], kernel ? "kernel" : "fallback",
                kernel ? p->rows[e->row].name : "-", e->decision.reason);
    }
    explain_plans(out, p);
    explain_attention(out, s, &p->attn);
}
