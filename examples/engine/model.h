/* The decoder's forward pass: embeddings, then per block RMSNorm, attention (RoPE, grouped
 * query heads over an F16 or BF16 KV cache, computed by gemm_rvv_attention) and a SwiGLU MLP,
 * then the final norm and the lm_head. Activations are FP32 between the Linears and rounded to
 * BF16 going into them. */
#ifndef ENGINE_MODEL_H
#define ENGINE_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include <gemm_rvv.h>

#include "config.h"
#include "weights.h"

typedef struct engine_state {
    int64_t context;  /* positions the KV cache holds */
    int64_t max_rows; /* tokens one forward call may take */
    gemm_rvv_type cache_type;     /* GEMM_RVV_F16 or GEMM_RVV_BF16 */
    uint16_t *k_cache, *v_cache;  /* [layers][context][kv_dim] of cache_type */
    uint16_t *mask;               /* [max_rows, context]: F16, causal within a prompt */
    float *x;                 /* [rows, hidden]: the residual stream */
    float *q, *k, *v, *attn;  /* [rows, q_dim] and [rows, kv_dim] */
    float *gate, *up;         /* [rows, intermediate] */
    float *out;               /* [rows, hidden]: a Linear's output before it joins x */
    uint16_t *in;             /* [rows, widest input]: a Linear's BF16 input */
    float *inv_freq;          /* [head_dim / 2]: RoPE's frequencies, scaling applied */
} engine_state;

/* Allocates the cache (of cache_type) and buffers; nonzero when memory runs out. */
int engine_state_init(engine_state *s, const model_config *c, int64_t context, int64_t max_rows,
                      gemm_rvv_type cache_type);
void engine_state_free(engine_state *s);

/* Runs tokens[0 .. m) at positions pos .. pos + m - 1 (m <= max_rows, pos + m <= context) and
 * writes the vocabulary's logits for the last of them. Returns nonzero with a message in err
 * when the library refuses a call. */
int engine_forward(const model_config *c, const model_weights *w, engine_state *s,
                   const int32_t *tokens, int64_t m, int64_t pos, float *logits, char *err,
                   size_t err_size);

#endif
