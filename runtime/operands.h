/* One call's operands, checked: the one value every way of serving a call reads (the
 * dispatch, the driver, the fallback), filled by the public calls, the tests and the lab. */
#ifndef GEMM_RVV_OPERANDS_H
#define GEMM_RVV_OPERANDS_H

#include <stddef.h>
#include <stdint.h>

#include "fallback.h"

/* Y[m, n] = X[m, k] W^T (+ bias). X's values are of the weights' format's type (struct
 * gr_format_desc's x_bytes): BF16, or FP32 for Q8_0; its rows ldx values apart. */
struct gr_call {
    const void *x;
    size_t m, ldx;
    struct gr_weight_view w;
    const float *bias;
    void *y;
    size_t ldy;
    int y_bf16;
};

/* Y's row `row`. */
static inline void *gr_y_row(void *y, size_t row, size_t ldy, int y_bf16)
{
    return y_bf16 ? (void *)((uint16_t *)y + row * ldy) : (void *)((float *)y + row * ldy);
}

#endif
