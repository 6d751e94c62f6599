/* The bandwidth read with RVV loads. Its object is the only one of gemm-rvv-bench built with
 * V (mk/board.mk): call it only where machine_has_vector() says so. */
#ifndef BENCH_READ_VECTOR_H
#define BENCH_READ_VECTOR_H

#include <stddef.h>
#include <stdint.h>

/* The sum of p[0 .. n), read with LMUL-8 unit-stride loads as the kernels read weights. */
uint64_t read_vector(const uint64_t *p, size_t n);

#endif
