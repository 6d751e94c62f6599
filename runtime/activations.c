#include "activations.h"

#include "bf16.h"

void gr_widen_rows(const uint16_t *x, size_t m, size_t ldx, size_t k, float *x_f)
{
    for (size_t r = 0; r < m; r++)
        for (size_t j = 0; j < k; j++)
            x_f[r * k + j] = gr_bf16_to_f32(x[r * ldx + j]);
}
