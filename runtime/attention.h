/* Attention (gemm_rvv_attention): the checks of its arguments and the scalar fallback, whose
 * order of operations every kernel must repeat (docs/numerics.md, "Attention"). */
#ifndef GEMM_RVV_ATTENTION_H
#define GEMM_RVV_ATTENTION_H

#include <stddef.h>
#include <stdint.h>

#include "gemm_rvv.h"
#include "gr_contract.h" /* GR_ATTN_BLOCK, GR_ATTN_PARTIALS */

/* GEMM_RVV_OK, or the status the header gives for the first bad argument. */
gemm_rvv_status gr_attention_check(const gemm_rvv_attention_args *a);

/* What the rule takes once per call: the arguments, the scale of the dot products (scale, or
 * scale / logit_softcap) and ALiBi's per-head slope parameters. */
struct gr_attention {
    const gemm_rvv_attention_args *a;
    size_t group; /* query heads per KV head */
    float dot_scale;
    float m0, m1;
    uint32_t n_head_log2;
};

void gr_attention_prepare(const gemm_rvv_attention_args *a, struct gr_attention *at);

/* The slope of query head h's mask term. */
float gr_attention_slope(const struct gr_attention *at, uint32_t h);

/* The build's plan for the call's shape and rows (runtime/attention.c), or NULL. */
const struct gr_attn_plan *gr_attention_plan(const gemm_rvv_attention_args *a);

/* out for checked arguments by `tiles`: `pairs` (query row, head) pairs a tile (1 ..
 * GR_ATTN_PAIRS_MAX), `shared` tiles a work item (1 .. GR_ATTN_SHARED_MAX; fewer where their
 * accumulators would pass GR_ATTN_PAIRS_MAX * GEMM_RVV_ATTENTION_MAX_HEAD_DIM floats). */
void gr_attention_run(const gemm_rvv_attention_args *a, const struct gr_attn_tiles *tiles,
                      size_t pairs, size_t shared);

/* The rule in scalar code, as tiles of any pairs (runtime/attention_fallback.c): every call
 * without a plan, and the plans of a core without V or of a host-tiles build. */
extern const struct gr_attn_tiles gr_attn_tiles_scalar;

/* Head dims the vector tiles take (their kt and vt scratch live on the stack); longer ones run
 * the scalar tiles. */
#define GR_ATTN_KERNEL_HEAD_DIM_MAX 256

#endif
