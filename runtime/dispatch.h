/* Dispatch: one checked call goes to the plan of its (N, K) and M, or to the fallback, and is
 * counted under its shape key once it has been served. */
#ifndef GEMM_RVV_DISPATCH_H
#define GEMM_RVV_DISPATCH_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "counters.h"
#include "fallback.h"
#include "gemm_rvv.h"
#include "gr_contract.h"
#include "registry_lookup.h"

/* One call's operands, checked: Y[m, n] = X[m, k] W^T (+ bias). X is BF16 at x, or FP32 at
 * x_f32 for Q8_0 weights (w.format GR_FORMAT_Q8_0). */
struct gr_call {
    const uint16_t *x;
    size_t m, ldx;
    struct gr_weight_view w;
    const float *bias;
    void *y;
    size_t ldy;
    int y_bf16;
    const float *x_f32;
};

/* Runs c with the plan for its M among `plans` (when kernels are active) or with the fallback,
 * and counts it in the row of its M bucket (counter_cache: a weight object's rows, or NULL
 * for plain weights). A call that fails (out of memory) has written and counted nothing. */
gemm_rvv_status gr_dispatch(const struct gr_call *c, const struct gr_shape_plans *plans,
                            _Atomic(struct gr_counter *) *counter_cache);

/* The ways a call is served (plan_call.c, fallback_call.c; Q8_0: q8_0_plan.c, q8_0_call.c). */
gemm_rvv_status gr_run_plan(const struct gr_call *c, const struct gr_plan *plan);
gemm_rvv_status gr_run_fallback(const struct gr_call *c);
gemm_rvv_status gr_run_fallback_q8_0(const struct gr_call *c);
gemm_rvv_status gr_run_plan_q8_0(const struct gr_call *c, const struct gr_plan *plan);

/* Splits n columns into one piece of whole panels per thread: the piece count, and the columns
 * per piece in *piece_cols (the last piece may have fewer). */
size_t gr_split_columns(size_t n, size_t panel_width, size_t *piece_cols);

/* Y's row `row`. */
static inline void *gr_y_row(void *y, size_t row, size_t ldy, int y_bf16)
{
    return y_bf16 ? (void *)((uint16_t *)y + row * ldy) : (void *)((float *)y + row * ldy);
}

#endif
