/* A model's weights in the form the forward pass uses: every Linear packed once into a
 * gemm_rvv weight object, the embedding kept as BF16 rows, norms and biases as FP32. */
#ifndef ENGINE_WEIGHTS_H
#define ENGINE_WEIGHTS_H

#include <gemm_rvv.h>
#include <stdint.h>

#include "config.h"

typedef struct layer_weights {
    float *attn_norm, *mlp_norm;    /* [hidden] */
    float *q_norm, *k_norm;         /* [head_dim], Qwen3 only */
    float *q_bias, *k_bias, *v_bias; /* Qwen2 only */
    gemm_rvv_weight *q, *k, *v, *o, *gate, *up, *down;
} layer_weights;

typedef struct model_weights {
    uint16_t *embed; /* [vocab, hidden] */
    float *final_norm;
    gemm_rvv_weight *lm_head; /* packed from embed when the embeddings are tied */
    layer_weights *layers;
    uint64_t linear_bytes; /* BF16 bytes of every Linear: what one decoded token reads */
    int rounded_f16, rounded_f32; /* tensors rounded to BF16 at load */
} model_weights;

/* Loads and checks every tensor the configuration asks for from the model folder `dir`. On
 * error returns nonzero with a message naming the tensor in err; nothing is left allocated. */
int weights_load(model_weights *w, const model_config *c, const char *dir, char *err,
                 size_t err_size);

void weights_free(model_weights *w, const model_config *c);

#endif
