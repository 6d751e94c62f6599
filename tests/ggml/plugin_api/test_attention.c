/* plugin_api's group for plugins/ggml/attention.c: FLASH_ATTN_EXT and llama.cpp's attention
 * without it (MUL_MAT of the K cache by Q, SOFT_MAX, MUL_MAT of V^T), on GEMM_RVV against
 * ggml's CPU backend; what GEMM_RVV declines, and what it leaves to ggml. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A GQA shape of llama.cpp's: head dim D, 4 query heads on 2 KV heads, 3 rows, 2 ne3 slices
 * (llama.cpp's streams), n_kv positions. */
enum { D = 64, HQ = 4, HKV = 2, NQ = 3, NS = 2 };

struct attn_case {
    struct ggml_context *ctx;
    ggml_backend_buffer_t buf;
    struct ggml_tensor *q, *k, *v, *vt, *mask16, *mask32;
    int64_t n_kv;
};

static uint16_t f16(float x)
{
    return ggml_fp32_to_fp16(x);
}

/* Q [D, NQ, HQ, NS] F32, K and V [D, n_kv, HKV, NS] of kv_type, V^T [n_kv, D, HKV, NS] (V as
 * llama.cpp keeps it without flash attention), masks [n_kv, NQ, 1, NS] F16 and F32 with
 * -Inf at every third position of a row but its own (a row masked whole is NaN in ggml's
 * SOFT_MAX, zeros in FLASH_ATTN_EXT: not compared), all in a CPU buffer, both devices reading them there. `mask_extra`: a value of the F32
 * mask's first element that F16 does not hold. */
static bool attn_case_new(struct attn_case *c, int64_t n_kv, enum ggml_type kv_type,
                          float mask_extra)
{
    memset(c, 0, sizeof *c);
    c->n_kv = n_kv;
    c->ctx = pa_ctx_new(64, 0);
    c->q = ggml_new_tensor_4d(c->ctx, GGML_TYPE_F32, D, NQ, HQ, NS);
    c->k = ggml_new_tensor_4d(c->ctx, kv_type, D, n_kv, HKV, NS);
    c->v = ggml_new_tensor_4d(c->ctx, kv_type, D, n_kv, HKV, NS);
    c->vt = ggml_new_tensor_4d(c->ctx, kv_type, n_kv, D, HKV, NS);
    c->mask16 = ggml_new_tensor_4d(c->ctx, GGML_TYPE_F16, n_kv, NQ, 1, NS);
    c->mask32 = ggml_new_tensor_4d(c->ctx, GGML_TYPE_F32, n_kv, NQ, 1, NS);
    c->buf = pa_alloc_in(c->ctx, pa_buft_cpu, false);
    if (!c->buf)
        return false;
    size_t nq = (size_t)(D * NQ * HQ * NS), nkv = (size_t)(D * n_kv * HKV * NS);
    float *qf = pa_xmalloc(nq * sizeof *qf), *kvf = pa_xmalloc(nkv * sizeof *kvf);
    uint16_t *k = pa_xmalloc(nkv * 2), *v = pa_xmalloc(nkv * 2), *vt = pa_xmalloc(nkv * 2);
    pa_fill_f32(qf, nq, 1.0f);
    ggml_backend_tensor_set(c->q, qf, 0, nq * sizeof *qf);
    for (int which = 0; which < 2; which++) {
        uint16_t *out = which ? v : k;
        pa_fill_f32(kvf, nkv, 1.0f);
        for (size_t i = 0; i < nkv; i++)
            out[i] = kv_type == GGML_TYPE_F16 ? f16(kvf[i]) : ggml_fp32_to_bf16(kvf[i]).bits;
    }
    for (int64_t s = 0; s < NS * HKV; s++)
        for (int64_t p = 0; p < n_kv; p++)
            for (int64_t d = 0; d < D; d++)
                vt[(s * D + d) * n_kv + p] = v[(s * n_kv + p) * D + d];
    ggml_backend_tensor_set(c->k, k, 0, nkv * 2);
    ggml_backend_tensor_set(c->v, v, 0, nkv * 2);
    ggml_backend_tensor_set(c->vt, vt, 0, nkv * 2);
    size_t nm = (size_t)(n_kv * NQ * NS);
    uint16_t *m16 = pa_xmalloc(nm * 2 + 2);
    float *m32 = pa_xmalloc(nm * sizeof *m32 + 4);
    for (size_t i = 0; i < nm; i++) {
        size_t row = i / (size_t)n_kv, p = i % (size_t)n_kv;
        m32[i] = p % 3 == 2 && p != row % NQ ? -INFINITY : 0.0f;
    }
    if (nm && mask_extra != 0.0f)
        m32[0] = mask_extra;
    for (size_t i = 0; i < nm; i++)
        m16[i] = f16(m32[i]);
    ggml_backend_tensor_set(c->mask16, m16, 0, nm * 2);
    ggml_backend_tensor_set(c->mask32, m32, 0, nm * sizeof *m32);
    free(qf), free(kvf), free(k), free(v), free(vt), free(m16), free(m32);
    return true;
}

static void attn_case_free(struct attn_case *c)
{
    if (c->buf)
        ggml_backend_buffer_free(c->buf);
    ggml_free(c->ctx);
}

/* out = res computed on `be` (the graph of res, its nodes in a CPU buffer: oc's tensors are
 * placed there at the first run, *rbuf, freed by the caller); false when the backend failed
 * (recorded). */
static bool run_graph(ggml_backend_t be, struct ggml_context *oc, ggml_backend_buffer_t *rbuf,
                      struct ggml_tensor *res, float *out, const char *what)
{
    if (!*rbuf)
        *rbuf = ggml_backend_alloc_ctx_tensors_from_buft(oc, pa_buft_cpu);
    struct ggml_context *gctx = pa_ctx_new(0, 1);
    struct ggml_cgraph *g = ggml_new_graph(gctx);
    ggml_build_forward_expand(g, res);
    enum ggml_status s = *rbuf ? pa_compute(be, g) : GGML_STATUS_ALLOC_FAILED;
    if (s == GGML_STATUS_SUCCESS)
        ggml_backend_tensor_get(res, out, 0, ggml_nbytes(res));
    else
        pa_fail("%s on %s: %s", what, ggml_backend_name(be), pa_status_name(s));
    ggml_free(gctx);
    return s == GGML_STATUS_SUCCESS;
}

static void free_results(struct ggml_context *oc, ggml_backend_buffer_t rbuf)
{
    if (rbuf)
        ggml_backend_buffer_free(rbuf);
    ggml_free(oc);
}

static struct ggml_tensor *flash(struct ggml_context *oc, const struct attn_case *c, float bias,
                                 float cap)
{
    return ggml_flash_attn_ext(oc, c->q, c->k, c->v, c->mask16, 0.125f, bias, cap);
}

/* llama.cpp's graph without flash attention; `reuse`: kq is also an output of the graph
 * (read elsewhere: GEMM_RVV must leave the nodes to ggml); `cont`: V^T made contiguous from V,
 * as llama.cpp does when its cache was made for flash attention (-fa auto on one board), the
 * CONT node into *cont. */
static struct ggml_tensor *unfused(struct ggml_context *oc, const struct attn_case *c,
                                   struct ggml_tensor *mask, float bias, bool reuse,
                                   struct ggml_tensor **cont)
{
    struct ggml_tensor *vt = c->vt;
    if (cont)
        vt = *cont = ggml_cont(oc, ggml_transpose(oc, c->v));
    struct ggml_tensor *kq = ggml_mul_mat(oc, c->k, c->q);
    struct ggml_tensor *p = ggml_soft_max_ext(oc, kq, mask, 0.125f, bias);
    struct ggml_tensor *kqv = ggml_mul_mat(oc, vt, p);
    if (reuse)
        ggml_set_output(kq);
    return kqv;
}

static size_t count_bits_differ(const float *a, const float *b, size_t n)
{
    size_t differ = 0;
    for (size_t i = 0; i < n; i++)
        differ += memcmp(&a[i], &b[i], sizeof *a) != 0;
    return differ;
}

/* The unfused chain in FLASH_ATTN_EXT's layout [D, HQ, NQ, NS] (kqv is [D, NQ, HQ, NS]). */
static void permuted(const float *kqv, float *out)
{
    for (int64_t s = 0; s < NS; s++)
        for (int64_t h = 0; h < HQ; h++)
            for (int64_t i = 0; i < NQ; i++)
                memcpy(out + ((s * NQ + i) * HQ + h) * D, kqv + ((s * HQ + h) * NQ + i) * D,
                       D * sizeof *out);
}

static void served(enum ggml_type kv_type, float bias, float cap, const char *name)
{
    pa_case_begin();
    struct attn_case c;
    const size_t n = (size_t)(D * HQ * NQ * NS);
    float *y = pa_xmalloc(n * 4), *ref = pa_xmalloc(n * 4), *chain = pa_xmalloc(n * 4),
          *chain_cpu = pa_xmalloc(n * 4), *flat = pa_xmalloc(n * 4);
    if (attn_case_new(&c, 45, kv_type, 0.0f)) {
        struct ggml_context *oc = pa_ctx_new(16, 0);
        ggml_backend_buffer_t rbuf = NULL;
        struct ggml_tensor *fa = flash(oc, &c, bias, cap);
        if (!ggml_backend_dev_supports_op(pa_dev_rvv, fa))
            pa_fail("GEMM_RVV does not support this FLASH_ATTN_EXT");
        else if (run_graph(pa_be_rvv, oc, &rbuf, fa, y, "FLASH_ATTN_EXT") &&
                 run_graph(pa_be_cpu, oc, &rbuf, fa, ref, "FLASH_ATTN_EXT"))
            pa_expect_close("FLASH_ATTN_EXT", y, ref, n, D);
        free_results(oc, rbuf);
        /* Without flash attention (no soft-capping there: llama.cpp adds ops for it, which
         * GEMM_RVV leaves to ggml): one gemm_rvv_attention call, so FLASH_ATTN_EXT's bits. */
        if (cap == 0.0f) {
            static const char *const whats[3] = {
                "the unfused chain, F16 mask", "the unfused chain, F32 mask",
                "the unfused chain, V^T a CONT of V"};
            for (int m = 0; m < 3; m++) {
                oc = pa_ctx_new(16, 0);
                struct ggml_tensor *cont = NULL;
                struct ggml_tensor *kqv = unfused(oc, &c, m == 1 ? c.mask32 : c.mask16, bias,
                                                  false, m == 2 ? &cont : NULL);
                const char *what = whats[m];
                /* the CONT is not run on GEMM_RVV (the call reads V itself): its bytes stay */
                rbuf = ggml_backend_alloc_ctx_tensors_from_buft(oc, pa_buft_cpu);
                uint8_t *before = cont ? pa_xmalloc(ggml_nbytes(cont)) : NULL;
                if (cont && rbuf) {
                    memset(before, 0x5a, ggml_nbytes(cont));
                    ggml_backend_tensor_set(cont, before, 0, ggml_nbytes(cont));
                }
                bool ran = run_graph(pa_be_rvv, oc, &rbuf, kqv, chain, what);
                if (ran && cont) {
                    uint8_t *after = pa_xmalloc(ggml_nbytes(cont));
                    ggml_backend_tensor_get(cont, after, 0, ggml_nbytes(cont));
                    if (memcmp(before, after, ggml_nbytes(cont)) != 0)
                        pa_fail("%s: GEMM_RVV ran the CONT (a copy of V) the call does without",
                                what);
                    free(after);
                }
                free(before);
                if (ran && run_graph(pa_be_cpu, oc, &rbuf, kqv, chain_cpu, what)) {
                    pa_expect_close(what, chain, chain_cpu, n, D);
                    permuted(chain, flat);
                    size_t differ = count_bits_differ(flat, y, n);
                    if (differ)
                        pa_fail("%s: %zu of %zu outputs are not GEMM_RVV's FLASH_ATTN_EXT bits "
                                "(the chain was not computed by gemm_rvv_attention)",
                                what, differ, n);
                }
                free_results(oc, rbuf);
            }
        }
    }
    attn_case_free(&c);
    free(y), free(ref), free(chain), free(chain_cpu), free(flat);
    pa_case_end("attention %s: FLASH_ATTN_EXT and the unfused chain on GEMM_RVV", name);
}

/* What GEMM_RVV leaves to ggml: the chain's nodes then give the CPU backend's bits. */
static void left_to_ggml(void)
{
    pa_case_begin();
    struct attn_case c;
    const size_t n = (size_t)(D * HQ * NQ * NS);
    float *y = pa_xmalloc(n * 4), *ref = pa_xmalloc(n * 4);
    /* -0.1 in the F32 mask: F16 does not hold it, the call cannot take it */
    if (attn_case_new(&c, 45, GGML_TYPE_F16, -0.1f)) {
        static const char *const what[3] = {"an F32 mask F16 does not hold",
                                            "kq read by another node",
                                            "an F32 mask F16 does not hold, V^T a CONT of V"};
        for (int i = 0; i < 3; i++) {
            struct ggml_context *oc = pa_ctx_new(16, 0);
            ggml_backend_buffer_t rbuf = NULL;
            struct ggml_tensor *cont = NULL;
            struct ggml_tensor *res = unfused(oc, &c, i == 1 ? c.mask16 : c.mask32, 0.0f, i == 1,
                                              i == 2 ? &cont : NULL);
            if (run_graph(pa_be_rvv, oc, &rbuf, res, y, what[i]) &&
                run_graph(pa_be_cpu, oc, &rbuf, res, ref, what[i])) {
                size_t differ = count_bits_differ(y, ref, n);
                if (differ)
                    pa_fail("%s: %zu of %zu outputs are not the CPU backend's bits (GEMM_RVV "
                            "computed a chain it must leave to ggml)", what[i], differ, n);
            }
            free_results(oc, rbuf);
        }
    }
    attn_case_free(&c);
    free(y), free(ref);
    pa_case_end("attention: chains it cannot serve are computed as ggml computes them");
}

/* FLASH_ATTN_EXT GEMM_RVV declines (the call refuses them, or they are not its kind), and an
 * empty cache, which the call refuses and GEMM_RVV answers with ggml's zeros. */
static void declined(void)
{
    pa_case_begin();
    struct ggml_context *ctx = pa_ctx_new(32, 0);
    struct ggml_tensor *q = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 64, 3, 4, 1);
    struct ggml_tensor *k = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 64, 32, 2, 1);
    struct ggml_tensor *kq8 = ggml_new_tensor_4d(ctx, GGML_TYPE_Q8_0, 64, 32, 2, 1);
    struct ggml_tensor *v48 = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 48, 32, 2, 1);
    struct ggml_tensor *q36 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 36, 3, 4, 1);
    struct ggml_tensor *k36 = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 36, 32, 2, 1);
    struct ggml_tensor *mask = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 32, 3, 1, 1);
    struct ggml_tensor *mask_heads = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 32, 3, 4, 1);
    struct ggml_tensor *sinks = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    struct ggml_context *oc = pa_ctx_new(16, 0);
    struct ggml_tensor *with_sinks = ggml_flash_attn_ext(oc, q, k, k, mask, 0.125f, 0, 0);
    ggml_flash_attn_ext_add_sinks(with_sinks, sinks);
    struct {
        const char *name;
        struct ggml_tensor *op;
    } no[] = {
        {"attention sinks", with_sinks},
        {"a Q8_0 cache", ggml_flash_attn_ext(oc, q, kq8, kq8, mask, 0.125f, 0, 0)},
        {"V's head dim 48 beside K's 64", ggml_flash_attn_ext(oc, q, k, v48, mask, 0.125f, 0, 0)},
        {"head dim 36 (not a multiple of 8)", ggml_flash_attn_ext(oc, q36, k36, k36, mask, 0.125f, 0, 0)},
        {"a mask per head", ggml_flash_attn_ext(oc, q, k, k, mask_heads, 0.125f, 0, 0)},
    };
    for (size_t i = 0; i < sizeof no / sizeof *no; i++) {
        bool cpu = ggml_backend_dev_supports_op(pa_dev_cpu, no[i].op);
        if (ggml_backend_dev_supports_op(pa_dev_rvv, no[i].op))
            pa_fail("GEMM_RVV claims FLASH_ATTN_EXT with %s (CPU: %d)", no[i].name, cpu);
    }
    if (!ggml_backend_dev_supports_op(pa_dev_rvv, ggml_flash_attn_ext(oc, q, k, k, mask, 0.125f, 0, 0)))
        pa_fail("GEMM_RVV declines FLASH_ATTN_EXT of an F16 cache");
    ggml_free(oc);
    ggml_free(ctx);

    /* n_kv = 0: zeros, as ggml writes them, over outputs that held NaN */
    struct attn_case c;
    if (attn_case_new(&c, 0, GGML_TYPE_F16, 0.0f)) {
        const size_t n = (size_t)(D * HQ * NQ * NS);
        float *y = pa_xmalloc(n * 4);
        oc = pa_ctx_new(16, 0);
        struct ggml_tensor *fa = ggml_flash_attn_ext(oc, c.q, c.k, c.v, NULL, 0.125f, 0, 0);
        struct ggml_context *gctx = pa_ctx_new(0, 1);
        struct ggml_cgraph *g = ggml_new_graph(gctx);
        ggml_build_forward_expand(g, fa);
        ggml_backend_buffer_t rbuf = ggml_backend_alloc_ctx_tensors_from_buft(oc, pa_buft_cpu);
        if (rbuf) {
            for (size_t i = 0; i < n; i++)
                y[i] = NAN;
            ggml_backend_tensor_set(fa, y, 0, n * 4);
            enum ggml_status s = pa_compute(pa_be_rvv, g);
            ggml_backend_tensor_get(fa, y, 0, n * 4);
            size_t nonzero = 0;
            for (size_t i = 0; i < n; i++)
                nonzero += y[i] != 0.0f;
            if (s != GGML_STATUS_SUCCESS || nonzero)
                pa_fail("n_kv = 0: GEMM_RVV returned %s, %zu of %zu outputs not zero",
                        pa_status_name(s), nonzero, n);
            ggml_backend_buffer_free(rbuf);
        }
        ggml_free(gctx);
        ggml_free(oc);
        free(y);
    }
    attn_case_free(&c);
    pa_case_end("attention: declines sinks, other caches, other head dims, masks per head; "
                "an empty cache gives zeros");
}

void group_attention(void)
{
    served(GGML_TYPE_F16, 0.0f, 0.0f, "F16 cache");
    served(GGML_TYPE_BF16, 0.0f, 0.0f, "BF16 cache");
    served(GGML_TYPE_F16, 8.0f, 0.0f, "F16 cache, ALiBi");
    served(GGML_TYPE_F16, 0.0f, 30.0f, "F16 cache, soft-capping");
    left_to_ggml();
    declined();
}
