#include "dispatch.h"

#include "cpu.h"
#include "isa.h"
#include "settings.h"

/* Set by gemm_rvv_force_fallback; -1 until then: GEMM_RVV_DISABLE decides. */
static atomic_int forced_fallback = -1;

void gemm_rvv_force_fallback(int on) { atomic_store(&forced_fallback, on != 0); }

int gemm_rvv_kernels_active(void)
{
    int forced = atomic_load(&forced_fallback);
    if (forced < 0)
        forced = gr_settings()->fallback;
    return !forced && gr_cpu_has_vector() && gr_isa_status() == GEMM_RVV_OK;
}

/* The counter row of a call; cache is the weight object's, or NULL for plain weights. */
static struct gr_counter *counter_of(_Atomic(struct gr_counter *) *cache, size_t n, size_t k,
                                     size_t m)
{
    uint32_t bucket = gr_count_bucket(m);
    if (!cache)
        return gr_counter_for(n, k, bucket);
    _Atomic(struct gr_counter *) *slot = &cache[__builtin_ctz(bucket)];
    struct gr_counter *c = atomic_load(slot);
    if (!c) {
        c = gr_counter_for(n, k, bucket);
        atomic_store(slot, c);
    }
    return c;
}

gemm_rvv_status gr_dispatch(const struct gr_call *c, const struct gr_shape_plans *plans,
                            _Atomic(struct gr_counter *) *counter_cache)
{
    const struct gr_plan *plan = NULL;
    if (plans->count > 0 && gemm_rvv_kernels_active())
        plan = gr_pick_plan(plans, c->m);
    gemm_rvv_status s = plan ? gr_run_plan(c, plan) : gr_run_fallback(c);
    if (s != GEMM_RVV_OK)
        return s;
    struct gr_counter *counter = counter_of(counter_cache, c->w.n, c->w.k, c->m);
    if (counter)
        atomic_fetch_add(plan ? &counter->kernel_calls : &counter->fallback_calls, 1);
    return GEMM_RVV_OK;
}
