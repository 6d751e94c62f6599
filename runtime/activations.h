/* The activations' conversions: FP32 to BF16 for an engine (gemm_rvv_round_bf16, here), and
 * BF16 widened to FP32 for the scalar fallback (the kernels arrange theirs per K block, in
 * vector code: gr_variant.arrange). */
#ifndef GEMM_RVV_ACTIVATIONS_H
#define GEMM_RVV_ACTIVATIONS_H

#include <stddef.h>
#include <stdint.h>

/* x_f[r * k + j] = X[r, j]: the rows one after another, as the fallback reads them. */
void gr_widen_rows(const uint16_t *x, size_t m, size_t ldx, size_t k, float *x_f);

#endif
