/* Activations widened to FP32 once per call (or block of rows): k-major for the kernels,
 * row-major for the fallback. */
#ifndef GEMM_RVV_ACTIVATIONS_H
#define GEMM_RVV_ACTIVATIONS_H

#include <stddef.h>
#include <stdint.h>

/* x_f[j * bucket + r] = X[r, j] for r < m, j < k (X has row stride ldx). Rows m .. bucket-1
 * are left as they are: kernels never read them. */
void gr_widen_activations(const uint16_t *x, size_t m, size_t ldx, size_t k, size_t bucket,
                          float *x_f);

/* x_f[r * k + j] = X[r, j]: the rows one after another, as the fallback reads them. */
void gr_widen_rows(const uint16_t *x, size_t m, size_t ldx, size_t k, float *x_f);

#endif
