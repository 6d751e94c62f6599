/* The forward pass of model.h, written for clarity over speed outside the Linears and the
 * attention: those are where the time goes, and they run in the library. */
#include "model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bf16.h"

static void *alloc_floats(int64_t count) { return calloc((size_t)count, sizeof(float)); }

/* RoPE's inverse frequencies theta^(-2i/d), with rope_scaling "llama3" as transformers applies
 * it: wavelengths above original/low_freq_factor are divided by factor, those below
 * original/high_freq_factor kept, and those between blended smoothly. */
static void rope_frequencies(const model_config *c, float *inv_freq)
{
    const double pi = 3.14159265358979323846;
    for (int64_t i = 0; i < c->head_dim / 2; i++) {
        double f = pow(c->rope_theta, -2.0 * (double)i / (double)c->head_dim);
        if (c->rope_llama3) {
            double original = (double)c->rope_original_max_positions;
            double wavelength = 2 * pi / f;
            double low_wavelength = original / c->rope_low_freq_factor;
            double high_wavelength = original / c->rope_high_freq_factor;
            if (wavelength > low_wavelength) {
                f /= c->rope_factor;
            } else if (wavelength >= high_wavelength) {
                double smooth = (original / wavelength - c->rope_low_freq_factor) /
                                (c->rope_high_freq_factor - c->rope_low_freq_factor);
                f = (1 - smooth) * f / c->rope_factor + smooth * f;
            }
        }
        inv_freq[i] = (float)f;
    }
}

int engine_state_init(engine_state *s, const model_config *c, int64_t context, int64_t max_rows,
                      gemm_rvv_type cache_type)
{
    int64_t q = model_q_dim(c), kv = model_kv_dim(c), r = max_rows;
    int64_t widest = c->hidden > q ? c->hidden : q;
    widest = widest > c->intermediate ? widest : c->intermediate;
    *s = (engine_state){.context = context, .max_rows = max_rows, .cache_type = cache_type};
    /* A cache beyond 2^60 bytes cannot be allocated; refusing it keeps the sizes below exact. */
    if ((double)c->layers * (double)context * (double)kv * 2.0 > 0x1p60 ||
        (double)r * (double)(widest > context ? widest : context) * 4.0 > 0x1p60)
        return 1;
    s->k_cache = calloc((size_t)(c->layers * context * kv), sizeof *s->k_cache);
    s->v_cache = calloc((size_t)(c->layers * context * kv), sizeof *s->v_cache);
    s->mask = calloc((size_t)(r * context), sizeof *s->mask);
    s->x = alloc_floats(r * c->hidden);
    s->q = alloc_floats(r * q);
    s->k = alloc_floats(r * kv);
    s->v = alloc_floats(r * kv);
    s->attn = alloc_floats(r * q);
    s->gate = alloc_floats(r * c->intermediate);
    s->up = alloc_floats(r * c->intermediate);
    s->out = alloc_floats(r * c->hidden);
    s->in = calloc((size_t)(r * widest), sizeof *s->in);
    s->inv_freq = alloc_floats(c->head_dim / 2);
    if (!s->k_cache || !s->v_cache || !s->mask || !s->x || !s->q || !s->k || !s->v || !s->attn ||
        !s->gate || !s->up || !s->out || !s->in || !s->inv_freq) {
        engine_state_free(s);
        return 1;
    }
    rope_frequencies(c, s->inv_freq);
    return 0;
}

void engine_state_free(engine_state *s)
{
    void *buffers[] = {s->k_cache, s->v_cache, s->mask, s->x, s->q, s->k, s->v, s->attn,
                       s->gate, s->up, s->out, s->in, s->inv_freq};
    for (size_t i = 0; i < sizeof buffers / sizeof buffers[0]; i++)
        free(buffers[i]);
    *s = (engine_state){0};
}

/* y = x / sqrt(mean(x^2) + eps) * weight, over n values. */
static void rms_norm(const float *x, const float *weight, int64_t n, double eps, float *y)
{
    double sum = 0;
    for (int64_t i = 0; i < n; i++)
        sum += (double)x[i] * x[i];
    float scale = (float)(1.0 / sqrt(sum / (double)n + eps));
    for (int64_t i = 0; i < n; i++)
        y[i] = x[i] * scale * weight[i];
}

static void to_bf16(const float *x, int64_t n, uint16_t *out)
{
    for (int64_t i = 0; i < n; i++)
        out[i] = f32_to_bf16(x[i]);
}

/* out[m, n] = in[m, k] W^T + bias through the library, FP32 out. */
static int linear(const uint16_t *in, int64_t m, int64_t k, const gemm_rvv_weight *w,
                  const float *bias, float *out, int64_t n, char *err, size_t err_size)
{
    gemm_rvv_status st = gemm_rvv_linear(in, m, k, w, bias, out, n, GEMM_RVV_F32);
    if (st != GEMM_RVV_OK)
        snprintf(err, err_size, "gemm_rvv_linear (M=%lld, N=%lld, K=%lld): %s", (long long)m,
                 (long long)n, (long long)k, gemm_rvv_strerror(st));
    return st != GEMM_RVV_OK;
}

/* Rotates each head of `v` (heads of head_dim values) by the angles of position pos, pairing
 * element i with i + head_dim/2 (the layout of Hugging Face checkpoints). */
static void rope(float *v, int64_t heads, int64_t head_dim, int64_t pos, const float *inv_freq)
{
    int64_t half = head_dim / 2;
    for (int64_t i = 0; i < half; i++) {
        float angle = (float)pos * inv_freq[i];
        float cs = cosf(angle), sn = sinf(angle);
        for (int64_t h = 0; h < heads; h++) {
            float *a = v + h * head_dim + i, *b = a + half;
            float x0 = *a, x1 = *b;
            *a = x0 * cs - x1 * sn;
            *b = x1 * cs + x0 * sn;
        }
    }
}

/* The cache's element from FP32: F16 or BF16, rounded to nearest even. */
static uint16_t to_cache(gemm_rvv_type type, float x)
{
    return type == GEMM_RVV_F16 ? f32_to_f16(x) : f32_to_bf16(x);
}

/* Rows 0 .. m - 1 (positions pos .. pos + m - 1) against the cache of positions 0 .. pos + m - 1,
 * each row seeing positions up to its own (causal), all heads in one gemm_rvv_attention call;
 * outputs [m, q_dim]. One row needs no mask: it sees the whole cache. */
static int attend(const model_config *c, engine_state *s, const uint16_t *k_cache,
                  const uint16_t *v_cache, int64_t m, int64_t pos, char *err, size_t err_size)
{
    int64_t n_kv = pos + m, hd = c->head_dim, kv_dim = model_kv_dim(c), q_dim = model_q_dim(c);
    for (int64_t r = 0; r < m && m > 1; r++)
        for (int64_t p = 0; p < n_kv; p++)
            s->mask[r * n_kv + p] = p <= pos + r ? 0x0000 : 0xfc00; /* F16 +0 and -Inf */
    gemm_rvv_attention_args a = {
        .n_q = m, .n_kv = n_kv, .head_dim = hd, .q_heads = c->heads, .kv_heads = c->kv_heads,
        .q = s->q, .q_row_stride = q_dim, .q_head_stride = hd,
        .k = k_cache, .k_pos_stride = kv_dim, .k_head_stride = hd, .k_type = s->cache_type,
        .v = v_cache, .v_pos_stride = kv_dim, .v_head_stride = hd, .v_type = s->cache_type,
        .mask = m > 1 ? s->mask : NULL, .mask_row_stride = n_kv,
        .scale = (float)(1.0 / sqrt((double)hd)),
        .out = s->attn, .out_row_stride = q_dim, .out_head_stride = hd};
    gemm_rvv_status st = gemm_rvv_attention(&a);
    if (st != GEMM_RVV_OK)
        snprintf(err, err_size, "gemm_rvv_attention (n_q=%lld, n_kv=%lld): %s", (long long)m,
                 (long long)n_kv, gemm_rvv_strerror(st));
    return st != GEMM_RVV_OK;
}

static void add(float *x, const float *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        x[i] += y[i];
}

static int attention_block(const model_config *c, const layer_weights *lw, engine_state *s,
                           int64_t layer, int64_t m, int64_t pos, char *err, size_t err_size)
{
    int64_t hidden = c->hidden, q_dim = model_q_dim(c), kv_dim = model_kv_dim(c);
    uint16_t *k_cache = s->k_cache + layer * s->context * kv_dim;
    uint16_t *v_cache = s->v_cache + layer * s->context * kv_dim;
    for (int64_t r = 0; r < m; r++) {
        rms_norm(s->x + r * hidden, lw->attn_norm, hidden, c->rms_eps, s->out + r * hidden);
        to_bf16(s->out + r * hidden, hidden, s->in + r * hidden);
    }
    if (linear(s->in, m, hidden, lw->q, lw->q_bias, s->q, q_dim, err, err_size) ||
        linear(s->in, m, hidden, lw->k, lw->k_bias, s->k, kv_dim, err, err_size) ||
        linear(s->in, m, hidden, lw->v, lw->v_bias, s->v, kv_dim, err, err_size))
        return 1;
    for (int64_t r = 0; r < m; r++) {
        float *qr = s->q + r * q_dim, *kr = s->k + r * kv_dim;
        if (c->qk_norm) {
            for (int64_t h = 0; h < c->heads; h++)
                rms_norm(qr + h * c->head_dim, lw->q_norm, c->head_dim, c->rms_eps, qr + h * c->head_dim);
            for (int64_t h = 0; h < c->kv_heads; h++)
                rms_norm(kr + h * c->head_dim, lw->k_norm, c->head_dim, c->rms_eps, kr + h * c->head_dim);
        }
        rope(qr, c->heads, c->head_dim, pos + r, s->inv_freq);
        rope(kr, c->kv_heads, c->head_dim, pos + r, s->inv_freq);
        for (int64_t i = 0; i < kv_dim; i++) {
            k_cache[(pos + r) * kv_dim + i] = to_cache(s->cache_type, kr[i]);
            v_cache[(pos + r) * kv_dim + i] = to_cache(s->cache_type, s->v[r * kv_dim + i]);
        }
    }
    if (attend(c, s, k_cache, v_cache, m, pos, err, err_size))
        return 1;
    to_bf16(s->attn, m * q_dim, s->in);
    if (linear(s->in, m, q_dim, lw->o, NULL, s->out, hidden, err, err_size))
        return 1;
    add(s->x, s->out, m * hidden);
    return 0;
}

/* down(silu(gate(x)) * up(x)), added to the residual stream. */
static int mlp_block(const model_config *c, const layer_weights *lw, engine_state *s, int64_t m,
                     char *err, size_t err_size)
{
    int64_t hidden = c->hidden, inter = c->intermediate;
    for (int64_t r = 0; r < m; r++) {
        rms_norm(s->x + r * hidden, lw->mlp_norm, hidden, c->rms_eps, s->out + r * hidden);
        to_bf16(s->out + r * hidden, hidden, s->in + r * hidden);
    }
    if (linear(s->in, m, hidden, lw->gate, NULL, s->gate, inter, err, err_size) ||
        linear(s->in, m, hidden, lw->up, NULL, s->up, inter, err, err_size))
        return 1;
    for (int64_t i = 0; i < m * inter; i++) {
        float g = s->gate[i];
        s->gate[i] = g / (1.0f + expf(-g)) * s->up[i];
    }
    to_bf16(s->gate, m * inter, s->in);
    if (linear(s->in, m, inter, lw->down, NULL, s->out, hidden, err, err_size))
        return 1;
    add(s->x, s->out, m * hidden);
    return 0;
}

int engine_forward(const model_config *c, const model_weights *w, engine_state *s,
                   const int32_t *tokens, int64_t m, int64_t pos, float *logits, char *err,
                   size_t err_size)
{
    int64_t hidden = c->hidden;
    for (int64_t r = 0; r < m; r++)
        for (int64_t i = 0; i < hidden; i++)
            s->x[r * hidden + i] = bf16_to_f32(w->embed[(int64_t)tokens[r] * hidden + i]);
    for (int64_t l = 0; l < c->layers; l++)
        if (attention_block(c, &w->layers[l], s, l, m, pos, err, err_size) ||
            mlp_block(c, &w->layers[l], s, m, err, err_size))
            return 1;
    /* Only the last position's logits are needed: the lm_head runs with M = 1. */
    rms_norm(s->x + (m - 1) * hidden, w->final_norm, hidden, c->rms_eps, s->out);
    to_bf16(s->out, hidden, s->in);
    return linear(s->in, 1, hidden, w->lm_head, NULL, logits, c->vocab, err, err_size);
}
