/* plugin_api's groups for plugins/ggml/rows.c: GET_ROWS of a packed weight, the CPU backend's
 * bits. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- group rows: GET_ROWS of a packed weight (a tied embedding: the lm_head and the table) ---- */

/* GET_ROWS of `count` rows (indices idx) of w, a weight in a GEMM_RVV buffer holding `bytes`,
 * on GEMM_RVV and, of a copy of `bytes` in a CPU buffer, on the CPU backend: the same bits. */
static void check_rows(struct ggml_tensor *w, const void *bytes, const int32_t *idx, int64_t count,
                       const char *where)
{
    int64_t k = w->ne[0], n = w->ne[1];
    struct ggml_context *ctx = pa_ctx_new(8, 2);
    struct ggml_tensor *wc = ggml_new_tensor_2d(ctx, w->type, k, n);
    ggml_backend_buffer_t wbuf = pa_alloc_in(ctx, pa_buft_cpu, true);
    if (!wbuf) {
        ggml_free(ctx);
        return;
    }
    ggml_backend_tensor_set(wc, bytes, 0, ggml_nbytes(wc));
    struct ggml_context *actx = pa_ctx_new(8, 0);
    struct ggml_tensor *ids = ggml_new_tensor_1d(actx, GGML_TYPE_I32, count);
    struct ggml_tensor *rows = ggml_get_rows(actx, w, ids);
    struct ggml_tensor *rows_cpu = ggml_get_rows(actx, wc, ids);
    ggml_backend_buffer_t abuf = pa_alloc_in(actx, pa_buft_cpu, false);
    if (abuf) {
        ggml_backend_tensor_set(ids, idx, 0, ggml_nbytes(ids));
        size_t out_bytes = ggml_nbytes(rows);
        uint32_t *got = pa_xmalloc(out_bytes), *ref = pa_xmalloc(out_bytes);
        if (!ggml_backend_dev_supports_op(pa_dev_rvv, rows)) {
            pa_fail("%s: GEMM_RVV does not take GET_ROWS of its packed weight", where);
        } else {
            struct ggml_cgraph *g = ggml_new_graph(ctx), *gc = ggml_new_graph(ctx);
            ggml_build_forward_expand(g, rows);
            ggml_build_forward_expand(gc, rows_cpu);
            enum ggml_status st = pa_compute(pa_be_rvv, g), sc = pa_compute(pa_be_cpu, gc);
            if (st != GGML_STATUS_SUCCESS || sc != GGML_STATUS_SUCCESS) {
                pa_fail("%s: GET_ROWS returned %s on GEMM_RVV, %s on the CPU", where,
                        pa_status_name(st), pa_status_name(sc));
            } else {
                ggml_backend_tensor_get(rows, got, 0, out_bytes);
                ggml_backend_tensor_get(rows_cpu, ref, 0, out_bytes);
                for (size_t i = 0; i < out_bytes / 4; i++)
                    if (got[i] != ref[i]) {
                        pa_fail("%s: row %zu (weight row %d), element %zu: 0x%08x on GEMM_RVV, "
                                "0x%08x on the CPU", where, i / (size_t)k,
                             (int)idx[i / (size_t)k], i % (size_t)k, got[i], ref[i]);
                        break;
                    }
            }
        }
        free(got);
        free(ref);
        ggml_backend_buffer_free(abuf);
    }
    ggml_free(actx);
    ggml_backend_buffer_free(wbuf);
    ggml_free(ctx);
}

/* Row indices: the first, the last, one twice, the rest random. */
static void row_indices(int32_t *idx, int64_t count, int64_t n)
{
    for (int64_t i = 0; i < count; i++)
        idx[i] = (int32_t)(pa_rng_next() % (uint64_t)n);
    idx[0] = 0;
    idx[1] = (int32_t)(n - 1);
    idx[2] = idx[3];
}

/* One case: 37 rows of a packed weight of `type` holding `bytes`, against the CPU's. */
static void rows_case(enum ggml_type type, int64_t n, int64_t k, const void *bytes,
                      const char *what)
{
    int32_t idx[37];
    struct weight w;
    pa_case_begin();
    bool made = type == GGML_TYPE_BF16 ? pa_weight_new(&w, n, k, "token_embd.weight")
                                       : pa_q8_weight_new(&w, n, k, "token_embd.weight");
    if (made) {
        ggml_backend_tensor_set(w.t, bytes, 0, ggml_nbytes(w.t));
        row_indices(idx, 37, n);
        check_rows(w.t, bytes, idx, 37, what);
    }
    pa_weight_free(&w);
    pa_case_end("GET_ROWS of a packed %s weight: the CPU backend's bits", what);
}

void group_rows(void)
{
    const int64_t n = 896, k = 896, qn = 384, qk = 1152;
    uint16_t *bits = pa_xmalloc((size_t)(n * k) * sizeof *bits);
    pa_fill_special_bits(bits, (size_t)(n * k));
    rows_case(GGML_TYPE_BF16, n, k, bits, "BF16 (special values)");
    free(bits);
    size_t qbytes = (size_t)(qn * qk / 32) * PA_Q8_BLOCK_BYTES;
    uint8_t *b = pa_xmalloc(qbytes);
    pa_fill_q8_0(b, qbytes / PA_Q8_BLOCK_BYTES, true);
    rows_case(GGML_TYPE_Q8_0, qn, qk, b, "Q8_0 (special scales)");
    free(b);

    /* llama.cpp places a weight by asking supports_op with it in an empty buffer of the
     * type. GET_ROWS of a weight GEMM_RVV would pack is taken only once it was asked to
     * multiply that weight (a tied embedding, also the lm_head: then held once, packed); an
     * untied table stays where it is. */
    pa_case_begin();
    struct ggml_context *ctx = pa_ctx_new(8, 0);
    struct ggml_tensor *t = ggml_new_tensor_2d(ctx, GGML_TYPE_BF16, k, n);
    ggml_set_name(t, "tied_embd.weight");
    struct ggml_tensor *ids = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 8);
    struct ggml_tensor *x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, 8);
    struct ggml_tensor *op = ggml_get_rows(ctx, t, ids), *mm = ggml_mul_mat(ctx, t, x);
    t->buffer = ggml_backend_buft_alloc_buffer(pa_buft_rvv, 0);
    if (ggml_backend_dev_supports_op(pa_dev_rvv, op))
        pa_fail("GET_ROWS of an unplaced BF16 weight is taken before any product on it");
    else if (!ggml_backend_dev_supports_op(pa_dev_rvv, mm))
        pa_fail("MUL_MAT of an unplaced BF16 weight with a plan is declined");
    else if (!ggml_backend_dev_supports_op(pa_dev_rvv, op))
        pa_fail("GET_ROWS of an unplaced BF16 weight GEMM_RVV multiplies is declined");
    ggml_backend_buffer_free(t->buffer);
    t->buffer = NULL;
    ggml_free(ctx);
    pa_case_end("supports_op takes GET_ROWS of an unplaced weight once asked to multiply it");
}
