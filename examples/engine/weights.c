/* Tensor by tensor from the safetensors files into the forms of weights.h, each checked against
 * the shape config.json implies before a byte of it is read. */
#include "weights.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bf16.h"
#include "safetensors.h"

typedef struct loader {
    st_model *st;
    model_weights *w;
    char *err;
    size_t err_size;
} loader;

static void format_shape(char *buf, size_t size, int ndim, const int64_t *shape)
{
    size_t used = (size_t)snprintf(buf, size, "[");
    for (int i = 0; i < ndim && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld", i ? ", " : "", (long long)shape[i]);
    if (used < size)
        snprintf(buf + used, size - used, "]");
}

/* Tensor `name` with the shape [d0] (d1 == 0) or [d0, d1], as a new BF16 array. */
static uint16_t *load_bf16(loader *l, const char *name, int64_t d0, int64_t d1)
{
    st_tensor t;
    if (st_find(l->st, name, &t, l->err, l->err_size))
        return NULL;
    int64_t want[2] = {d0, d1};
    int ndim = d1 ? 2 : 1;
    if (t.ndim != ndim || t.shape[0] != d0 || (d1 && t.shape[1] != d1)) {
        char have[128], need[64];
        format_shape(have, sizeof have, t.ndim, t.shape);
        format_shape(need, sizeof need, ndim, want);
        snprintf(l->err, l->err_size, "tensor %s: shape %s, but config.json gives %s", name, have, need);
        return NULL;
    }
    size_t count = (size_t)d0 * (size_t)(d1 ? d1 : 1);
    uint16_t *out = malloc(count * sizeof *out);
    if (!out) {
        snprintf(l->err, l->err_size, "tensor %s: out of memory for %zu values", name, count);
        return NULL;
    }
    /* memcpy per element: the data may sit at any byte offset of the mapping. */
    for (size_t i = 0; i < count; i++) {
        if (t.dtype == ST_F32) {
            float f;
            memcpy(&f, t.data + 4 * i, 4);
            out[i] = f32_to_bf16(f);
        } else {
            uint16_t h;
            memcpy(&h, t.data + 2 * i, 2);
            out[i] = t.dtype == ST_F16 ? f32_to_bf16(f16_to_f32(h)) : h;
        }
    }
    l->w->rounded_f16 += t.dtype == ST_F16;
    l->w->rounded_f32 += t.dtype == ST_F32;
    return out;
}

/* A vector as FP32 (the values of its BF16 rounding, like every other weight). */
static float *load_vector(loader *l, const char *name, int64_t n)
{
    uint16_t *h = load_bf16(l, name, n, 0);
    float *out = h ? malloc((size_t)n * sizeof *out) : NULL;
    if (h && !out)
        snprintf(l->err, l->err_size, "tensor %s: out of memory", name);
    for (int64_t i = 0; out && i < n; i++)
        out[i] = bf16_to_f32(h[i]);
    free(h);
    return out;
}

static gemm_rvv_weight *pack(loader *l, const char *name, const uint16_t *bf16, int64_t n, int64_t k)
{
    gemm_rvv_weight *packed = NULL;
    gemm_rvv_status s = gemm_rvv_weight_create(bf16, n, k, k, &packed);
    if (s != GEMM_RVV_OK) {
        snprintf(l->err, l->err_size, "tensor %s: packing failed: %s", name, gemm_rvv_strerror(s));
        return NULL;
    }
    l->w->linear_bytes += (uint64_t)n * (uint64_t)k * 2;
    return packed;
}

/* A Linear's [n, k] weight, packed; the BF16 copy is freed. */
static gemm_rvv_weight *load_linear(loader *l, const char *name, int64_t n, int64_t k)
{
    uint16_t *h = load_bf16(l, name, n, k);
    gemm_rvv_weight *packed = h ? pack(l, name, h, n, k) : NULL;
    free(h);
    return packed;
}

/* One decoder block's tensors; returns nonzero on the first error. */
static int load_layer(loader *l, const model_config *c, int64_t i, layer_weights *lw)
{
    char name[160];
    int64_t q = model_q_dim(c), kv = model_kv_dim(c);
#define NAME(part) (snprintf(name, sizeof name, "model.layers.%lld.%s", (long long)i, part), name)
    if (!(lw->attn_norm = load_vector(l, NAME("input_layernorm.weight"), c->hidden)) ||
        !(lw->mlp_norm = load_vector(l, NAME("post_attention_layernorm.weight"), c->hidden)) ||
        !(lw->q = load_linear(l, NAME("self_attn.q_proj.weight"), q, c->hidden)) ||
        !(lw->k = load_linear(l, NAME("self_attn.k_proj.weight"), kv, c->hidden)) ||
        !(lw->v = load_linear(l, NAME("self_attn.v_proj.weight"), kv, c->hidden)) ||
        !(lw->o = load_linear(l, NAME("self_attn.o_proj.weight"), c->hidden, q)) ||
        !(lw->gate = load_linear(l, NAME("mlp.gate_proj.weight"), c->intermediate, c->hidden)) ||
        !(lw->up = load_linear(l, NAME("mlp.up_proj.weight"), c->intermediate, c->hidden)) ||
        !(lw->down = load_linear(l, NAME("mlp.down_proj.weight"), c->hidden, c->intermediate)))
        return 1;
    if (c->qkv_bias &&
        (!(lw->q_bias = load_vector(l, NAME("self_attn.q_proj.bias"), q)) ||
         !(lw->k_bias = load_vector(l, NAME("self_attn.k_proj.bias"), kv)) ||
         !(lw->v_bias = load_vector(l, NAME("self_attn.v_proj.bias"), kv))))
        return 1;
    if (c->qk_norm &&
        (!(lw->q_norm = load_vector(l, NAME("self_attn.q_norm.weight"), c->head_dim)) ||
         !(lw->k_norm = load_vector(l, NAME("self_attn.k_norm.weight"), c->head_dim))))
        return 1;
#undef NAME
    return 0;
}

int weights_load(model_weights *w, const model_config *c, const char *dir, char *err, size_t err_size)
{
    memset(w, 0, sizeof *w);
    loader l = {.w = w, .err = err, .err_size = err_size};
    l.st = st_open(dir, err, err_size);
    if (!l.st)
        return 1;
    int failed = !(w->layers = calloc((size_t)c->layers, sizeof *w->layers));
    if (failed)
        snprintf(err, err_size, "out of memory");
    failed = failed || !(w->embed = load_bf16(&l, "model.embed_tokens.weight", c->vocab, c->hidden));
    failed = failed || !(w->final_norm = load_vector(&l, "model.norm.weight", c->hidden));
    for (int64_t i = 0; !failed && i < c->layers; i++)
        failed = load_layer(&l, c, i, &w->layers[i]);
    if (!failed)
        w->lm_head = c->tied_embeddings
                         ? pack(&l, "model.embed_tokens.weight", w->embed, c->vocab, c->hidden)
                         : load_linear(&l, "lm_head.weight", c->vocab, c->hidden);
    failed = failed || !w->lm_head;
    st_close(l.st);
    if (failed)
        weights_free(w, c);
    return failed;
}

void weights_free(model_weights *w, const model_config *c)
{
    for (int64_t i = 0; w->layers && i < c->layers; i++) {
        layer_weights *lw = &w->layers[i];
        float *vectors[] = {lw->attn_norm, lw->mlp_norm, lw->q_norm, lw->k_norm,
                            lw->q_bias, lw->k_bias, lw->v_bias};
        for (size_t j = 0; j < sizeof vectors / sizeof vectors[0]; j++)
            free(vectors[j]);
        gemm_rvv_weight *linears[] = {lw->q, lw->k, lw->v, lw->o, lw->gate, lw->up, lw->down};
        for (size_t j = 0; j < sizeof linears / sizeof linears[0]; j++)
            gemm_rvv_weight_free(linears[j]);
    }
    free(w->layers);
    free(w->embed);
    free(w->final_norm);
    gemm_rvv_weight_free(w->lm_head);
    memset(w, 0, sizeof *w);
}
