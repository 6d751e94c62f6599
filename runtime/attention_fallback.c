/* The rule of docs/numerics.md, "Attention", in scalar code, as tiles for runtime/attention.c's
 * loop (the contract's struct gr_attn_tiles, for any pairs): a block scored, its maximum taken,
 * the sums rescaled once, then its weighted values added in increasing position. */
#include <math.h>

#include "attention.h"
#include "attn_exp.h"
#include "bf16.h"
#include "q8_0.h"

static float widen(uint16_t h, int bf16)
{
    return bf16 ? gr_bf16_to_f32(h) : gr_fp16_to_f32(h);
}

void gr_attention_prepare(const gemm_rvv_attention_args *a, struct gr_attention *at)
{
    uint32_t n_head_log2 = 1;
    while (n_head_log2 <= (uint32_t)a->q_heads / 2)
        n_head_log2 *= 2;
    *at = (struct gr_attention){
        .a = a,
        .group = (size_t)(a->q_heads / a->kv_heads),
        .dot_scale = a->logit_softcap != 0.0f ? a->scale / a->logit_softcap : a->scale,
        .m0 = powf(2.0f, -a->max_bias / (float)n_head_log2),
        .m1 = powf(2.0f, -(a->max_bias / 2.0f) / (float)n_head_log2),
        .n_head_log2 = n_head_log2};
}

float gr_attention_slope(const struct gr_attention *at, uint32_t h)
{
    if (!(at->a->max_bias > 0.0f))
        return 1.0f;
    return h < at->n_head_log2 ? powf(at->m0, (float)(h + 1))
                               : powf(at->m1, (float)(2 * (h - at->n_head_log2) + 1));
}

/* Q.K in GR_ATTN_PARTIALS interleaved sums of fmaf from +0, added in the fixed tree. */
static float gr_attention_scalar_dot(const float *q, const uint16_t *k, size_t d, int bf16)
{
    float s[GR_ATTN_PARTIALS] = {0};
    for (size_t i = 0; i < d; i += GR_ATTN_PARTIALS)
        for (size_t j = 0; j < GR_ATTN_PARTIALS; j++)
            s[j] = fmaf(q[i + j], widen(k[i + j], bf16), s[j]);
    for (size_t half = GR_ATTN_PARTIALS / 2; half > 0; half /= 2)
        for (size_t j = 0; j < half; j++)
            s[j] = s[j] + s[j + half];
    return s[0];
}

/* Each pair's scores, K read here (no kt): the mask term first, and only a live position's K
 * is read. */
static void gr_attention_scalar_score(const struct gr_attn_args *a, struct gr_attn_block *b)
{
    const int bf16 = a->k_type == GR_KV_BF16;
    for (size_t r = 0; r < a->pairs; r++) {
        b->live[r] = 0;
        b->max[r] = -INFINITY;
        for (size_t j = 0; j < a->n; j++) {
            const float t = a->mask[r] ? a->slope[r] * gr_fp16_to_f32(a->mask[r][j]) : 0.0f;
            if (t == -INFINITY)
                continue;
            b->live[r] |= 1u << j;
            const float dot =
                gr_attention_scalar_dot(a->q[r], a->k + j * a->k_stride, a->head_dim, bf16);
            const float x = dot * a->dot_scale;
            float s = a->softcap != 0.0f ? a->softcap * gr_tanh_f32(x) : x;
            if (a->mask[r])
                s = s + t;
            b->s[r][j] = s;
            if (s > b->max[r])
                b->max[r] = s;
        }
    }
}

static void gr_attention_scalar_weights(const struct gr_attn_args *a, struct gr_attn_block *b)
{
    for (size_t r = 0; r < a->pairs; r++)
        for (size_t j = 0; j < a->n; j++) {
            if (!(b->live[r] >> j & 1)) {
                b->s[r][j] = 0.0f;
                continue;
            }
            b->s[r][j] = gr_exp_f32(b->s[r][j] - b->max[r]);
            b->sum[r] = b->sum[r] + b->s[r][j];
        }
}

static void gr_attention_scalar_pv(const struct gr_attn_args *a, struct gr_attn_block *b, int bf16)
{
    for (size_t r = 0; r < a->pairs; r++) {
        float *acc = b->acc[r];
        for (size_t i = 0; i < a->head_dim; i++)
            acc[i] = acc[i] * b->c[r];
        for (size_t j = 0; j < a->n; j++) {
            if (!(b->live[r] >> j & 1))
                continue;
            const uint16_t *v = a->v + j * a->v_stride;
            for (size_t i = 0; i < a->head_dim; i++)
                acc[i] = fmaf(b->s[r][j], widen(v[i * a->v_dim_stride], bf16), acc[i]);
        }
    }
}

static void gr_attention_scalar_pv_f16(const struct gr_attn_args *a, struct gr_attn_block *b)
{
    gr_attention_scalar_pv(a, b, 0);
}

static void gr_attention_scalar_pv_bf16(const struct gr_attn_args *a, struct gr_attn_block *b)
{
    gr_attention_scalar_pv(a, b, 1);
}

/* The scalar score and pv tiles read K and V themselves. */
static void gr_attention_scalar_kt(const struct gr_attn_args *a)
{
    (void)a;
}

static void gr_attention_scalar_pv_any(const struct gr_attn_args *a, struct gr_attn_block *b)
{
    gr_attention_scalar_pv(a, b, a->v_type == GR_KV_BF16);
}

#define FOUR(f) {f, f, f, f}
_Static_assert(GR_ATTN_PAIRS_MAX == 4, "FOUR fills every pair count");
const struct gr_attn_tiles gr_attn_tiles_scalar = {
    .kt = {gr_attention_scalar_kt, gr_attention_scalar_kt},
    .vt = {gr_attention_scalar_kt, gr_attention_scalar_kt},
    .score = FOUR(gr_attention_scalar_score),
    .weights = gr_attention_scalar_weights,
    .pv = {FOUR(gr_attention_scalar_pv_f16), FOUR(gr_attention_scalar_pv_bf16)},
    .pv_vt = FOUR(gr_attention_scalar_pv_any),
};
