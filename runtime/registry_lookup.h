/* Finding generated plans by shape key, for the calls and for gemm_rvv_plan_buckets. */
#ifndef GEMM_RVV_REGISTRY_LOOKUP_H
#define GEMM_RVV_REGISTRY_LOOKUP_H

#include <stddef.h>
#include <stdint.h>

#include "gr_contract.h"

/* The plans of one (N, K), by increasing bucket: the GEMV and one per GEMM bucket at most. */
struct gr_shape_plans {
    const struct gr_plan *plan[GR_BUCKETS_MAX + 1];
    size_t count;
};

/* Fills `out` with the plans of (n, k) for weights of `format` (enum gr_format), by binary
 * search over the sorted registry. */
void gr_find_plans(uint64_t n, uint64_t k, uint32_t format, struct gr_shape_plans *out);

/* The plan for M rows: the GEMV for M = 1 if there is one, else the smallest bucket that
 * holds M, else (M above every bucket) the largest GEMM plan, run in blocks of its bucket's
 * rows, as the generator's manifest says. NULL when none serves. */
const struct gr_plan *gr_pick_plan(const struct gr_shape_plans *s, size_t m);

#endif
