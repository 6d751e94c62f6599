#include "manifest.h"

#include "gemm_rvv_version.h"
#include "plan_fields.h"

/* s as a JSON string: quotes and backslashes escaped, control bytes by their code. */
static void json_string(struct text *t, const char *s)
{
    text_append(t, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            text_printf(t, "\\%c", c);
        else if (c < 0x20)
            text_printf(t, "\\u%04x", c);
        else
            text_append(t, s, 1);
    }
    text_append(t, "\"", 1);
}

static void json_blocking(struct text *out, const struct blocking *b)
{
    text_printf(out, "{\"order\": \"%s\"", b->order == ORDER_STRIPS ? "strips" : "tiles");
#define JSON_FIELD(name, value, brk, doc) \
    text_printf(out, ", \"" #name "\": %llu", (unsigned long long)(value));
    BLOCKING_FIELDS(JSON_FIELD)
#undef JSON_FIELD
    text_printf(out, ", \"dram_per_min\": %.3f, \"vwork_per_mac\": %.4f}",
                b->dram_bytes / b->min_bytes, b->vwork_per_mac);
}

/* One `"head_dim": 128, ..., "v": "f16"` run of an attention shape's fields. */
static void json_attention_shape(struct text *out, uint64_t head_dim, uint64_t q_heads,
                                 uint64_t kv_heads, enum kv_type k, enum kv_type v)
{
    text_printf(out, "\"head_dim\": %llu, \"q_heads\": %llu, \"kv_heads\": %llu, \"k\": "
                     "\"%s\", \"v\": \"%s\"",
                (unsigned long long)head_dim, (unsigned long long)q_heads,
                (unsigned long long)kv_heads, kv_type_words[k], kv_type_words[v]);
}

/* "attention": one item per (attention entry, n_q) with its verdict; "attention_plans": one
 * per plan with its pairs, shared tiles and why. */
static void manifest_attention(struct text *out, const struct shapes *s,
                               const struct attn_plan *a)
{
    text_printf(out, "  \"attention\": [");
    for (size_t i = 0; i < a->count; i++) {
        const struct attn_entry *e = &a->entries[i];
        const struct attention *at = &s->attention[e->attention];
        text_printf(out, "%s\n    {\"name\": ", i ? "," : "");
        json_string(out, at->name);
        text_printf(out, ", \"n_q\": %llu, ", (unsigned long long)e->n_q);
        json_attention_shape(out, at->head_dim, at->q_heads, at->kv_heads, at->k_type,
                             at->v_type);
        if (e->row) {
            text_printf(out, ", \"verdict\": \"kernel\", \"plan\": \"%s\", \"reason\": null}",
                        e->row->name);
        } else {
            text_printf(out, ", \"verdict\": \"fallback\", \"plan\": null, \"reason\": ");
            json_string(out, e->reason);
            text_printf(out, "}");
        }
    }
    text_printf(out, "%s],\n  \"attention_plans\": [", a->count ? "\n  " : "");
    for (size_t i = 0; i < a->row_count; i++) {
        const struct attn_row *r = &a->rows[i];
        text_printf(out, "%s\n    {\"name\": \"%s\", ", i ? "," : "", r->name);
        json_attention_shape(out, r->head_dim, r->q_heads, r->kv_heads, r->k_type, r->v_type);
        text_printf(out, ", \"n_q\": %llu, \"pairs\": %u, \"shared\": %u, \"why\": ",
                    (unsigned long long)r->n_q, r->pairs, r->shared);
        json_string(out, r->why);
        text_printf(out, "}");
    }
    text_printf(out, "%s]\n", a->row_count ? "\n  " : "");
}

void manifest_write(struct text *out, const struct shapes *s, const struct plan *p,
                    const char *source, const struct gate *g, const struct buckets *b)
{
    const struct target *t = &p->target;
    text_printf(out, "{\n  \"generator\": \"gemm-rvv-gen %s\",\n  \"source\": ",
                GEMM_RVV_VERSION_STRING);
    json_string(out, source);
    text_printf(out, ",\n  \"model\": ");
    if (s->model)
        json_string(out, s->model);
    else
        text_printf(out, "null");
    text_printf(out, ",\n  \"gate\": {\"min_n\": %llu, \"min_k\": %llu, \"max_m\": %llu, "
                     "\"min_mnk\": %llu},\n  \"buckets\": [1",
                (unsigned long long)g->min_n, (unsigned long long)g->min_k,
                (unsigned long long)g->max_m, (unsigned long long)g->min_mnk);
    for (size_t i = 0; i < b->count; i++)
        text_printf(out, ", %u", b->m[i]);
    text_printf(out, "],\n  \"target\": {");
    for (int i = 0; i < TARGET_FIELDS; i++) {
        struct target copy = *t;
        text_printf(out, "%s\"%s\": %llu", i ? ", " : "", target_field_names[i],
                    (unsigned long long)*target_field(&copy, target_field_names[i]));
    }
    text_printf(out, "},\n  \"entries\": [");
    for (size_t i = 0; i < p->count; i++) {
        const struct plan_entry *e = &p->entries[i];
        const struct layer *l = &s->layers[e->layer];
        text_printf(out, "%s\n    {\"name\": ", i ? "," : "");
        json_string(out, l->name);
        text_printf(out, ", \"M\": %llu, \"N\": %llu, \"K\": %llu, \"weights\": \"%s\", ",
                    (unsigned long long)e->m, (unsigned long long)l->n,
                    (unsigned long long)l->k, weight_format_words[l->format]);
        if (e->row != NO_PLAN)
            text_printf(out, "\"verdict\": \"kernel\", \"bucket\": %u, \"plan\": \"%s\", "
                             "\"row_blocks\": %u, \"reason\": ",
                        e->decision.bucket, p->rows[e->row].name, e->decision.row_blocks);
        else
            text_printf(out, "\"verdict\": \"fallback\", \"bucket\": null, \"plan\": null, "
                             "\"row_blocks\": null, \"reason\": ");
        if (e->decision.reason[0])
            json_string(out, e->decision.reason);
        else
            text_printf(out, "null");
        text_printf(out, "}");
    }
    text_printf(out, "\n  ],\n  \"plans\": [");
    for (size_t i = 0; i < p->row_count; i++) {
        const struct plan_row *r = &p->rows[i];
        text_printf(out, "%s\n    {\"name\": \"%s\", \"N\": %llu, \"K\": %llu, \"format\": "
                         "\"%s\", \"bucket\": %u, \"rows\": %u, \"lmul\": %u, \"file\": "
                         "\"%s.c\",\n     \"alone\": ",
                    i ? "," : "", r->name, (unsigned long long)r->n, (unsigned long long)r->k,
                    weight_format_words[r->format], r->bucket, r->tile.rows, r->tile.lmul,
                    r->name);
        json_blocking(out, &r->blocking[SHARE_ALONE]);
        text_printf(out, ",\n     \"shared\": ");
        json_blocking(out, &r->blocking[SHARE_CLUSTER]);
        if (r->plain_weights) {
            text_printf(out, ",\n     \"plain_alone\": ");
            json_blocking(out, &r->plain[SHARE_ALONE]);
            text_printf(out, ",\n     \"plain_shared\": ");
            json_blocking(out, &r->plain[SHARE_CLUSTER]);
        }
        text_printf(out, "}");
    }
    text_printf(out, "\n  ],\n");
    manifest_attention(out, s, &p->attn);
    text_printf(out, "}\n");
}
