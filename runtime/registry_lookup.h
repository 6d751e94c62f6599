/* Finding generated kernels by shape key. */
#ifndef GEMM_RVV_REGISTRY_LOOKUP_H
#define GEMM_RVV_REGISTRY_LOOKUP_H

#include <stddef.h>
#include <stdint.h>

#include "kernel.h"

/* Most kernels one (N, K) can have: GEMV plus one per bucket. */
#define GR_KERNELS_PER_SHAPE 17

/* The registry rows of one (N, K), by increasing bucket. */
struct gr_shape_kernels {
    const struct gr_kernel_entry *entry[GR_KERNELS_PER_SHAPE];
    size_t count;
};

/* Fills `out` by binary search over the sorted registry. */
void gr_find_kernels(uint64_t n, uint64_t k, struct gr_shape_kernels *out);

/* The kernel for M rows: the GEMV for M = 1 if there is one, else the smallest bucket that
 * holds M; NULL when none does. */
const struct gr_kernel_entry *gr_pick_kernel(const struct gr_shape_kernels *s, size_t m);

#endif
