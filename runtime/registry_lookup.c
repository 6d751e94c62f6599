#include "registry_lookup.h"

static int key_cmp(const struct gr_kernel_entry *e, uint64_t n, uint64_t k)
{
    if (e->n != n)
        return e->n < n ? -1 : 1;
    if (e->k != k)
        return e->k < k ? -1 : 1;
    return 0;
}

void gr_find_kernels(uint64_t n, uint64_t k, struct gr_shape_kernels *out)
{
    size_t lo = 0, hi = gr_registry_count;
    while (lo < hi) { /* first row with key >= (n, k) */
        size_t mid = lo + (hi - lo) / 2;
        if (key_cmp(&gr_registry[mid], n, k) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    out->count = 0;
    for (size_t i = lo; i < gr_registry_count && key_cmp(&gr_registry[i], n, k) == 0 &&
                        out->count < GR_KERNELS_PER_SHAPE; i++)
        out->entry[out->count++] = &gr_registry[i];
}

const struct gr_kernel_entry *gr_pick_kernel(const struct gr_shape_kernels *s, size_t m)
{
    for (size_t i = 0; i < s->count; i++)
        if (s->entry[i]->bucket >= m)
            return s->entry[i];
    return NULL;
}
