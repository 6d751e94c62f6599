#include "activations.h"

#include <stdint.h>

#include "bf16.h"
#include "gr_contract.h"
#include "isa.h"

gemm_rvv_status gemm_rvv_round_bf16(const float *x, int64_t count, uint16_t *out)
{
    if (count < 0)
        return GEMM_RVV_ERR_SIZE;
    if ((uint64_t)count > SIZE_MAX / sizeof(float))
        return GEMM_RVV_ERR_OVERFLOW;
    if (count == 0)
        return GEMM_RVV_OK;
    if (!x || !out)
        return GEMM_RVV_ERR_NULL;
    const size_t n = (size_t)count;
    const uintptr_t x0 = (uintptr_t)x, o0 = (uintptr_t)out;
    if (o0 < x0 + n * sizeof(float) && x0 < o0 + n * sizeof(uint16_t))
        return GEMM_RVV_ERR_ALIAS;
    if (gemm_rvv_kernels_active()) {
        gr_isa_variant()->round_bf16(x, n, out);
        return GEMM_RVV_OK;
    }
    for (size_t i = 0; i < n; i++)
        out[i] = gr_f32_to_bf16(x[i]);
    return GEMM_RVV_OK;
}

void gr_widen_rows(const uint16_t *x, size_t m, size_t ldx, size_t k, float *x_f)
{
    for (size_t r = 0; r < m; r++)
        for (size_t j = 0; j < k; j++)
            x_f[r * k + j] = gr_bf16_to_f32(x[r * ldx + j]);
}
