/* The rule of docs/numerics.md, "Attention", for one query row and head, in scalar code:
 * blocks of GR_ATTN_BLOCK positions, each scored, its maximum taken, the sums rescaled once,
 * then its weighted values added in increasing position. */
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
static float dot(const float *q, const uint16_t *k, size_t d, int bf16)
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

/* The score before the mask term: the scaled dot product, soft-capped when asked. */
static float score(const struct gr_attention *at, const float *q, const uint16_t *k)
{
    const gemm_rvv_attention_args *a = at->a;
    const float x = dot(q, k, (size_t)a->head_dim, a->k_type == GEMM_RVV_BF16) * at->dot_scale;
    return a->logit_softcap != 0.0f ? a->logit_softcap * gr_tanh_f32(x) : x;
}

void gr_attention_fallback(const struct gr_attention *at, size_t row, size_t head)
{
    const gemm_rvv_attention_args *a = at->a;
    const size_t d = (size_t)a->head_dim, g = head / at->group, n_kv = (size_t)a->n_kv;
    const float *q = a->q + row * (size_t)a->q_row_stride + head * (size_t)a->q_head_stride;
    const uint16_t *k = a->k + g * (size_t)a->k_head_stride;
    const uint16_t *v = a->v + g * (size_t)a->v_head_stride;
    const uint16_t *mask = a->mask ? a->mask + row * (size_t)a->mask_row_stride : NULL;
    const int v_bf16 = a->v_type == GEMM_RVV_BF16;
    const float slope = gr_attention_slope(at, (uint32_t)head);
    float acc[GEMM_RVV_ATTENTION_MAX_HEAD_DIM] = {0};
    float max = -INFINITY, sum = 0.0f;
    for (size_t p0 = 0; p0 < n_kv; p0 += GR_ATTN_BLOCK) {
        const size_t n = n_kv - p0 < GR_ATTN_BLOCK ? n_kv - p0 : GR_ATTN_BLOCK;
        float s[GR_ATTN_BLOCK];
        int live[GR_ATTN_BLOCK], any = 0;
        float block_max = -INFINITY;
        for (size_t j = 0; j < n; j++) {
            const size_t p = p0 + j;
            const float term = mask ? slope * gr_fp16_to_f32(mask[p]) : 0.0f;
            live[j] = term != -INFINITY;
            if (!live[j])
                continue;
            any = 1;
            s[j] = score(at, q, k + p * (size_t)a->k_pos_stride);
            if (mask)
                s[j] = s[j] + term;
            if (s[j] > block_max)
                block_max = s[j];
        }
        if (!any)
            continue;
        const float new_max = block_max > max ? block_max : max;
        const float c = gr_exp_f32(max - new_max);
        sum = sum * c;
        for (size_t i = 0; i < d; i++)
            acc[i] = acc[i] * c;
        for (size_t j = 0; j < n; j++) {
            if (!live[j])
                continue;
            const float w = gr_exp_f32(s[j] - new_max);
            const uint16_t *vp = v + (p0 + j) * (size_t)a->v_pos_stride;
            sum = sum + w;
            for (size_t i = 0; i < d; i++)
                acc[i] = fmaf(w, widen(vp[i], v_bf16), acc[i]);
        }
        max = new_max;
    }
    float *out = a->out + row * (size_t)a->out_row_stride + head * (size_t)a->out_head_stride;
    for (size_t i = 0; i < d; i++)
        out[i] = sum == 0.0f ? 0.0f : acc[i] / sum;
}
