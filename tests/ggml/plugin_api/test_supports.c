/* plugin_api's groups for plugins/ggml/supports.c: supports_op against the CPU backend's. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- group supports: GEMM_RVV's supports_op against the CPU's ---- */

void group_supports(void)
{
    pa_case_begin();
    struct ggml_context *ctx = pa_ctx_new(64, 0);
    struct ggml_tensor *a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 64, 8);
    struct ggml_tensor *b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 64, 8);
    struct ggml_tensor *a3 = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 16, 4, 8);
    struct ggml_tensor *nw = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 64);
    struct ggml_tensor *ids = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 8);
    struct ggml_tensor *pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 8);
    struct ggml_tensor *mask = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 8, 8);
    struct ggml_tensor *wf16 = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 64, 32);
    struct ggml_tensor *wq8 = ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, 64, 32);
    struct ggml_tensor *wbf = ggml_new_tensor_2d(ctx, GGML_TYPE_BF16, 64, 32); /* CPU buffer */
    struct ggml_tensor *bh = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 64, 8);
    ggml_backend_buffer_t buf = pa_alloc_in(ctx, pa_buft_cpu, true);
    /* A planned weight in a GEMM_RVV buffer (n16_k256 of the test shapes). */
    struct weight w;
    bool have_w = pa_weight_new(&w, 16, 256, "w_packed");
    if (buf && have_w) {
        struct ggml_context *oc = pa_ctx_new(64, 0);
        struct {
            const char *name;
            struct ggml_tensor *op;
        } same[] = {
            {"ADD", ggml_add(oc, a, b)},
            {"MUL by a norm weight", ggml_mul(oc, a, nw)},
            {"RMS_NORM", ggml_rms_norm(oc, a, 1e-5f)},
            {"SCALE", ggml_scale(oc, a, 0.5f)},
            {"SILU", ggml_silu(oc, a)},
            {"SOFT_MAX_EXT", ggml_soft_max_ext(oc, ggml_new_tensor_2d(oc, GGML_TYPE_F32, 8, 8), mask, 0.25f, 0.0f)},
            {"ROPE", ggml_rope_ext(oc, a3, pos, NULL, 16, 0, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f)},
            {"GET_ROWS of a CPU-buffer F32 table", ggml_get_rows(oc, a, ids)},
            {"CPY F32 -> F16", ggml_cpy(oc, a, bh)},
            {"CONT of a transpose", ggml_cont(oc, ggml_transpose(oc, a))},
            {"MUL_MAT F32 x F32", ggml_mul_mat(oc, ggml_new_tensor_2d(oc, GGML_TYPE_F32, 64, 32), a)},
            {"MUL_MAT F16 x F32", ggml_mul_mat(oc, wf16, a)},
            {"MUL_MAT Q8_0 x F32", ggml_mul_mat(oc, wq8, a)},
            {"MUL_MAT of a BF16 weight in a CPU buffer", ggml_mul_mat(oc, wbf, a)},
            /* One the CPU declines: F32 weights by F16 activations. */
            {"MUL_MAT F32 x F16", ggml_mul_mat(oc, ggml_new_tensor_2d(oc, GGML_TYPE_F32, 64, 32), bh)},
        };
        char only_cpu[400] = "", only_rvv[400] = "";
        size_t len_cpu = 0, len_rvv = 0;
        for (size_t i = 0; i < sizeof same / sizeof *same; i++) {
            bool cpu = ggml_backend_dev_supports_op(pa_dev_cpu, same[i].op);
            bool rvv = ggml_backend_dev_supports_op(pa_dev_rvv, same[i].op);
            if (pa_verbose)
                fprintf(stderr, "plugin_api: supports_op %s: CPU %d, GEMM_RVV %d\n", same[i].name,
                        cpu, rvv);
            char *list = cpu ? only_cpu : only_rvv;
            size_t *len = cpu ? &len_cpu : &len_rvv;
            if (cpu != rvv && *len < sizeof only_cpu - 50)
                *len += (size_t)snprintf(list + *len, sizeof only_cpu - *len, "%s%s",
                                         *len ? ", " : "", same[i].name);
        }
        if (only_cpu[0])
            pa_fail("supports_op false where the CPU's is true: %s", only_cpu);
        if (only_rvv[0])
            pa_fail("supports_op true where the CPU's is false: %s", only_rvv);
        /* The packed weight: its MUL_MAT and GET_ROWS yes (the rows are read out of it: a
         * tied embedding held once), any other op reading it no. */
        struct ggml_tensor *x = ggml_new_tensor_2d(oc, GGML_TYPE_F32, 256, 4);
        struct ggml_tensor *mm = ggml_mul_mat(oc, w.t, x);
        if (!ggml_backend_dev_supports_op(pa_dev_rvv, mm))
            pa_fail("GEMM_RVV does not support MUL_MAT on a weight in its own buffer");
        struct ggml_tensor *ids16 = ggml_new_tensor_1d(oc, GGML_TYPE_I32, 4);
        if (!ggml_backend_dev_supports_op(pa_dev_rvv, ggml_get_rows(oc, w.t, ids16)))
            pa_fail("GEMM_RVV does not support GET_ROWS of a weight packed in its own buffer");
        struct {
            const char *name;
            struct ggml_tensor *op;
        } packed[] = {
            {"CPY to F32", ggml_cpy(oc, w.t, ggml_new_tensor_2d(oc, GGML_TYPE_F32, 256, 16))},
            {"SCALE", ggml_scale(oc, w.t, 2.0f)},
            {"MUL_MAT with it as the activations", ggml_mul_mat(oc, ggml_new_tensor_2d(oc, GGML_TYPE_BF16, 256, 8), w.t)},
        };
        for (size_t i = 0; i < sizeof packed / sizeof *packed; i++)
            if (ggml_backend_dev_supports_op(pa_dev_rvv, packed[i].op))
                pa_fail("GEMM_RVV claims %s reading a weight in its own (packed) buffer",
                        packed[i].name);
        /* llama.cpp's placement asks the same with the weight not yet placed, in a buffer of
         * size 0 (ggml makes it without the buffer type's functions): a planned BF16 weight
         * would be packed there, so only its MUL_MAT may take it there (and its GET_ROWS once
         * its MUL_MAT was asked for: group rows). */
        struct ggml_tensor *probe = ggml_new_tensor_2d(oc, GGML_TYPE_BF16, 256, 16);
        probe->buffer = ggml_backend_buft_alloc_buffer(ggml_backend_dev_buffer_type(pa_dev_rvv), 0);
        if (ggml_backend_dev_supports_op(pa_dev_rvv, ggml_get_rows(oc, probe, ids16)))
            pa_fail("GEMM_RVV claims GET_ROWS of a planned weight about to be placed (packed) in its buffer");
        if (!ggml_backend_dev_supports_op(pa_dev_rvv, ggml_mul_mat(oc, probe, x)))
            pa_fail("GEMM_RVV does not support MUL_MAT on a planned weight about to be placed in its buffer");
        ggml_backend_buffer_free(probe->buffer);
        probe->buffer = NULL;
        ggml_free(oc);
    }
    if (buf)
        ggml_backend_buffer_free(buf);
    pa_weight_free(&w);
    ggml_free(ctx);
    pa_case_end("supports_op agrees with the CPU's, and refuses other ops on packed weights");
}

/* ---- group kv_cache: llama.cpp's KV cache in GEMM_RVV's buffer, its layers' device's ---- */

void group_kv_cache(void)
{
    pa_case_begin();
    struct ggml_context *ctx = pa_ctx_new(8, 0);
    /* A BF16 cache of a planned N x K (n16_k256), and an F16 one. */
    struct ggml_tensor *kb = ggml_new_tensor_2d(ctx, GGML_TYPE_BF16, 256, 16);
    struct ggml_tensor *kf = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 64, 32);
    ggml_set_name(kb, "cache_k_l0");
    ggml_set_name(kf, "cache_v_l0");
    size_t bytes = ggml_nbytes(kb), alloc = ggml_backend_buft_get_alloc_size(pa_buft_rvv, kb);
    if (alloc != bytes)
        pa_fail("a BF16 KV cache of a planned shape takes %zu bytes in GEMM_RVV's buffer, not its %zu",
                alloc, bytes);
    ggml_backend_buffer_t buf = pa_alloc_in(ctx, pa_buft_rvv, false);
    if (buf) {
        /* Graph nodes write the cache where it lies: ggml's bytes, never packed. */
        uint16_t *bits = pa_xmalloc(bytes);
        pa_fill_bf16(bits, bytes / sizeof *bits, 1.0f);
        ggml_backend_tensor_set(kb, bits, 0, bytes);
        if (memcmp(kb->data, bits, bytes) != 0)
            pa_fail("the BF16 KV cache's memory in GEMM_RVV's buffer is not the bytes set (packed?)");
        free(bits);
        /* -fa off's products over the cache: GEMM_RVV takes them (ggml's CPU backend computes
         * them on its memory), as the CPU device takes them in host memory. */
        struct ggml_context *oc = pa_ctx_new(8, 0);
        struct ggml_tensor *q = ggml_new_tensor_2d(oc, GGML_TYPE_F32, 64, 4);
        struct ggml_tensor *kq = ggml_mul_mat(oc, kf, q);
        if (!ggml_backend_dev_supports_op(pa_dev_rvv, kq))
            pa_fail("GEMM_RVV does not take a product over an F16 KV cache in its buffer");
        /* The same tensor as a model's weight (not the cache): left to ggml's own buffers. */
        struct ggml_context *wc = pa_ctx_new(2, 0);
        struct ggml_tensor *wf16 = ggml_new_tensor_2d(wc, GGML_TYPE_F16, 64, 32);
        ggml_set_name(wf16, "blk.0.attn_v.weight");
        ggml_backend_buffer_t wbuf = pa_alloc_in(wc, pa_buft_rvv, true);
        if (wbuf && ggml_backend_dev_supports_op(pa_dev_rvv, ggml_mul_mat(oc, wf16, q)))
            pa_fail("GEMM_RVV takes a product on an F16 weight in its buffer");
        if (wbuf)
            ggml_backend_buffer_free(wbuf);
        ggml_free(wc);
        ggml_free(oc);
        ggml_backend_buffer_free(buf);
    }
    ggml_free(ctx);
    pa_case_end("the KV cache in GEMM_RVV's buffer: ggml's bytes, its products taken");
}
