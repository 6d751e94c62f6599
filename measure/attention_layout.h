/* The attention calls the lab measures (measure/count/count_attention.c,
 * measure/dram/dram_attention.c): ggml's layout, Q and the outputs [n_q][H_q][D] FP32, K and V
 * [n_kv][H_kv][D], and a prompt's causal F16 mask (row i sees positions up to n_kv - n_q + i,
 * as llama.cpp gives it; NULL for one row). */
#ifndef ATTENTION_LAYOUT_H
#define ATTENTION_LAYOUT_H

#include <stdint.h>

#include "gemm_rvv.h"

static inline void attention_causal_mask(uint16_t *mask, long n_q, long n_kv)
{
    for (long i = 0; mask && i < n_q; i++)
        for (long p = 0; p < n_kv; p++)
            mask[i * n_kv + p] = p <= n_kv - n_q + i ? 0x0000 : 0xfc00; /* F16 +0, -Inf */
}

static inline gemm_rvv_attention_args attention_ggml_args(gemm_rvv_type t, long d, long hq,
                                                          long hkv, long n_q, long n_kv,
                                                          const float *q, const uint16_t *k,
                                                          const uint16_t *v,
                                                          const uint16_t *mask, float *out)
{
    return (gemm_rvv_attention_args){
        .n_q = n_q, .n_kv = n_kv, .head_dim = d, .q_heads = hq, .kv_heads = hkv, .q = q,
        .q_row_stride = hq * d, .q_head_stride = d, .k = k, .k_pos_stride = hkv * d,
        .k_head_stride = d, .k_type = t, .v = v, .v_pos_stride = hkv * d, .v_head_stride = d,
        .v_type = t, .mask = mask, .mask_row_stride = n_kv, .scale = 0.0884f, .out = out,
        .out_row_stride = hq * d, .out_head_stride = d};
}

#endif
