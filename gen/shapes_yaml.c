/* Reads a shapes file with libyaml's document API and checks every value, reporting problems at
 * the line and column where they stand. Nothing here knows about kernels or output files. */
#include "shapes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "gemm_rvv.h" /* GEMM_RVV_ATTENTION_MAX_HEAD_DIM */
#include "yaml_bounds.h"

/* The call takes head_dim in steps of this (gemm_rvv.h; the contract's GR_ATTN_PARTIALS). */
#define ATTENTION_HEAD_DIM_STEP 8

#define NAME_MAX_LEN 128

/* Layer names seen so far, for merging repeated layers in constant time: open addressing
 * over indices into shapes.layers (a file of 200,000 layers must read in well under a second). */
struct name_index {
    size_t *slot; /* layer index + 1; 0 = empty */
    size_t size;  /* a power of two, at least twice the number of layers */
};

struct reader {
    yaml_document_t *doc;
    struct diag *d;
    struct shapes *s;
    struct name_index names;
    size_t layers_cap; /* allocated entries of s->layers */
    size_t *m_cap;     /* allocated entries of each layer's m (merged layers grow) */
    size_t attention_cap; /* allocated entries of s->attention */
    int out_of_memory; /* reported once; reading stops */
};

static void out_of_memory(struct reader *r)
{
    if (!r->out_of_memory)
        diag_out_of_memory(r->d);
    r->out_of_memory = 1;
}

static int line_of(const yaml_node_t *n) { return (int)n->start_mark.line + 1; }
static int col_of(const yaml_node_t *n) { return (int)n->start_mark.column + 1; }

static const char *scalar_text(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }

/* How a node is shown after "got": the text of a scalar, or its kind. */
static void describe(const yaml_node_t *n, char *buf, size_t size)
{
    switch (n->type) {
    case YAML_SCALAR_NODE:
        if (n->data.scalar.length == 0)
            snprintf(buf, size, "nothing");
        else if (strlen(scalar_text(n)) != n->data.scalar.length)
            snprintf(buf, size, "a string holding a NUL byte");
        else if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
            snprintf(buf, size, "\"%.40s\"", scalar_text(n));
        else
            snprintf(buf, size, "the quoted string \"%.40s\"", scalar_text(n));
        break;
    case YAML_SEQUENCE_NODE: snprintf(buf, size, "a list"); break;
    case YAML_MAPPING_NODE: snprintf(buf, size, "a mapping"); break;
    default: snprintf(buf, size, "an empty node"); break;
    }
}

static void expected(struct reader *r, const yaml_node_t *n, const char *what, const char *wanted)
{
    char got[64];
    describe(n, got, sizeof got);
    diag_error(r->d, line_of(n), col_of(n), "%s must be %s, got %s", what, wanted, got);
}

/* Reads a plain decimal integer in [lo, hi]. Returns 0, or -1 after reporting. */
static int read_uint(struct reader *r, const yaml_node_t *n, const char *what, uint64_t lo,
                     uint64_t hi, uint64_t *out)
{
    const char *wanted = lo == 0 ? "a non-negative integer" : "a positive integer";
    if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
        n->data.scalar.length == 0) {
        expected(r, n, what, wanted);
        return -1;
    }
    const char *t = scalar_text(n);
    const char *digits = (t[0] == '-' || t[0] == '+') ? t + 1 : t;
    if (*digits == '\0' || strspn(digits, "0123456789") != strlen(digits)) {
        expected(r, n, what, wanted);
        return -1;
    }
    uint64_t v = 0;
    int too_big = 0;
    for (const char *p = digits; *p; p++) {
        if (v > (UINT64_MAX - 9) / 10)
            too_big = 1;
        else
            v = v * 10 + (uint64_t)(*p - '0');
    }
    if (t[0] == '-' && (v != 0 || lo > 0)) {
        diag_error(r->d, line_of(n), col_of(n), "%s must be %s, got %s", what, wanted, t);
        return -1;
    }
    if (too_big || v > hi) {
        diag_error(r->d, line_of(n), col_of(n), "%s must be at most %llu, got %s", what,
                   (unsigned long long)hi, t);
        return -1;
    }
    if (v < lo) {
        if (lo > 1)
            diag_error(r->d, line_of(n), col_of(n), "%s must be at least %llu, got %s", what,
                       (unsigned long long)lo, t);
        else
            diag_error(r->d, line_of(n), col_of(n), "%s must be %s, got %s", what, wanted, t);
        return -1;
    }
    *out = v;
    return 0;
}

/* Reports a key that is not in `known`, suggesting the one it differs from only in case. */
static void unknown_key(struct reader *r, const yaml_node_t *key, const char *where,
                        const char *const *known)
{
    const char *name = scalar_text(key);
    for (size_t j = 0; known[j]; j++) {
        if (strcasecmp(known[j], name) == 0) {
            diag_error(r->d, line_of(key), col_of(key),
                       "unknown key \"%.40s\" %s (did you mean \"%s\"?)", name, where, known[j]);
            return;
        }
    }
    char list[160] = "";
    for (size_t j = 0; known[j]; j++) {
        strncat(list, j ? ", " : "", sizeof list - strlen(list) - 1);
        strncat(list, known[j], sizeof list - strlen(list) - 1);
    }
    diag_error(r->d, line_of(key), col_of(key), "unknown key \"%.40s\" %s (expected %s)", name,
               where, list);
}

typedef void (*key_handler)(struct reader *r, const char *key, yaml_node_t *value, void *ctx);

/* Walks a mapping: rejects keys that are not scalars, repeated keys and keys not in `known`
 * (at most KNOWN_MAX names, shown in the message); hands each known key to `handle`. Repeats
 * are found through the line each known key was first seen at, so a mapping of many keys
 * costs no more than one pass. */
#define KNOWN_MAX 16
_Static_assert(TARGET_FIELDS <= KNOWN_MAX, "walk_mapping tracks at most KNOWN_MAX keys");

static void walk_mapping(struct reader *r, yaml_node_t *map, const char *where,
                         const char *const *known, key_handler handle, void *ctx)
{
    int first_line[KNOWN_MAX] = {0};
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
         p < map->data.mapping.pairs.top && !r->out_of_memory; p++) {
        yaml_node_t *key = yaml_document_get_node(r->doc, p->key);
        yaml_node_t *value = yaml_document_get_node(r->doc, p->value);
        if (key->type != YAML_SCALAR_NODE) {
            diag_error(r->d, line_of(key), col_of(key), "keys %s must be plain words", where);
            continue;
        }
        const char *name = scalar_text(key);
        size_t i = 0;
        while (known[i] && strcmp(known[i], name) != 0)
            i++;
        if (!known[i]) {
            unknown_key(r, key, where, known);
            continue;
        }
        if (first_line[i]) {
            diag_error(r->d, line_of(key), col_of(key),
                       "duplicate key \"%s\" %s (first at line %d)", name, where, first_line[i]);
            continue;
        }
        first_line[i] = line_of(key);
        handle(r, name, value, ctx);
    }
}

/* ---- one layer ---------------------------------------------------------------------------- */

struct layer_ctx {
    struct layer *layer;
    yaml_node_t *m_node; /* kept to report size overflows at the M values */
    int have_name, have_n, have_k, have_m, bad;
};

/* A value that must be one of `count` words (gen/plan_fields.h's `weights:` formats, the KV
 * caches' types): its index in *out. Returns 0, or -1 after saying which words it takes. */
static int read_word(struct reader *r, yaml_node_t *value, const char *what,
                     const char *const *words, int count, int *out)
{
    if (value->type == YAML_SCALAR_NODE)
        for (int i = 0; i < count; i++)
            if (strcmp(scalar_text(value), words[i]) == 0 &&
                strlen(words[i]) == value->data.scalar.length) {
                *out = i;
                return 0;
            }
    char list[64] = "";
    for (int i = 0; i < count; i++) {
        strncat(list, i ? " or " : "", sizeof list - strlen(list) - 1);
        strncat(list, words[i], sizeof list - strlen(list) - 1);
    }
    expected(r, value, what, list);
    return -1;
}

static int read_weights(struct reader *r, yaml_node_t *value, const char *what,
                        enum weight_format *out)
{
    int f;
    if (read_word(r, value, what, weight_format_words, WEIGHT_FORMAT_COUNT, &f) != 0)
        return -1;
    *out = (enum weight_format)f;
    return 0;
}

/* The scalar's length, not strlen: a quoted "\0" must not cut a name short. */
static int valid_name(const yaml_node_t *n)
{
    size_t len = n->data.scalar.length;
    return len > 0 && len <= NAME_MAX_LEN &&
           strspn(scalar_text(n),
                  "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-/") == len;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Sorts M values and drops repeats: a layer called twice with the same M is one entry. */
static size_t sort_unique(uint64_t *v, size_t n)
{
    size_t out = 0;
    qsort(v, n, sizeof *v, cmp_u64);
    for (size_t i = 0; i < n; i++)
        if (out == 0 || v[out - 1] != v[i])
            v[out++] = v[i];
    return out;
}

/* A list of sizes, or one, each in [1, SHAPE_DIM_MAX] (a layer's M, an attention entry's n_q),
 * into *values (caller frees), sorted with repeats dropped: a shape called twice with one size
 * is one entry. Returns 0, or -1 after reporting (or running out of memory). */
static int read_sizes(struct reader *r, yaml_node_t *value, const char *what, uint64_t **values,
                      size_t *count)
{
    int one = value->type != YAML_SEQUENCE_NODE;
    size_t n = one ? 1 : (size_t)(value->data.sequence.items.top - value->data.sequence.items.start);
    if (n == 0) {
        diag_error(r->d, line_of(value), col_of(value), "%s must list at least one value", what);
        return -1;
    }
    *values = calloc(n, sizeof **values);
    if (!*values) {
        out_of_memory(r);
        return -1;
    }
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *item =
            one ? value : yaml_document_get_node(r->doc, value->data.sequence.items.start[i]);
        if (read_uint(r, item, what, 1, SHAPE_DIM_MAX, &(*values)[*count]) == 0)
            ++*count;
        else
            bad = 1;
    }
    *count = sort_unique(*values, *count);
    return bad ? -1 : 0;
}

static void layer_key(struct reader *r, const char *key, yaml_node_t *value, void *ctx)
{
    struct layer_ctx *c = ctx;
    struct layer *l = c->layer;
    if (strcmp(key, "name") == 0) {
        c->have_name = 1;
        if (value->type != YAML_SCALAR_NODE || !valid_name(value)) {
            expected(r, value, "name",
                     "1 to 128 letters, digits or the characters _ . - /");
            c->bad = 1;
            return;
        }
        l->name = strdup(scalar_text(value));
        if (!l->name)
            out_of_memory(r);
    } else if (strcmp(key, "N") == 0) {
        c->have_n = 1;
        c->bad |= read_uint(r, value, "N", 1, SHAPE_DIM_MAX, &l->n) != 0;
    } else if (strcmp(key, "K") == 0) {
        c->have_k = 1;
        c->bad |= read_uint(r, value, "K", 1, SHAPE_DIM_MAX, &l->k) != 0;
    } else if (strcmp(key, "weights") == 0) {
        c->bad |= read_weights(r, value, "weights", &l->format) != 0;
        l->weights_line = line_of(value);
        l->weights_col = col_of(value);
    } else {
        c->have_m = 1;
        c->m_node = value;
        c->bad |= read_sizes(r, value, "M", &l->m, &l->m_count) != 0;
    }
}

/* Every byte count and index the library computes for this layer must fit in 64 bits. */
static int check_sizes(struct reader *r, const struct layer_ctx *c)
{
    const struct layer *l = c->layer;
    uint64_t nk, bytes, mnk;
    if (__builtin_mul_overflow(l->n, l->k, &nk) || __builtin_mul_overflow(nk, 2u, &bytes) ||
        bytes > (uint64_t)INT64_MAX) {
        diag_error(r->d, l->line, l->col, "layer \"%s\": weight size N*K*2 = %llu*%llu*2 bytes "
                   "does not fit 63 bits", l->name, (unsigned long long)l->n,
                   (unsigned long long)l->k);
        return -1;
    }
    for (size_t i = 0; i < l->m_count; i++) {
        if (__builtin_mul_overflow(nk, l->m[i], &mnk) || mnk > (uint64_t)INT64_MAX) {
            diag_error(r->d, line_of(c->m_node), col_of(c->m_node),
                       "layer \"%s\": M*N*K = %llu*%llu*%llu does not fit 63 bits", l->name,
                       (unsigned long long)l->m[i], (unsigned long long)l->n,
                       (unsigned long long)l->k);
            return -1;
        }
    }
    return 0;
}

static size_t name_hash(const char *s)
{
    uint64_t h = 14695981039346656037u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return (size_t)h;
}

/* The slot of `name` in the index: the one holding it, or the empty one where it belongs. */
static size_t *name_slot(struct reader *r, const char *name)
{
    size_t mask = r->names.size - 1, i = name_hash(name) & mask;
    while (r->names.slot[i] && strcmp(r->s->layers[r->names.slot[i] - 1].name, name) != 0)
        i = (i + 1) & mask;
    return &r->names.slot[i];
}

/* Room for one more layer: the layers and M capacities double, and the name index is
 * rebuilt at twice the size when it would be half full. Returns 0, or -1 when out of memory. */
static int reserve_layer(struct reader *r)
{
    struct shapes *s = r->s;
    if (s->count == r->layers_cap) {
        size_t cap = r->layers_cap ? 2 * r->layers_cap : 16;
        struct layer *layers = realloc(s->layers, cap * sizeof *layers);
        if (!layers)
            return -1;
        s->layers = layers;
        size_t *m_cap = realloc(r->m_cap, cap * sizeof *m_cap);
        if (!m_cap)
            return -1;
        r->m_cap = m_cap;
        r->layers_cap = cap;
    }
    if (2 * (s->count + 1) > r->names.size) {
        size_t size = r->names.size ? 2 * r->names.size : 64;
        size_t *slot = calloc(size, sizeof *slot);
        if (!slot)
            return -1;
        free(r->names.slot);
        r->names = (struct name_index){slot, size};
        for (size_t i = 0; i < s->count; i++)
            *name_slot(r, s->layers[i].name) = i + 1;
    }
    return 0;
}

/* Appends a repeated layer's M values to the first one's; they are sorted and made unique
 * once, when the whole file is read (sorting at every merge would cost the square). */
static int merge_m(struct reader *r, size_t into, struct layer *l)
{
    struct layer *old = &r->s->layers[into];
    if (old->m_count + l->m_count > r->m_cap[into]) {
        size_t cap = 2 * (old->m_count + l->m_count);
        uint64_t *m = realloc(old->m, cap * sizeof *m);
        if (!m)
            return -1;
        old->m = m;
        r->m_cap[into] = cap;
    }
    memcpy(old->m + old->m_count, l->m, l->m_count * sizeof *l->m);
    old->m_count += l->m_count;
    return 0;
}

/* Adds a checked layer, merging it into an earlier one of the same name when N and K agree.
 * The layer's name and M values are taken over or freed. */
static void add_layer(struct reader *r, struct layer *l)
{
    struct shapes *s = r->s;
    if (reserve_layer(r) != 0) {
        out_of_memory(r);
        free(l->name);
        free(l->m);
        return;
    }
    size_t *slot = name_slot(r, l->name);
    if (*slot) {
        struct layer *old = &s->layers[*slot - 1];
        if (old->n != l->n || old->k != l->k)
            diag_error(r->d, l->line, l->col,
                       "layer \"%s\" redefined with N=%llu, K=%llu (line %d has N=%llu, K=%llu)",
                       l->name, (unsigned long long)l->n, (unsigned long long)l->k, old->line,
                       (unsigned long long)old->n, (unsigned long long)old->k);
        else if (!l->weights_line && old->weights_line)
            diag_error(r->d, l->line, l->col,
                       "layer \"%s\" redefined without weights: (line %d has weights: %s)",
                       l->name, old->line, weight_format_words[old->format]);
        else if (l->weights_line && (!old->weights_line || old->format != l->format))
            diag_error(r->d, l->line, l->col,
                       "layer \"%s\" redefined with weights: %s (line %d has %s%s)", l->name,
                       weight_format_words[l->format], old->line,
                       old->weights_line ? "weights: " : "none",
                       old->weights_line ? weight_format_words[old->format] : "");
        else if (merge_m(r, *slot - 1, l) != 0)
            out_of_memory(r);
        free(l->name);
        free(l->m);
        return;
    }
    r->m_cap[s->count] = l->m_count;
    s->layers[s->count++] = *l;
    *slot = s->count;
}

static void read_layer(struct reader *r, yaml_node_t *node)
{
    static const char *const known[] = {"name", "N", "K", "M", "weights", NULL};
    struct layer l = {0};
    struct layer_ctx c = {&l, NULL, 0, 0, 0, 0, 0};

    l.line = line_of(node);
    l.col = col_of(node);
    if (node->type != YAML_MAPPING_NODE) {
        expected(r, node, "each layer", "a mapping with name, N, K and M");
        return;
    }
    walk_mapping(r, node, "in a layer", known, layer_key, &c);
    if (r->out_of_memory) {
        free(l.name);
        free(l.m);
        return;
    }
    const char *missing = !c.have_name ? "name" : !c.have_n ? "N" : !c.have_k ? "K"
                        : !c.have_m ? "M" : NULL;
    if (missing) {
        diag_error(r->d, l.line, l.col, "layer%s%s%s has no %s", l.name ? " \"" : "",
                   l.name ? l.name : "", l.name ? "\"" : "", missing);
        c.bad = 1;
    }
    if (c.bad || check_sizes(r, &c) != 0) {
        free(l.name);
        free(l.m);
        return;
    }
    add_layer(r, &l);
}

/* A non-empty list (`what`: "layers", of `items`, each one `item`), each item read by
 * read_item until memory runs out. Returns 0, or -1 after reporting a list that is not one. */
static int read_list(struct reader *r, yaml_node_t *node, const char *what, const char *item,
                     const char *items, void (*read_item)(struct reader *, yaml_node_t *))
{
    if (node->type != YAML_SEQUENCE_NODE) {
        char wanted[64];
        snprintf(wanted, sizeof wanted, "a list of %s", items);
        expected(r, node, what, wanted);
        return -1;
    }
    yaml_node_item_t *it = node->data.sequence.items.start;
    if (it == node->data.sequence.items.top) {
        diag_error(r->d, line_of(node), col_of(node), "%s must list at least one %s", what, item);
        return -1;
    }
    for (; it < node->data.sequence.items.top && !r->out_of_memory; it++)
        read_item(r, yaml_document_get_node(r->doc, *it));
    return 0;
}

static void read_layers(struct reader *r, yaml_node_t *node)
{
    if (read_list(r, node, "layers", "layer", "layers", read_layer) != 0)
        return;
    /* Merged layers hold their M values in file order, repeats included. */
    for (size_t i = 0; i < r->s->count; i++)
        r->s->layers[i].m_count = sort_unique(r->s->layers[i].m, r->s->layers[i].m_count);
}

/* ---- attention entries -------------------------------------------------------------------- */

struct attention_ctx {
    struct attention *a;
    yaml_node_t *n_q_node, *type_node[3]; /* kv:, k:, v: as given (NULL: not) */
    int have_name, have_head_dim, have_q_heads, have_kv_heads, have_n_q, bad;
};

static void attention_key(struct reader *r, const char *key, yaml_node_t *value, void *ctx)
{
    struct attention_ctx *c = ctx;
    struct attention *a = c->a;
    if (strcmp(key, "name") == 0) {
        c->have_name = 1;
        if (value->type != YAML_SCALAR_NODE || !valid_name(value)) {
            expected(r, value, "name", "1 to 128 letters, digits or the characters _ . - /");
            c->bad = 1;
        } else if (!(a->name = strdup(scalar_text(value)))) {
            out_of_memory(r);
        }
    } else if (strcmp(key, "head_dim") == 0) {
        c->have_head_dim = 1;
        if (read_uint(r, value, "head_dim", 1, GEMM_RVV_ATTENTION_MAX_HEAD_DIM, &a->head_dim))
            c->bad = 1;
        else if (a->head_dim % ATTENTION_HEAD_DIM_STEP != 0) {
            diag_error(r->d, line_of(value), col_of(value),
                       "head_dim must be a multiple of %d, got %llu", ATTENTION_HEAD_DIM_STEP,
                       (unsigned long long)a->head_dim);
            c->bad = 1;
        }
    } else if (strcmp(key, "q_heads") == 0) {
        c->have_q_heads = 1;
        c->bad |= read_uint(r, value, "q_heads", 1, SHAPE_DIM_MAX, &a->q_heads) != 0;
    } else if (strcmp(key, "kv_heads") == 0) {
        c->have_kv_heads = 1;
        c->bad |= read_uint(r, value, "kv_heads", 1, SHAPE_DIM_MAX, &a->kv_heads) != 0;
    } else if (strcmp(key, "n_q") == 0) {
        c->have_n_q = 1;
        c->n_q_node = value;
        c->bad |= read_sizes(r, value, "n_q", &a->n_q, &a->n_q_count) != 0;
    } else { /* kv, k or v: the caches' element type */
        int which = key[0] == 'k' ? (key[1] == 'v' ? 0 : 1) : 2, type;
        c->type_node[which] = value;
        if (read_word(r, value, key, kv_type_words, KV_TYPE_COUNT, &type) != 0) {
            c->bad = 1;
            return;
        }
        if (which != 2)
            a->k_type = (enum kv_type)type;
        if (which != 1)
            a->v_type = (enum kv_type)type;
        if (c->type_node[0] && (c->type_node[1] || c->type_node[2])) {
            diag_error(r->d, line_of(value), col_of(value),
                       "kv: sets both caches' type: give kv:, or k: and v:, not both");
            c->bad = 1;
        }
    }
}

/* Every element count the call computes for this entry must fit in 63 bits. */
static int check_attention_sizes(struct reader *r, const struct attention_ctx *c)
{
    const struct attention *a = c->a;
    if (a->q_heads % a->kv_heads != 0) {
        diag_error(r->d, a->line, a->col,
                   "attention \"%s\": q_heads=%llu is not a multiple of kv_heads=%llu (each KV "
                   "head serves a whole group of query heads)", a->name,
                   (unsigned long long)a->q_heads, (unsigned long long)a->kv_heads);
        return -1;
    }
    uint64_t heads_d, all;
    for (size_t i = 0; i < a->n_q_count; i++) {
        if (__builtin_mul_overflow(a->q_heads, a->head_dim, &heads_d) ||
            __builtin_mul_overflow(heads_d, a->n_q[i], &all) || all > (uint64_t)INT64_MAX) {
            diag_error(r->d, line_of(c->n_q_node), col_of(c->n_q_node),
                       "attention \"%s\": n_q*q_heads*head_dim = %llu*%llu*%llu does not fit "
                       "63 bits", a->name, (unsigned long long)a->n_q[i],
                       (unsigned long long)a->q_heads, (unsigned long long)a->head_dim);
            return -1;
        }
    }
    return 0;
}

static void read_attention_entry(struct reader *r, yaml_node_t *node)
{
    static const char *const known[] = {"name", "head_dim", "q_heads", "kv_heads",
                                        "kv",   "k",        "v",       "n_q", NULL};
    struct attention a = {.k_type = KV_f16, .v_type = KV_f16}; /* llama.cpp's default */
    struct attention_ctx c = {.a = &a};

    a.line = line_of(node);
    a.col = col_of(node);
    if (node->type != YAML_MAPPING_NODE) {
        expected(r, node, "each attention entry",
                 "a mapping with name, head_dim, q_heads, kv_heads and n_q");
        return;
    }
    walk_mapping(r, node, "in an attention entry", known, attention_key, &c);
    const char *missing = !c.have_name ? "name" : !c.have_head_dim ? "head_dim"
                        : !c.have_q_heads ? "q_heads" : !c.have_kv_heads ? "kv_heads"
                        : !c.have_n_q ? "n_q" : NULL;
    if (missing && !r->out_of_memory) {
        diag_error(r->d, a.line, a.col, "attention entry%s%s%s has no %s", a.name ? " \"" : "",
                   a.name ? a.name : "", a.name ? "\"" : "", missing);
        c.bad = 1;
    }
    struct shapes *s = r->s;
    if (r->out_of_memory || c.bad || check_attention_sizes(r, &c) != 0) {
        free(a.name);
        free(a.n_q);
        return;
    }
    if (s->attention_count == r->attention_cap) {
        size_t cap = r->attention_cap ? 2 * r->attention_cap : 4;
        struct attention *grown = realloc(s->attention, cap * sizeof *grown);
        if (!grown) {
            out_of_memory(r);
            free(a.name);
            free(a.n_q);
            return;
        }
        s->attention = grown;
        r->attention_cap = cap;
    }
    s->attention[s->attention_count++] = a;
}

static int attention_by_name(const void *pa, const void *pb)
{
    const struct attention *a = *(const struct attention *const *)pa,
                           *b = *(const struct attention *const *)pb;
    int c = strcmp(a->name, b->name);
    return c ? c : (a->line > b->line) - (a->line < b->line);
}

/* An entry's name says which shape a plan serves: two entries of one name are an error. */
static void check_attention_names(struct reader *r)
{
    size_t n = r->s->attention_count;
    const struct attention **sorted = calloc(n ? n : 1, sizeof *sorted);
    if (!sorted) {
        out_of_memory(r);
        return;
    }
    for (size_t i = 0; i < n; i++)
        sorted[i] = &r->s->attention[i];
    qsort(sorted, n, sizeof *sorted, attention_by_name);
    for (size_t i = 1; i < n; i++)
        if (strcmp(sorted[i]->name, sorted[i - 1]->name) == 0)
            diag_error(r->d, sorted[i]->line, sorted[i]->col,
                       "attention \"%s\" listed twice (first at line %d)", sorted[i]->name,
                       sorted[i - 1]->line);
    free(sorted);
}

static void read_attention(struct reader *r, yaml_node_t *node)
{
    if (read_list(r, node, "attention", "entry", "attention entries", read_attention_entry) == 0 &&
        !r->out_of_memory)
        check_attention_names(r);
}

/* ---- settings ----------------------------------------------------------------------------- */

static const char *const gate_keys[] = {"min_n", "min_k", "max_m", "min_mnk", NULL};

static void gate_key(struct reader *r, const char *key, yaml_node_t *value, void *ctx)
{
    (void)ctx;
    struct shapes *s = r->s;
    uint64_t *field[] = {&s->gate.min_n, &s->gate.min_k, &s->gate.max_m, &s->gate.min_mnk};
    size_t i = 0;
    while (strcmp(gate_keys[i], key) != 0)
        i++;
    uint64_t lo = strcmp(key, "max_m") == 0 ? 1 : 0;
    uint64_t hi = strcmp(key, "min_mnk") == 0 ? (uint64_t)INT64_MAX : SHAPE_DIM_MAX;
    char what[32];
    snprintf(what, sizeof what, "gate.%s", key);
    if (read_uint(r, value, what, lo, hi, field[i]) == 0)
        s->gate_set[i] = true;
}

static void read_buckets(struct reader *r, yaml_node_t *node)
{
    struct buckets b = {{0}, 0};
    if (node->type != YAML_SEQUENCE_NODE ||
        node->data.sequence.items.start == node->data.sequence.items.top) {
        expected(r, node, "buckets", "a non-empty list of increasing integers >= 2");
        return;
    }
    for (yaml_node_item_t *it = node->data.sequence.items.start;
         it < node->data.sequence.items.top; it++) {
        yaml_node_t *item = yaml_document_get_node(r->doc, *it);
        uint64_t v;
        if (b.count == BUCKETS_MAX) {
            diag_error(r->d, line_of(item), col_of(item), "buckets may list at most %d values",
                       BUCKETS_MAX);
            return;
        }
        if (read_uint(r, item, "a bucket", 2, SHAPE_DIM_MAX, &v) != 0)
            return;
        if (b.count > 0 && v <= b.m[b.count - 1]) {
            diag_error(r->d, line_of(item), col_of(item),
                       "buckets must increase, got %llu after %u", (unsigned long long)v,
                       b.m[b.count - 1]);
            return;
        }
        b.m[b.count++] = (uint32_t)v;
    }
    r->s->buckets = b;
    r->s->buckets_set = true;
}

static void target_key(struct reader *r, const char *key, yaml_node_t *value, void *ctx)
{
    (void)ctx;
    char what[40];
    snprintf(what, sizeof what, "target.%s", key);
    uint64_t *field = target_field(&r->s->target, key);
    read_uint(r, value, what, 1, 999999999, field);
}

/* The fields are checked together once all are read: one depends on another (dlen <= vlen),
 * whatever order the file gives them in. */
static void read_target(struct reader *r, yaml_node_t *node)
{
    if (node->type == YAML_SCALAR_NODE && node->data.scalar.length > 0 &&
        strlen(scalar_text(node)) == node->data.scalar.length) {
        if (target_named(scalar_text(node), &r->s->target) != 0)
            diag_error(r->d, line_of(node), col_of(node), "unknown target \"%.40s\" (known: %s)",
                       scalar_text(node), target_names_list);
        return;
    }
    if (node->type != YAML_MAPPING_NODE) {
        expected(r, node, "target",
                 "a name (k1, k3, ...) or a mapping such as {l2_kib: 128, vlen: 256}");
        return;
    }
    int errors_before = r->d->errors;
    walk_mapping(r, node, "in target", target_field_names, target_key, NULL);
    const char *bad = target_check(&r->s->target);
    if (r->d->errors == errors_before && bad[0])
        diag_error(r->d, line_of(node), col_of(node), "target: %s", bad);
}

struct top_ctx {
    int have_layers, have_attention;
};

static void top_key(struct reader *r, const char *key, yaml_node_t *value, void *ctx)
{
    struct top_ctx *c = ctx;
    if (strcmp(key, "model") == 0) {
        if (value->type != YAML_SCALAR_NODE || value->data.scalar.length == 0 ||
            strlen(scalar_text(value)) != value->data.scalar.length)
            expected(r, value, "model", "a name");
        else if (!(r->s->model = strdup(scalar_text(value))))
            out_of_memory(r);
    } else if (strcmp(key, "gate") == 0) {
        if (value->type != YAML_MAPPING_NODE)
            expected(r, value, "gate", "a mapping of min_n, min_k, max_m, min_mnk");
        else
            walk_mapping(r, value, "in gate", gate_keys, gate_key, NULL);
    } else if (strcmp(key, "buckets") == 0) {
        read_buckets(r, value);
    } else if (strcmp(key, "target") == 0) {
        read_target(r, value);
    } else if (strcmp(key, "weights") == 0) {
        read_weights(r, value, "weights", &r->s->weights);
    } else if (strcmp(key, "attention") == 0) {
        c->have_attention = 1;
        read_attention(r, value);
    } else {
        c->have_layers = 1;
        read_layers(r, value);
    }
}

static void read_root(struct reader *r, yaml_node_t *root)
{
    static const char *const known[] = {"model",  "gate",    "buckets",   "target",
                                        "layers", "weights", "attention", NULL};
    struct top_ctx c = {0};

    if (root->type == YAML_SEQUENCE_NODE) { /* a bare list of layers */
        read_layers(r, root);
        return;
    }
    if (root->type != YAML_MAPPING_NODE) {
        expected(r, root, "the file", "a mapping with a \"layers\" list");
        return;
    }
    walk_mapping(r, root, "at the top level", known, top_key, &c);
    if (!c.have_layers && !c.have_attention && !r->out_of_memory)
        diag_error(r->d, line_of(root), col_of(root), "no \"layers\" list in the file");
}

/* Each layer's format: its own `weights:`, else the file's (read wherever it stands in the
 * file). Q8_0 blocks run along K 32 at a time: K must be a multiple of 32. */
static void settle_weights(struct reader *r)
{
    for (size_t i = 0; i < r->s->count; i++) {
        struct layer *l = &r->s->layers[i];
        if (!l->weights_line)
            l->format = r->s->weights;
        unsigned block = weight_format_block[l->format];
        if (l->k % block != 0)
            diag_error(r->d, l->weights_line ? l->weights_line : l->line,
                       l->weights_line ? l->weights_col : l->col,
                       "layer \"%s\": weights: %s needs K a multiple of %u (its blocks run "
                       "along K), got K=%llu",
                       l->name, weight_format_words[l->format], block,
                       (unsigned long long)l->k);
    }
}

static int read_parser(yaml_parser_t *parser, struct diag *d, struct shapes *out)
{
    yaml_document_t doc, extra;
    struct reader r = {.doc = &doc, .d = d, .s = out};
    int errors_before = d->errors;

    memset(out, 0, sizeof *out);
    out->gate = gate_default();
    out->buckets = buckets_default();
    out->target = target_default();

    if (!yaml_parser_load(parser, &doc)) {
        yaml_report_error(d, parser);
        return -1;
    }
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (!root) {
        diag_error(d, 0, 0, "the file is empty: expected a mapping with a \"layers\" list");
    } else {
        read_root(&r, root);
        if (!r.out_of_memory)
            settle_weights(&r);
        if (r.out_of_memory) {
            /* reported; what follows in the file does not matter */
        } else if (yaml_parser_load(parser, &extra)) {
            yaml_node_t *next = yaml_document_get_root_node(&extra);
            if (next)
                diag_error(d, line_of(next), col_of(next),
                           "a second YAML document; a shapes file holds one");
            yaml_document_delete(&extra);
        } else {
            yaml_report_error(d, parser);
        }
    }
    yaml_document_delete(&doc);
    free(r.names.slot);
    free(r.m_cap);
    if (d->errors != errors_before) {
        shapes_free(out);
        return -1;
    }
    return 0;
}

int shapes_read_buffer(const char *text, size_t len, struct diag *d, struct shapes *out)
{
    memset(out, 0, sizeof *out);
    if (yaml_check_bounds(text, len, d) != 0)
        return -1;
    yaml_parser_t parser;
    if (yaml_parser_start(&parser, text, len, d) != 0)
        return -1;
    int rc = read_parser(&parser, d, out);
    yaml_parser_delete(&parser);
    return rc;
}

/* The file's bytes, at most SHAPES_FILE_MAX + 1 of them (enough to say it is too large), in
 * *text (caller frees). Returns 0, or -1 after reporting. */
static int slurp(FILE *f, struct diag *d, char **text, size_t *len)
{
    size_t cap = 0, n = 0;
    char *buf = NULL;
    for (;;) {
        if (n == cap) {
            size_t want = cap ? 2 * cap : 65536;
            if (want > SHAPES_FILE_MAX + 1)
                want = SHAPES_FILE_MAX + 1;
            if (want == cap)
                break;
            char *bigger = realloc(buf, want);
            if (!bigger) {
                free(buf);
                diag_out_of_memory(d);
                return -1;
            }
            buf = bigger;
            cap = want;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        diag_error(d, 0, 0, "cannot read: %s", strerror(errno));
        free(buf);
        return -1;
    }
    *text = buf;
    *len = n;
    return 0;
}

int shapes_read_file(const char *path, struct diag *d, struct shapes *out)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) {
        diag_error(d, 0, 0, "cannot open: %s", strerror(errno));
        return -1;
    }
    char *text;
    size_t len;
    int rc = slurp(f, d, &text, &len);
    fclose(f);
    if (rc != 0)
        return -1;
    rc = shapes_read_buffer(text, len, d, out);
    free(text);
    return rc;
}

void shapes_free(struct shapes *s)
{
    for (size_t i = 0; i < s->count; i++) {
        free(s->layers[i].name);
        free(s->layers[i].m);
    }
    free(s->layers);
    for (size_t i = 0; i < s->attention_count; i++) {
        free(s->attention[i].name);
        free(s->attention[i].n_q);
    }
    free(s->attention);
    free(s->model);
    memset(s, 0, sizeof *s);
}
