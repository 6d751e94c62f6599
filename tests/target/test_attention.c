/* gemm_rvv_attention: every bad argument refused with its status and the output untouched;
 * the outputs equal, bit for bit, a model of the rule of docs/numerics.md ("Attention")
 * written here again, and an FP64 reference within the documented bound, over cache lengths
 * (1 to a few thousand), head dims 64 and 128, GQA groups 1, 2, 3 and 8, F16 and BF16 caches,
 * masks (-Inf, fully masked rows), soft-capping and ALiBi; special values; the same bits at
 * 1, 2 and 3 threads. The digest lines must agree in every configuration (kernels, when they
 * come, and the fallback). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "attention.h"
#include "attn_exp.h"
#include "gemm_rvv.h"
#include "testdata.h"

#define F16_NEG_INF 0xfc00u
#define BLOCK 32 /* positions per softmax step, docs/numerics.md */

/* ---- values ---------------------------------------------------------------------------- */

static double f16_value(uint16_t h)
{
    int e = h >> 10 & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return h & 0x8000 ? -v : v;
}

static double cache_value(uint16_t h, gemm_rvv_type t)
{
    return t == GEMM_RVV_BF16 ? bf16_value(h) : f16_value(h);
}

/* The F16 nearest to v (a normal F16's range, ties to even), or -Inf. */
static uint16_t f16_bits(double v)
{
    if (v == -INFINITY)
        return F16_NEG_INF;
    uint16_t sign = v < 0 ? 0x8000 : 0;
    v = fabs(v);
    if (v == 0)
        return sign;
    int e;
    frexp(v, &e); /* v in [2^(e-1), 2^e) */
    double m = nearbyint(ldexp(v, 11 - e)); /* 1024 .. 2048 */
    if (m == 2048) {
        m = 1024;
        e++;
    }
    assert_true(e - 1 + 15 >= 1 && e - 1 + 15 <= 30);
    return (uint16_t)(sign | (e - 1 + 15) << 10 | ((int)m - 1024));
}

/* A cache element of moderate size, |v| in [2^-4, 2) or 0, both signs. */
static uint16_t random_cache(struct rng *r, gemm_rvv_type t)
{
    uint64_t v = rng_next(r);
    if (v % 23 == 0)
        return (uint16_t)((v >> 8) & 0x8000);
    uint16_t sign = (uint16_t)((v >> 16) & 0x8000);
    if (t == GEMM_RVV_BF16)
        return (uint16_t)(sign | (127 - 4 + (v >> 20) % 5) << 7 | ((v >> 32) & 0x7f));
    return (uint16_t)(sign | (15 - 4 + (v >> 20) % 5) << 10 | ((v >> 32) & 0x3ff));
}

static float random_q(struct rng *r, float range)
{
    return (float)(((double)(rng_next(r) >> 11) / 0x1p53 * 2 - 1) * range);
}

/* ---- a problem and its buffers ---------------------------------------------------------- */

enum mask_kind { MASK_NONE, MASK_CAUSAL, MASK_ALIBI, MASK_EMPTY_ROW };

struct problem {
    size_t n_q, n_kv, d, hq, hkv;
    gemm_rvv_type kt, vt;
    enum mask_kind mask;
    float scale, max_bias, softcap, q_range;
    int head_major; /* out and V laid out head by head instead of ggml's position by position */
    int v_transposed; /* V as llama.cpp keeps it without flash attention: positions adjacent */
};

struct buffers {
    gemm_rvv_attention_args a;
    float *q, *out;
    uint16_t *k, *v, *mask;
    size_t out_count;
};

/* Buffers for p, strides padded so that every stride matters, values from seed. */
static void make(const struct problem *p, uint64_t seed, struct buffers *b)
{
    struct rng r = {seed * 0x9e3779b97f4a7c15ull + 1};
    gemm_rvv_attention_args *a = &b->a;
    *a = (gemm_rvv_attention_args){
        .n_q = (int64_t)p->n_q, .n_kv = (int64_t)p->n_kv, .head_dim = (int64_t)p->d,
        .q_heads = (int64_t)p->hq, .kv_heads = (int64_t)p->hkv, .k_type = p->kt,
        .v_type = p->vt, .scale = p->scale, .max_bias = p->max_bias,
        .logit_softcap = p->softcap};
    a->q_head_stride = (int64_t)p->d + 3;
    a->q_row_stride = (int64_t)(p->hq * (p->d + 3) + 1);
    a->k_head_stride = (int64_t)p->d;
    a->k_pos_stride = (int64_t)(p->hkv * p->d + 8);
    if (p->head_major) {
        a->v_pos_stride = (int64_t)p->d + 2;
        a->v_head_stride = (int64_t)(p->n_kv * (p->d + 2));
        a->out_row_stride = (int64_t)p->d;
        a->out_head_stride = (int64_t)(p->n_q * p->d + 4);
    } else {
        a->v_head_stride = (int64_t)p->d;
        a->v_pos_stride = (int64_t)(p->hkv * p->d);
        a->out_head_stride = (int64_t)p->d;
        a->out_row_stride = (int64_t)(p->hq * p->d);
    }
    size_t q_count = p->n_q * (size_t)a->q_row_stride;
    size_t k_count = p->n_kv * (size_t)a->k_pos_stride;
    if (p->v_transposed) { /* [n_kv + 3, D, H_kv]: rows of positions, padded */
        a->v_pos_stride = 1;
        a->v_dim_stride = (int64_t)p->n_kv + 3;
        a->v_head_stride = (int64_t)(p->d * (p->n_kv + 3));
    }
    size_t v_count = p->v_transposed ? p->hkv * (size_t)a->v_head_stride
                     : p->head_major ? p->hkv * (size_t)a->v_head_stride
                                     : p->n_kv * (size_t)a->v_pos_stride;
    b->out_count = p->head_major ? p->hq * (size_t)a->out_head_stride
                                 : p->n_q * (size_t)a->out_row_stride;
    b->q = malloc(q_count * sizeof *b->q);
    b->k = malloc(k_count * sizeof *b->k);
    b->v = malloc(v_count * sizeof *b->v);
    b->out = malloc(b->out_count * sizeof *b->out);
    assert_true(b->q && b->k && b->v && b->out);
    for (size_t i = 0; i < q_count; i++)
        b->q[i] = random_q(&r, p->q_range);
    for (size_t i = 0; i < k_count; i++)
        b->k[i] = random_cache(&r, p->kt);
    for (size_t i = 0; i < v_count; i++)
        b->v[i] = random_cache(&r, p->vt);
    memset(b->out, 0x7f, b->out_count * sizeof *b->out);
    b->mask = NULL;
    if (p->mask != MASK_NONE) {
        const size_t stride = p->n_kv + 5;
        b->mask = malloc(p->n_q * stride * sizeof *b->mask);
        assert_non_null(b->mask);
        for (size_t i = 0; i < p->n_q; i++) {
            const size_t last = p->n_kv - p->n_q + i; /* the row's own position */
            for (size_t j = 0; j < stride; j++) {
                double m;
                if (j > last && j < p->n_kv)
                    m = -INFINITY; /* causal */
                else if (p->mask == MASK_ALIBI)
                    m = -fabs((double)j - (double)last);
                else if (p->mask == MASK_EMPTY_ROW && i == 0)
                    m = -INFINITY;
                else if (rng_next(&r) % 9 == 0)
                    m = -INFINITY; /* holes */
                else
                    m = -(double)(rng_next(&r) % 64) / 16;
                b->mask[i * stride + j] = f16_bits(m);
            }
        }
        a->mask = b->mask;
        a->mask_row_stride = (int64_t)stride;
    }
    a->q = b->q;
    a->k = b->k;
    a->v = b->v;
    a->out = b->out;
}

static void release(struct buffers *b)
{
    free(b->q);
    free(b->k);
    free(b->v);
    free(b->mask);
    free(b->out);
}

static const float *q_at(const gemm_rvv_attention_args *a, size_t i, size_t h)
{
    return a->q + i * (size_t)a->q_row_stride + h * (size_t)a->q_head_stride;
}

static const uint16_t *k_at(const gemm_rvv_attention_args *a, size_t p, size_t g)
{
    return a->k + p * (size_t)a->k_pos_stride + g * (size_t)a->k_head_stride;
}

/* V[p, g, d] in the test's own buffer (written by the special-value cases). */
static uint16_t *v_at(const gemm_rvv_attention_args *a, size_t p, size_t g, size_t d)
{
    const size_t dim_stride = a->v_dim_stride ? (size_t)a->v_dim_stride : 1;
    return (uint16_t *)a->v + p * (size_t)a->v_pos_stride + g * (size_t)a->v_head_stride +
           d * dim_stride;
}

static float *out_at(const gemm_rvv_attention_args *a, float *out, size_t i, size_t h)
{
    return out + i * (size_t)a->out_row_stride + h * (size_t)a->out_head_stride;
}

/* ALiBi's slope of head h, ggml's formula as ggml writes it. */
static float slope_of(const gemm_rvv_attention_args *a, uint32_t h)
{
    if (!(a->max_bias > 0.0f))
        return 1.0f;
    const uint32_t n_head_log2 = 1u << (uint32_t)floor(log2((double)a->q_heads));
    const float m0 = powf(2.0f, -(a->max_bias) / n_head_log2);
    const float m1 = powf(2.0f, -(a->max_bias / 2.0f) / n_head_log2);
    return h < n_head_log2 ? powf(m0, h + 1) : powf(m1, 2 * (h - n_head_log2) + 1);
}

static float mask_term(const gemm_rvv_attention_args *a, size_t i, size_t p, float slope)
{
    return a->mask ? slope * (float)f16_value(a->mask[i * (size_t)a->mask_row_stride + p]) : 0;
}

/* ---- the model: the rule of docs/numerics.md, written again ---------------------------- */

static float model_score(const gemm_rvv_attention_args *a, const float *q, const uint16_t *k)
{
    float s[8];
    for (int j = 0; j < 8; j++) {
        s[j] = 0.0f;
        for (size_t d = (size_t)j; d < (size_t)a->head_dim; d += 8)
            s[j] = fmaf(q[d], (float)cache_value(k[d], a->k_type), s[j]);
    }
    const float dot = ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]));
    if (a->logit_softcap == 0.0f)
        return dot * a->scale;
    const float x = dot * (a->scale / a->logit_softcap);
    return a->logit_softcap * gr_tanh_f32(x);
}

/* Every output of the call, into out (laid out as the call's). */
static void model(const gemm_rvv_attention_args *a, float *out)
{
    const size_t n_kv = (size_t)a->n_kv, dim = (size_t)a->head_dim;
    float *s = malloc(n_kv * sizeof *s), *acc = malloc(dim * sizeof *acc);
    int *live = malloc(n_kv * sizeof *live);
    assert_true(s && acc && live);
    for (size_t i = 0; i < (size_t)a->n_q; i++) {
        for (size_t h = 0; h < (size_t)a->q_heads; h++) {
            const size_t g = h / (size_t)(a->q_heads / a->kv_heads);
            const float slope = slope_of(a, (uint32_t)h);
            for (size_t p = 0; p < n_kv; p++) {
                const float t = mask_term(a, i, p, slope);
                live[p] = t != -INFINITY;
                if (live[p])
                    s[p] = a->mask ? model_score(a, q_at(a, i, h), k_at(a, p, g)) + t
                                   : model_score(a, q_at(a, i, h), k_at(a, p, g));
            }
            float m = -INFINITY, sum = 0;
            for (size_t d = 0; d < dim; d++)
                acc[d] = 0;
            for (size_t p0 = 0; p0 < n_kv; p0 += BLOCK) {
                const size_t end = p0 + BLOCK < n_kv ? p0 + BLOCK : n_kv;
                int any = 0;
                float bm = -INFINITY;
                for (size_t p = p0; p < end; p++) {
                    any |= live[p];
                    bm = live[p] ? fmaxf(bm, s[p]) : bm;
                }
                if (!any)
                    continue;
                const float nm = fmaxf(m, bm), c = gr_exp_f32(m - nm);
                sum *= c;
                for (size_t d = 0; d < dim; d++)
                    acc[d] *= c;
                for (size_t p = p0; p < end; p++) {
                    if (!live[p])
                        continue;
                    const float w = gr_exp_f32(s[p] - nm);
                    sum += w;
                    for (size_t d = 0; d < dim; d++)
                        acc[d] = fmaf(w, (float)cache_value(*v_at(a, p, g, d), a->v_type),
                                      acc[d]);
                }
                m = nm;
            }
            float *o = out_at(a, out, i, h);
            for (size_t d = 0; d < dim; d++)
                o[d] = sum == 0 ? 0.0f : acc[d] / sum;
        }
    }
    free(s);
    free(acc);
    free(live);
}

/* ---- the FP64 reference and the bound ----------------------------------------------------- */

#define U 0x1p-24
#define EXP_ERR (1.5 * U)  /* gr_exp_f32's relative error, docs/numerics.md */
#define TANH_ERR (2.0 * U) /* gr_tanh_f32's absolute error, docs/numerics.md */

static double gamma_n(double n)
{
    return n * U / (1 - n * U);
}

/* Checks every output of the call against the exact value within the bound of
 * docs/numerics.md; returns the largest error over bound seen. */
static double check_reference(const gemm_rvv_attention_args *a, const float *out)
{
    const size_t n_kv = (size_t)a->n_kv, dim = (size_t)a->head_dim;
    double *s = malloc(n_kv * sizeof *s), *delta = malloc(n_kv * sizeof *delta);
    int *live = malloc(n_kv * sizeof *live);
    assert_true(s && delta && live);
    const double cap = a->logit_softcap;
    const float dot_scale = cap != 0 ? a->scale / a->logit_softcap : a->scale;
    const double c = cap != 0 ? fabs(cap) : 1;
    double worst = 0;
    for (size_t i = 0; i < (size_t)a->n_q; i++) {
        for (size_t h = 0; h < (size_t)a->q_heads; h++) {
            const size_t g = h / (size_t)(a->q_heads / a->kv_heads);
            const float slope = slope_of(a, (uint32_t)h);
            const float *q = q_at(a, i, h);
            double max = -INFINITY, lo = INFINITY;
            size_t n_live = 0;
            for (size_t p = 0; p < n_kv; p++) {
                const double t = a->mask ? (double)slope * f16_value(
                                               a->mask[i * (size_t)a->mask_row_stride + p])
                                         : 0;
                live[p] = t != -INFINITY;
                if (!live[p])
                    continue;
                n_live++;
                double dot = 0, abs_dot = 0;
                for (size_t d = 0; d < dim; d++) {
                    const double prod = (double)q[d] * cache_value(k_at(a, p, g)[d], a->k_type);
                    dot += prod;
                    abs_dot += fabs(prod);
                }
                const double x = dot * dot_scale;
                const double sc = cap != 0 ? cap * tanh(x) : x;
                s[p] = sc + t;
                delta[p] = gamma_n((double)dim / 8 + 4) * fabs(dot_scale) * c * abs_dot +
                           (cap != 0 ? c * TANH_ERR : 0) + 2 * U * (fabs(sc) + fabs(t));
                max = fmax(max, s[p]);
                lo = fmin(lo, s[p]);
            }
            const float *o = out_at(a, (float *)out, i, h);
            if (n_live == 0) {
                for (size_t d = 0; d < dim; d++)
                    assert_true(o[d] == 0 && !signbit(o[d]));
                continue;
            }
            const double blocks = (double)((n_kv + BLOCK - 1) / BLOCK);
            double sum = 0, eta_max = 0;
            for (size_t p = 0; p < n_kv; p++) {
                if (!live[p])
                    continue;
                s[p] = exp(s[p] - max); /* the weight from here on */
                sum += s[p];
                delta[p] += 2 * U * (max - lo) + (blocks + 1) * EXP_ERR; /* its error */
                eta_max = fmax(eta_max, delta[p]);
            }
            for (size_t d = 0; d < dim; d++) {
                double acc = 0;
                for (size_t p = 0; p < n_kv; p++)
                    if (live[p])
                        acc += s[p] * cache_value(*v_at(a, p, g, d), a->v_type);
                const double ref = acc / sum;
                double spread = 0, mag = 0;
                for (size_t p = 0; p < n_kv; p++) {
                    if (!live[p])
                        continue;
                    const double vv = cache_value(*v_at(a, p, g, d), a->v_type);
                    spread += s[p] / sum * delta[p] * fabs(vv - ref);
                    mag += s[p] / sum * fabs(vv);
                }
                const double bound =
                    (spread / (1 - eta_max) + 2 * gamma_n((double)n_live + blocks + 1) * mag +
                     U * fabs(ref)) * 1.01 + 1e-30;
                const double err = fabs((double)o[d] - ref);
                if (!(err <= bound))
                    fail_msg("row %zu head %zu d %zu: %.9g, reference %.9g, error %.3g > bound "
                             "%.3g", i, h, d, (double)o[d], ref, err, bound);
                worst = fmax(worst, err / bound);
            }
        }
    }
    free(s);
    free(delta);
    free(live);
    return worst;
}

/* ---- the tests ------------------------------------------------------------------------- */

/* The tiles and pairs a tile test forces on every call below (runtime/attention.c's loop with
 * them), or NULL: the public call, which takes the build's plan. */
static const struct gr_attn_tiles *forced_tiles;
static size_t forced_pairs, forced_shared;

static gemm_rvv_status call(const gemm_rvv_attention_args *a)
{
    if (!forced_tiles)
        return gemm_rvv_attention(a);
    gemm_rvv_status s = gr_attention_check(a);
    if (s == GEMM_RVV_OK)
        gr_attention_run(a, forced_tiles, forced_pairs, forced_shared);
    return s;
}

static void assert_same_bits(const float *a, const float *b, size_t count, const char *what)
{
    if (memcmp(a, b, count * sizeof *a) != 0) {
        for (size_t i = 0; i < count; i++)
            if (memcmp(&a[i], &b[i], sizeof *a) != 0)
                fail_msg("%s: element %zu: %a against %a", what, i, (double)a[i], (double)b[i]);
    }
}

/* Runs p: the call, its bits against the model, its values against the reference. */
static uint64_t run_problem(const struct problem *p, uint64_t seed, uint64_t h, double *worst)
{
    struct buffers b;
    make(p, seed, &b);
    float *want = malloc(b.out_count * sizeof *want);
    assert_non_null(want);
    memcpy(want, b.out, b.out_count * sizeof *want);
    model(&b.a, want);
    assert_int_equal(call(&b.a), GEMM_RVV_OK);
    assert_same_bits(b.out, want, b.out_count, "call against the model");
    if (!forced_tiles)
        *worst = fmax(*worst, check_reference(&b.a, b.out));
    h = digest_add(h, b.out, b.out_count * sizeof *b.out);
    free(want);
    release(&b);
    return h;
}

#define F16 GEMM_RVV_F16
#define BF16 GEMM_RVV_BF16
/* n_q, n_kv, d, hq, hkv, k, v, mask, scale, max_bias, softcap, q range, head-major,
 * V transposed */
static const struct problem problems[] = {
    {1, 1, 64, 1, 1, F16, F16, MASK_NONE, 0.125f, 0, 0, 2, 0, 0},
    {1, 2, 128, 2, 1, BF16, BF16, MASK_NONE, 0.0884f, 0, 0, 2, 1, 0},
    {2, 31, 64, 3, 1, F16, F16, MASK_CAUSAL, 0.125f, 0, 0, 2, 0, 0},
    {2, 32, 128, 8, 1, BF16, F16, MASK_CAUSAL, 0.0884f, 0, 0, 2, 0, 1},
    {3, 33, 64, 4, 2, F16, BF16, MASK_EMPTY_ROW, 0.125f, 0, 0, 2, 1, 0},
    {2, 33, 128, 6, 2, F16, F16, MASK_NONE, 1.0f, 0, 0, 2, 0, 0},
    {2, 1000, 64, 2, 1, F16, F16, MASK_CAUSAL, 0.125f, 0, 0, 4, 0, 1},
    {1, 1000, 128, 3, 1, BF16, BF16, MASK_NONE, 0.5f, 0, 0, 2, 1, 0},
    {1, 1000, 128, 8, 1, F16, F16, MASK_ALIBI, 0.0884f, 8, 0, 2, 0, 0},
    {2, 200, 64, 12, 4, BF16, BF16, MASK_ALIBI, 0.125f, 8, 0, 2, 0, 1},
    {2, 100, 128, 4, 2, F16, F16, MASK_CAUSAL, 1.0f, 0, 30, 3, 0, 0},
    {1, 300, 64, 2, 2, BF16, BF16, MASK_NONE, 1.0f, 0, 50, 3, 1, 0},
    {1, 3000, 64, 2, 1, F16, F16, MASK_CAUSAL, 0.125f, 0, 0, 2, 0, 0},
    {1, 3000, 128, 1, 1, BF16, BF16, MASK_ALIBI, 0.0884f, 8, 0, 2, 0, 0},
    {1, 4500, 128, 3, 1, F16, F16, MASK_NONE, 0.3f, 0, 20, 2, 0, 1},
};
#undef F16
#undef BF16
#define PROBLEMS (sizeof problems / sizeof problems[0])

static void test_shapes(void **state)
{
    (void)state;
    uint64_t h = DIGEST_INIT;
    double worst = 0;
    for (size_t i = 0; i < PROBLEMS; i++)
        h = run_problem(&problems[i], i + 1, h, &worst);
    printf("largest error against the FP64 reference: %.3f of the bound\n", worst);
    digest_print("attention outputs", h);
}

/* The same call at 1, 2 and 3 threads: the same bits. */
static void test_threads(void **state)
{
    (void)state;
    const struct problem p = {5, 70, 64, 6, 2, GEMM_RVV_F16, GEMM_RVV_F16, MASK_CAUSAL, 0.125f,
                              0, 0, 2, 0, 1};
    struct buffers b;
    make(&p, 99, &b);
    const int before = gemm_rvv_get_threads();
    float *first = malloc(b.out_count * sizeof *first);
    assert_non_null(first);
    for (int t = 1; t <= 3; t++) {
        gemm_rvv_set_threads(t);
        memset(b.out, 0x7f, b.out_count * sizeof *b.out);
        assert_int_equal(gemm_rvv_attention(&b.a), GEMM_RVV_OK);
        if (t == 1)
            memcpy(first, b.out, b.out_count * sizeof *first);
        else
            assert_same_bits(b.out, first, b.out_count, "threads");
    }
    gemm_rvv_set_threads(before);
    free(first);
    release(&b);
}

/* One call on a small problem whose inputs the caller changed: the outputs of (row, head). */
static void outputs_of(struct buffers *b, size_t i, size_t h, float *o)
{
    memset(b->out, 0x7f, b->out_count * sizeof *b->out);
    assert_int_equal(call(&b->a), GEMM_RVV_OK);
    float *want = malloc(b->out_count * sizeof *want);
    assert_non_null(want);
    memcpy(want, b->out, b->out_count * sizeof *want);
    model(&b->a, want);
    assert_same_bits(b->out, want, b->out_count, "special values against the model");
    free(want);
    memcpy(o, out_at(&b->a, b->out, i, h), (size_t)b->a.head_dim * sizeof *o);
}

static void special_values(int print)
{
    const struct problem p = {2, 40, 64, 2, 1, GEMM_RVV_F16, GEMM_RVV_BF16, MASK_CAUSAL, 0.125f,
                              0, 0, 2, 0, 0};
    float o[64];
    uint64_t digest = DIGEST_INIT;
    struct buffers b;
    make(&p, 7, &b);
    const size_t stride = (size_t)b.a.mask_row_stride, last = 39; /* row 1's own position */
    for (size_t j = 0; j < 40; j++) /* row 1: all positions live */
        b.mask[stride + j] = 0;

    /* A NaN in K or V at a masked position is not read. */
    b.mask[stride + 5] = F16_NEG_INF;
    for (int d = 0; d < 64; d++) {
        ((uint16_t *)k_at(&b.a, 5, 0))[d] = 0x7e00; /* F16 NaN */
        *v_at(&b.a, 5, 0, d) = 0x7fc0; /* BF16 NaN */
    }
    outputs_of(&b, 1, 0, o);
    for (int d = 0; d < 64; d++)
        assert_true(isfinite(o[d]));
    digest = digest_add(digest, o, sizeof o);

    /* Live, the NaN in K makes the row's every output NaN (for both heads of the KV head). */
    b.mask[stride + 5] = 0;
    outputs_of(&b, 1, 1, o);
    for (int d = 0; d < 64; d++)
        assert_true(isnan(o[d]));

    /* Inf in V at one live position (all scores equal: q = 0) gives Inf in that column. */
    const uint16_t k5 = 0x3c00;
    for (int d = 0; d < 64; d++) {
        ((uint16_t *)k_at(&b.a, 5, 0))[d] = k5;
        *v_at(&b.a, 5, 0, d) = d == 3 ? 0x7f80 : 0x3f80; /* +Inf, 1 */
    }
    for (int h = 0; h < 2; h++)
        memset((float *)q_at(&b.a, 1, (size_t)h), 0, 64 * sizeof(float));
    outputs_of(&b, 1, 0, o);
    for (int d = 0; d < 64; d++)
        assert_true(d == 3 ? o[d] == INFINITY : isfinite(o[d]));
    digest = digest_add(digest, o, sizeof o);

    /* An infinite score (Inf in Q, K's first column 1) makes NaN: exp(Inf - Inf). */
    for (size_t j = 0; j < 40; j++)
        ((uint16_t *)k_at(&b.a, j, 0))[0] = k5;
    ((float *)q_at(&b.a, 1, 0))[0] = INFINITY;
    outputs_of(&b, 1, 0, o);
    for (int d = 0; d < 64; d++)
        assert_true(isnan(o[d]));

    /* Soft-capping bounds it: the same score is the cap, and the outputs finite. */
    b.a.logit_softcap = 20;
    *v_at(&b.a, 5, 0, 3) = 0x3f80;
    outputs_of(&b, 1, 0, o);
    for (int d = 0; d < 64; d++)
        assert_true(isfinite(o[d]));
    digest = digest_add(digest, o, sizeof o);
    b.a.logit_softcap = 0;

    /* A row whose every position is masked gets +0 everywhere, NaN inputs or not. */
    for (size_t j = 0; j <= last; j++)
        b.mask[stride + j] = F16_NEG_INF;
    outputs_of(&b, 1, 0, o);
    for (int d = 0; d < 64; d++)
        assert_true(o[d] == 0 && !signbit(o[d]));
    release(&b);
    if (print)
        digest_print("attention special values", digest);
}

static void test_special_values(void **state)
{
    (void)state;
    special_values(1);
}

/* The tiles a configuration of the tile test runs: the scalar ones, and the build's vector
 * ones where the core has V. */
static size_t tile_sets(const struct gr_attn_tiles *sets[2])
{
    size_t n = 0;
    sets[n++] = &gr_attn_tiles_scalar;
    if (gr_attn_tiles_base.weights && gemm_rvv_kernels_active())
        sets[n++] = &gr_attn_tiles_base;
    return n;
}

/* Every pair count of every tile set through runtime/attention.c's loop, whatever plans the
 * build has: the problems above and the special values, bit for bit the model's. */
static void test_tiles(void **state)
{
    (void)state;
    const struct gr_attn_tiles *sets[2];
    const size_t n_sets = tile_sets(sets);
    size_t planned = 0;
    for (size_t i = 0; i < PROBLEMS; i++) {
        struct buffers b;
        make(&problems[i], i + 1, &b);
        planned += gr_attention_plan(&b.a) != NULL;
        float *want = malloc(b.out_count * sizeof *want);
        assert_non_null(want);
        memcpy(want, b.out, b.out_count * sizeof *want);
        model(&b.a, want);
        for (size_t t = 0; t < n_sets; t++) {
            if (sets[t] == &gr_attn_tiles_base && problems[i].d > GR_ATTN_KERNEL_HEAD_DIM_MAX)
                continue;
            for (size_t pairs = 1; pairs <= GR_ATTN_PAIRS_MAX; pairs++) {
                const size_t shared = 1 + (pairs + i) % 3; /* 1, 2 or 3 tiles an item */
                memset(b.out, 0x7f, b.out_count * sizeof *b.out);
                gr_attention_run(&b.a, sets[t], pairs, shared);
                char what[80];
                snprintf(what, sizeof what, "problem %zu, %s tiles, %zu pair(s), %zu shared", i,
                         sets[t] == &gr_attn_tiles_base ? "vector" : "scalar", pairs, shared);
                assert_same_bits(b.out, want, b.out_count, what);
            }
        }
        free(want);
        release(&b);
    }
    /* The shapes file of the test build plans 11 of the problems (its attention entries), so
     * test_shapes runs the call's kernels on them. */
    assert_int_equal(planned, 11);
    for (size_t t = 0; t < n_sets; t++)
        for (size_t pairs = 1; pairs <= GR_ATTN_PAIRS_MAX; pairs++) {
            forced_tiles = sets[t];
            forced_pairs = pairs;
            forced_shared = pairs % 2 + 1;
            special_values(0);
        }
    forced_tiles = NULL;
}

/* Every bad argument: its status, and not one byte of the output written. */
static void test_bad_arguments(void **state)
{
    (void)state;
    const struct problem p = {2, 40, 64, 4, 2, GEMM_RVV_F16, GEMM_RVV_F16, MASK_CAUSAL, 0.125f,
                              0, 0, 2, 0, 0};
    struct buffers b;
    make(&p, 3, &b);
    const gemm_rvv_attention_args good = b.a;
    unsigned char *saved = malloc(b.out_count * sizeof *b.out);
    assert_non_null(saved);
    memcpy(saved, b.out, b.out_count * sizeof *b.out);
    const float sink = 0;
    struct {
        const char *what;
        gemm_rvv_status want;
        gemm_rvv_attention_args a;
    } cases[32];
    size_t n = 0;
#define CASE(status, field, value)                                                               \
    do {                                                                                         \
        cases[n].what = #field " = " #value;                                                     \
        cases[n].want = status;                                                                  \
        cases[n].a = good;                                                                       \
        cases[n].a.field = value;                                                                \
        n++;                                                                                     \
    } while (0)
    CASE(GEMM_RVV_ERR_NULL, q, NULL);
    CASE(GEMM_RVV_ERR_NULL, k, NULL);
    CASE(GEMM_RVV_ERR_NULL, v, NULL);
    CASE(GEMM_RVV_ERR_NULL, out, NULL);
    CASE(GEMM_RVV_ERR_SIZE, n_kv, 0);
    CASE(GEMM_RVV_ERR_SIZE, n_kv, -1);
    CASE(GEMM_RVV_ERR_SIZE, n_q, 0);
    CASE(GEMM_RVV_ERR_SIZE, q_heads, 0);
    CASE(GEMM_RVV_ERR_SIZE, kv_heads, 0);
    CASE(GEMM_RVV_ERR_SIZE, kv_heads, 3); /* 4 query heads */
    CASE(GEMM_RVV_ERR_SIZE, head_dim, 60);
    CASE(GEMM_RVV_ERR_SIZE, head_dim, 0);
    CASE(GEMM_RVV_ERR_SIZE, head_dim, GEMM_RVV_ATTENTION_MAX_HEAD_DIM + 8);
    CASE(GEMM_RVV_ERR_TYPE, k_type, GEMM_RVV_F32);
    CASE(GEMM_RVV_ERR_TYPE, v_type, (gemm_rvv_type)7);
    CASE(GEMM_RVV_ERR_STRIDE, k_pos_stride, -1);
    CASE(GEMM_RVV_ERR_STRIDE, q_head_stride, -64);
    CASE(GEMM_RVV_ERR_STRIDE, mask_row_stride, 39); /* a mask row shorter than n_kv */
    CASE(GEMM_RVV_ERR_STRIDE, out_head_stride, 63); /* heads overlap */
    CASE(GEMM_RVV_ERR_STRIDE, out_row_stride, 64);  /* rows overlap heads */
    CASE(GEMM_RVV_ERR_STRIDE, v_dim_stride, -1);
    CASE(GEMM_RVV_ERR_OVERFLOW, v_pos_stride, INT64_MAX / 2);
    CASE(GEMM_RVV_ERR_OVERFLOW, v_dim_stride, INT64_MAX / 64);
    CASE(GEMM_RVV_ERR_OVERFLOW, out_row_stride, INT64_MAX / 4);
    CASE(GEMM_RVV_ERR_OVERFLOW, mask_row_stride, INT64_MAX / 2);
    CASE(GEMM_RVV_ERR_ALIAS, q, b.out + 1);
    CASE(GEMM_RVV_ERR_ALIAS, k, (const uint16_t *)(b.out + b.out_count - 1));
    CASE(GEMM_RVV_ERR_ALIAS, v, (const uint16_t *)b.out);
    CASE(GEMM_RVV_ERR_ALIAS, mask, (const uint16_t *)(b.out + 3));
    CASE(GEMM_RVV_ERR_FORMAT, sinks, &sink);
#undef CASE
    assert_true(n <= sizeof cases / sizeof cases[0]);
    for (size_t i = 0; i < n; i++) {
        gemm_rvv_status got = gemm_rvv_attention(&cases[i].a);
        if (got != cases[i].want)
            fail_msg("%s: %s, expected %s", cases[i].what, gemm_rvv_strerror(got),
                     gemm_rvv_strerror(cases[i].want));
        if (memcmp(saved, b.out, b.out_count * sizeof *b.out) != 0)
            fail_msg("%s: the output was written", cases[i].what);
    }
    assert_int_equal(gemm_rvv_attention(NULL), GEMM_RVV_ERR_NULL);
    /* No mask: its stride is not looked at. */
    gemm_rvv_attention_args no_mask = good;
    no_mask.mask = NULL;
    no_mask.mask_row_stride = -5;
    assert_int_equal(gemm_rvv_attention(&no_mask), GEMM_RVV_OK);
    /* One row and one head: their strides do not matter (nothing to keep apart). */
    gemm_rvv_attention_args one = good;
    one.n_q = 1;
    one.q_heads = one.kv_heads = 1;
    one.out_row_stride = one.out_head_stride = 0;
    assert_int_equal(gemm_rvv_attention(&one), GEMM_RVV_OK);
    free(saved);
    release(&b);
}

/* Every F16 and BF16 bit pattern as V of a one-position cache (so each output is V's element
 * times 1, plus 0): each tile set gives the exact value (-0 as +0), Inf as Inf, NaN as NaN. */
static void test_widening(void **state)
{
    (void)state;
    enum { D = 256 };
    const struct gr_attn_tiles *sets[2];
    const size_t n_sets = tile_sets(sets);
    float q[D] = {0}, out[D];
    uint16_t k[D] = {0}, v[D];
    for (int type = 0; type < 2; type++) {
        const gemm_rvv_type t = type ? GEMM_RVV_BF16 : GEMM_RVV_F16;
        const gemm_rvv_attention_args a = {
            .n_q = 1, .n_kv = 1, .head_dim = D, .q_heads = 1, .kv_heads = 1, .q = q, .k = k,
            .k_type = t, .v = v, .v_type = t, .scale = 1.0f, .out = out};
        for (uint32_t first = 0; first < 0x10000; first += D) {
            for (int d = 0; d < D; d++)
                v[d] = (uint16_t)(first + (uint32_t)d);
            for (size_t set = 0; set < n_sets; set++) {
                gr_attention_run(&a, sets[set], 1, 1);
                for (int d = 0; d < D; d++) {
                    const double want = cache_value(v[d], t);
                    if (isnan(want) ? !isnan(out[d]) : (double)out[d] != want)
                        fail_msg("%s %s tiles: V 0x%04x gave %a, not %a", type ? "BF16" : "F16",
                                 sets[set] == &gr_attn_tiles_base ? "vector" : "scalar", v[d],
                                 (double)out[d], want);
                }
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_special_values),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_tiles),
        cmocka_unit_test(test_widening),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
