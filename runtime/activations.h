/* Activations as the kernels read them: widened to FP32 once per call, k-major. */
#ifndef GEMM_RVV_ACTIVATIONS_H
#define GEMM_RVV_ACTIVATIONS_H

#include <stddef.h>
#include <stdint.h>

/* x_f[j * bucket + r] = X[r, j] for r < m, j < k (X has row stride ldx). Rows m .. bucket-1
 * are left as they are: kernels never read them. */
void gr_widen_activations(const uint16_t *x, size_t m, size_t ldx, size_t k, size_t bucket,
                          float *x_f);

#endif
