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

/* out[row, head, :] by the rule, in scalar code. */
void gr_attention_fallback(const struct gr_attention *at, size_t row, size_t head);

#endif
