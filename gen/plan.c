#include "plan.h"

#include <stdio.h>
#include <stdlib.h>

void kernel_name(char *buf, size_t size, unsigned bucket, uint64_t k)
{
    snprintf(buf, size, "bf16_%s_m%u_k%llu", bucket == 1 ? "gemv" : "gemm", bucket,
             (unsigned long long)k);
}

static int key_cmp(uint64_t a1, uint64_t a2, uint64_t a3, uint64_t b1, uint64_t b2, uint64_t b3)
{
    if (a1 != b1)
        return a1 < b1 ? -1 : 1;
    if (a2 != b2)
        return a2 < b2 ? -1 : 1;
    if (a3 != b3)
        return a3 < b3 ? -1 : 1;
    return 0;
}

/* Sorted insertion into an array of `count` items of `size` bytes: returns the index of the
 * item equal to `key` (cmp == 0), inserting a zeroed one at its place when there is none. */
static size_t find_or_insert(void **array, size_t *count, size_t size, const void *key,
                             int (*cmp)(const void *item, const void *key), int *inserted)
{
    char *a = *array;
    size_t i = 0;
    while (i < *count && cmp(a + i * size, key) < 0)
        i++;
    *inserted = !(i < *count && cmp(a + i * size, key) == 0);
    if (!*inserted)
        return i;
    a = realloc(a, (*count + 1) * size);
    if (!a) {
        fprintf(stderr, "gemm-rvv-gen: out of memory\n");
        exit(1);
    }
    for (size_t j = *count; j > i; j--)
        for (size_t b = 0; b < size; b++)
            a[j * size + b] = a[(j - 1) * size + b];
    for (size_t b = 0; b < size; b++)
        a[i * size + b] = 0;
    (*count)++;
    *array = a;
    return i;
}

struct shape_key {
    uint64_t n, k;
    unsigned bucket;
};

static int kernel_cmp(const void *item, const void *key)
{
    const struct kernel_spec *s = item;
    const struct shape_key *k = key;
    return key_cmp(s->k, s->bucket, 0, k->k, k->bucket, 0);
}

static int row_cmp(const void *item, const void *key)
{
    const struct registry_row *r = item;
    const struct shape_key *k = key;
    return key_cmp(r->n, r->k, r->bucket, k->n, k->k, k->bucket);
}

/* Kernels and registry rows are kept sorted, so the output does not depend on the order of
 * the layers in the file. */
static void add_kernel(struct plan *p, struct shape_key key)
{
    int inserted;
    size_t i = find_or_insert((void **)&p->kernels, &p->kernel_count, sizeof *p->kernels, &key,
                              kernel_cmp, &inserted);
    if (inserted) {
        struct kernel_spec *s = &p->kernels[i];
        s->bucket = key.bucket;
        s->k = key.k;
        s->tile = tile_choose(key.bucket);
        kernel_name(s->name, sizeof s->name, key.bucket, key.k);
    }
    i = find_or_insert((void **)&p->rows, &p->row_count, sizeof *p->rows, &key, row_cmp,
                       &inserted);
    p->rows[i].n = key.n;
    p->rows[i].k = key.k;
    p->rows[i].bucket = key.bucket;
}

static size_t kernel_index(const struct plan *p, uint64_t k, unsigned bucket)
{
    struct shape_key key = {0, k, bucket};
    size_t i = 0;
    while (kernel_cmp(&p->kernels[i], &key) != 0)
        i++;
    return i;
}

int plan_build(const struct shapes *s, const struct gate *g, const struct buckets *b,
               struct plan *out)
{
    size_t total = 0;
    for (size_t i = 0; i < s->count; i++)
        total += s->layers[i].m_count;

    struct plan p = {calloc(total ? total : 1, sizeof *p.entries), 0, NULL, 0, NULL, 0, 0};
    if (!p.entries)
        return -1;
    for (size_t i = 0; i < s->count; i++) {
        const struct layer *l = &s->layers[i];
        for (size_t j = 0; j < l->m_count; j++) {
            struct plan_entry *e = &p.entries[p.count++];
            e->layer = i;
            e->m = l->m[j];
            e->decision = gate_decide(g, b, l->m[j], l->n, l->k);
            e->kernel = NO_KERNEL;
            if (e->decision.verdict == VERDICT_KERNEL) {
                struct shape_key key = {l->n, l->k, e->decision.bucket};
                add_kernel(&p, key);
            } else {
                p.fallback_count++;
            }
        }
    }
    /* Indices are resolved after all inserts, which shift the sorted lists. */
    for (size_t i = 0; i < p.count; i++) {
        struct plan_entry *e = &p.entries[i];
        if (e->decision.verdict != VERDICT_KERNEL)
            continue;
        e->kernel = kernel_index(&p, s->layers[e->layer].k, e->decision.bucket);
        p.kernels[e->kernel].users++;
    }
    for (size_t i = 0; i < p.row_count; i++)
        p.rows[i].kernel = kernel_index(&p, p.rows[i].k, p.rows[i].bucket);
    *out = p;
    return 0;
}

void plan_free(struct plan *p)
{
    free(p->entries);
    free(p->kernels);
    free(p->rows);
    p->entries = NULL;
    p->kernels = NULL;
    p->rows = NULL;
    p->count = p->kernel_count = p->row_count = p->fallback_count = 0;
}
