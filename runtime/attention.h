/* Attention (gemm_rvv_attention): the checks of its arguments and the scalar fallback, whose
 * order of operations every kernel must repeat (docs/numerics.md, "Attention"). */
#ifndef GEMM_RVV_ATTENTION_H
#define GEMM_RVV_ATTENTION_H

#include <stddef.h>
#include <stdint.h>

#include "gemm_rvv.h"

/* Positions whose scores make one step of the online softmax: the running maximum, the
 * rescaling of the sums and the sums themselves change once per block of this many positions
 * (from position 0; the last block may be shorter). */
#define GR_ATTN_BLOCK 32
/* Interleaved partial sums of a Q.K dot product: partial j sums the products of d = j, j + 8,
 * j + 16, ... in increasing d; the 8 are added as ((s0 + s4) + (s2 + s6)) + ((s1 + s5) +
 * (s3 + s7)). head_dim is a multiple of it. */
#define GR_ATTN_PARTIALS 8

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
