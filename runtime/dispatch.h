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
#include "operands.h"
#include "registry_lookup.h"

/* Runs c with the plan for its M among `plans` (when kernels are active) or with the fallback,
 * and counts it in the row of its M bucket (counter_cache: a weight object's rows, or NULL
 * for plain weights). A call that fails (out of memory) has written and counted nothing. */
gemm_rvv_status gr_dispatch(const struct gr_call *c, const struct gr_shape_plans *plans,
                            _Atomic(struct gr_counter *) *counter_cache);

/* The two ways a call of any format is served: by a plan (plan_call.c) or by the scalar
 * fallback (fallback_call.c). */
gemm_rvv_status gr_run_plan(const struct gr_call *c, const struct gr_plan *plan);
gemm_rvv_status gr_run_fallback(const struct gr_call *c);

/* c on plan as gr_run_plan runs it, with the variant whose tiles run, the L2 share whose
 * blocking applies and the count of column pieces given (0: one per thread), each piece run
 * as a thread of the pool runs it: the one loop over row blocks that the tests and the lab
 * call too. gr_run_plan gives the process's variant, GEMM_RVV_BLOCKING's share or its
 * threads' (shared from 2), and 0. */
gemm_rvv_status gr_drive_call(const struct gr_call *c, const struct gr_plan *plan,
                              const struct gr_variant *variant, int share, size_t pieces);

/* Splits n columns into pieces of whole panels, `want` of them or (0) one per thread, at most
 * one per panel: the piece count, and the columns per piece in *piece_cols (the last piece
 * may have fewer). */
size_t gr_split_columns(size_t n, size_t panel_width, size_t want, size_t *piece_cols);

#endif
