#include "registry_lookup.h"

#include "gemm_rvv.h"

/* The registry's order: (n, k, format), then bucket. */
static int key_cmp(const struct gr_plan *p, uint64_t n, uint64_t k, uint32_t format)
{
    if (p->n != n)
        return p->n < n ? -1 : 1;
    if (p->k != k)
        return p->k < k ? -1 : 1;
    if (p->format != format)
        return p->format < format ? -1 : 1;
    return 0;
}

void gr_find_plans(uint64_t n, uint64_t k, uint32_t format, struct gr_shape_plans *out)
{
    out->count = 0;
    size_t lo = 0, hi = gr_registry_count;
    while (lo < hi) { /* first row with key >= (n, k) */
        size_t mid = lo + (hi - lo) / 2;
        if (key_cmp(gr_registry[mid], n, k, format) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < gr_registry_count && key_cmp(gr_registry[i], n, k, format) == 0 &&
                        out->count < GR_BUCKETS_MAX + 1; i++)
        out->plan[out->count++] = gr_registry[i];
}

const struct gr_plan *gr_pick_plan(const struct gr_shape_plans *s, size_t m)
{
    for (size_t i = 0; i < s->count; i++)
        if (s->plan[i]->bucket >= m)
            return s->plan[i];
    if (s->count > 0 && s->plan[s->count - 1]->bucket > 1)
        return s->plan[s->count - 1];
    return NULL;
}

static size_t plan_buckets(int64_t n, int64_t k, uint32_t format, int64_t *m_buckets,
                           size_t capacity)
{
    if (n <= 0 || k <= 0 || n > UINT32_MAX || k > UINT32_MAX)
        return 0;
    struct gr_shape_plans plans;
    gr_find_plans((uint64_t)n, (uint64_t)k, format, &plans);
    for (size_t i = 0; i < plans.count && i < capacity && m_buckets; i++)
        m_buckets[i] = plans.plan[i]->bucket;
    return plans.count;
}

size_t gemm_rvv_plan_buckets(int64_t n, int64_t k, int64_t *m_buckets, size_t capacity)
{
    return plan_buckets(n, k, GR_FORMAT_BF16, m_buckets, capacity);
}

size_t gemm_rvv_plan_buckets_q8_0(int64_t n, int64_t k, int64_t *m_buckets, size_t capacity)
{
    return plan_buckets(n, k, GR_FORMAT_Q8_0, m_buckets, capacity);
}
