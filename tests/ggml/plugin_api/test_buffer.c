/* plugin_api's groups for plugins/ggml/buffer.c: the weight buffer: what is set reads back, a
 * weight held once, writes through views, memset, clear and reset. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- group readback: ggml_backend_tensor_get returns the bits set ---- */

void group_readback(void)
{
    /* K = 33: rows of 66 bytes, so element offsets that are not row starts are easy to hit. */
    const int64_t n = 64, k = 33;
    const size_t count = (size_t)(n * k);
    uint16_t *bits = pa_xmalloc(count * sizeof *bits);
    struct weight w;

    /* 64 x 33, and 1057 x 129: a last column strip and a last K pair of their own. */
    static const int64_t shapes[2][2] = {{64, 33}, {1057, 129}};
    for (int sh = 0; sh < 2; sh++) {
        const int64_t sn = shapes[sh][0], sk = shapes[sh][1];
        const size_t scount = (size_t)(sn * sk);
        uint16_t *sbits = pa_xmalloc(scount * sizeof *sbits);
        pa_case_begin();
        if (pa_weight_new(&w, sn, sk, "w_bits")) {
            pa_fill_special_bits(sbits, scount);
            ggml_backend_tensor_set(w.t, sbits, 0, scount * sizeof *sbits);
            pa_expect_bits("whole set, whole get", w.t, sbits, 0, scount);
            /* Set again (the same tensor, other bits): the new ones read back. */
            pa_fill_special_bits(sbits, scount);
            ggml_backend_tensor_set(w.t, sbits, 0, scount * sizeof *sbits);
            pa_expect_bits("second whole set, whole get", w.t, sbits, 0, scount);
        }
        pa_weight_free(&w);
        free(sbits);
        pa_case_end("read-back special bits (NaN payloads, +-0, +-inf, subnormals) N=%lld K=%lld",
                    (long long)sn, (long long)sk);
    }

    pa_case_begin();
    if (pa_weight_new(&w, n, k, "w_chunks")) {
        /* Chunks of odd element counts at offsets that are not row starts, written out of
         * order: the last chunk is not the last write. */
        static const size_t cuts[] = {0, 37, 138, 139, 503, 1000, 1001, 1555, 2112};
        const size_t n_chunks = sizeof cuts / sizeof *cuts - 1;
        static const size_t order[] = {3, 7, 0, 5, 2, 6, 4, 1};
        pa_fill_special_bits(bits, count);
        for (size_t c = 0; c < n_chunks; c++) {
            size_t i = order[c], from = cuts[i], to = cuts[i + 1];
            ggml_backend_tensor_set(w.t, bits + from, from * 2, (to - from) * 2);
            /* Each chunk reads back at once, before the tensor is whole. */
            char where[96];
            snprintf(where, sizeof where, "chunk %zu of 8 (elements %zu-%zu) right after its set",
                     c + 1, from, to - 1);
            pa_expect_bits(where, w.t, bits, from, to - from);
        }
        pa_expect_bits("set in 8 chunks out of order, whole get", w.t, bits, 0, count);
        /* Partial reads at odd offsets. */
        static const size_t reads[][2] = {{1, 1}, {13, 77}, {32, 3}, {65, 66}, {2047, 65}, {2111, 1}};
        for (size_t r = 0; r < sizeof reads / sizeof *reads; r++) {
            char where[96];
            snprintf(where, sizeof where, "partial get of %zu elements at element %zu",
                     reads[r][1], reads[r][0]);
            pa_expect_bits(where, w.t, bits, reads[r][0], reads[r][1]);
        }
        /* Overwrite a middle range only, then everything reads as set. */
        uint16_t patch[301];
        pa_fill_special_bits(patch, 301);
        memcpy(bits + 777, patch, sizeof patch);
        ggml_backend_tensor_set(w.t, patch, 777 * 2, sizeof patch);
        pa_expect_bits("after a 301-element set at element 777", w.t, bits, 0, count);
        /* Finite values in chunks: the product follows them. */
        pa_fill_bf16(bits, count, 0.05f);
        for (size_t c = 0; c < n_chunks; c++) {
            size_t i = order[n_chunks - 1 - c], from = cuts[i], to = cuts[i + 1];
            ggml_backend_tensor_set(w.t, bits + from, from * 2, (to - from) * 2);
        }
        pa_expect_weight("finite values set in chunks", w.t, bits, 5);
    }
    pa_weight_free(&w);
    pa_case_end("read-back of chunked sets at odd offsets, partial gets");
    free(bits);
}

/* ---- group memory: a weight is held once ---- */

/* Bytes the process holds from malloc (glibc's count: the heap's blocks in use and the
 * blocks it maps for large requests), which is where ggml and the plugin allocate. */
static size_t malloc_in_use(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

void group_memory(void)
{
    const int64_t n = 4864, k = 896; /* 8.7 MB of BF16 */
    pa_case_begin();
    uint16_t *bits = pa_xmalloc((size_t)(n * k) * sizeof *bits);
    pa_fill_bf16(bits, (size_t)(n * k), 0.05f);
    size_t before = malloc_in_use();
    struct weight w;
    if (pa_weight_new(&w, n, k, "w")) {
        ggml_backend_tensor_set(w.t, bits, 0, ggml_nbytes(w.t));
        size_t held = malloc_in_use() - before, size = ggml_nbytes(w.t);
        size_t alloc = ggml_backend_buft_get_alloc_size(pa_buft_rvv, w.t);
        if (pa_verbose)
            fprintf(stderr, "plugin_api: memory: %zu bytes of BF16: alloc size %zu, %zu held\n",
                    size, alloc, held);
        /* The packed form pads columns to a strip: a few per cent, not a second copy. */
        if ((double)held > 1.25 * (double)size)
            pa_fail("a %zu-byte BF16 weight set into a GEMM_RVV buffer holds %zu bytes (%.2f x; "
                    "the buffer type's alloc size %zu): a second copy", size, held,
                 (double)held / (double)size, alloc);
        pa_check_product(w.t, bits, 1, "the weight");
    }
    pa_weight_free(&w);
    free(bits);
    pa_case_end("memory: a weight in a GEMM_RVV buffer is held once");
}

/* ---- group view: a write through a view of some rows ---- */

static void view_body(struct weight *w, uint16_t *bits)
{
    const int64_t k = w->t->ne[0], row0 = 3, rows = 5;
    /* Used once, so that a packed or cached form exists before the view write. */
    pa_check_product(w->t, bits, 4, "before the view write");
    struct ggml_context *vctx = pa_ctx_new(2, 0);
    struct ggml_tensor *v = ggml_view_2d(vctx, w->t, k, rows, w->t->nb[1],
                                         (size_t)row0 * w->t->nb[1]);
    ggml_set_name(v, "w_rows_3_to_7");
    if (!v->buffer && ggml_backend_view_init(v) != GGML_STATUS_SUCCESS)
        pa_fail("ggml_backend_view_init failed");
    pa_fill_bf16(bits + row0 * k, (size_t)(rows * k), 0.05f);
    ggml_backend_tensor_set(v, bits + row0 * k, 0, ggml_nbytes(v));
    pa_expect_weight("after setting rows 3-7 through a view", w->t, bits, 4);
    /* 100 elements through a 1-D view that starts mid-row. */
    struct ggml_tensor *v1 = ggml_view_1d(vctx, w->t, 100, (size_t)(10 * k + 37) * 2);
    if (!v1->buffer && ggml_backend_view_init(v1) != GGML_STATUS_SUCCESS)
        pa_fail("ggml_backend_view_init failed");
    pa_fill_bf16(bits + 10 * k + 37, 100, 0.05f);
    ggml_backend_tensor_set(v1, bits + 10 * k + 37, 0, 200);
    pa_expect_weight("after a 1-D view set at row 10 col 37", w->t, bits, 4);
    ggml_free(vctx);
}

void group_view(void)
{
    pa_weight_case("view write", 16, 256, view_body);
}

/* ---- group memset ---- */

static void memset_body(struct weight *w, uint16_t *bits)
{
    const size_t count = (size_t)ggml_nelements(w->t);
    pa_check_product(w->t, bits, 3, "before memset");
    /* 0x3c3c = 0.0115 in BF16: elements 101 to 101 + 333, not row-aligned. */
    ggml_backend_tensor_memset(w->t, 0x3c, 101 * 2, 333 * 2);
    for (size_t i = 101; i < 101 + 333; i++)
        bits[i] = 0x3c3c;
    pa_expect_weight("after memset of elements 101-433 to 0x3c", w->t, bits, 3);
    /* To the end. */
    ggml_backend_tensor_memset(w->t, 0, 2000 * 2, (count - 2000) * 2);
    for (size_t i = 2000; i < count; i++)
        bits[i] = 0;
    pa_expect_weight("after memset of elements 2000 to the end to 0", w->t, bits, 3);
}

void group_memset(void)
{
    pa_weight_case("memset", 64, 33, memset_body); /* rows of 66 bytes */
}

/* ---- group clear: ggml_backend_buffer_clear and ggml_backend_buffer_reset ---- */

static void clear_body(struct weight *w, uint16_t *bits)
{
    pa_check_product(w->t, bits, 2, "before clear");
    ggml_backend_buffer_clear(w->buf, 0);
    memset(bits, 0, ggml_nbytes(w->t));
    pa_expect_weight("after ggml_backend_buffer_clear(buf, 0)", w->t, bits, 2);
    /* Set again after the clear: the new values serve. */
    pa_set_random(w->t, bits);
    pa_check_product(w->t, bits, 2, "set after clear");
}

static void reset_body(struct weight *w, uint16_t *bits)
{
    const int64_t k = w->t->ne[0], n = w->t->ne[1];
    pa_check_product(w->t, bits, 2, "before reset");
    ggml_backend_buffer_reset(w->buf);
    /* Place a new tensor of the same shape where the old one was, with a tallocr. */
    struct ggml_context *ctx2 = pa_ctx_new(4, 0);
    struct ggml_tensor *t2 = ggml_new_tensor_2d(ctx2, GGML_TYPE_BF16, k, n);
    ggml_set_name(t2, "w_again");
    struct ggml_tallocr ta = ggml_tallocr_new(w->buf);
    enum ggml_status s = ggml_tallocr_alloc(&ta, t2);
    if (s != GGML_STATUS_SUCCESS) {
        pa_fail("ggml_tallocr_alloc after reset returned %s", pa_status_name(s));
    } else {
        pa_set_random(t2, bits);
        pa_expect_weight("a tensor placed by ggml_tallocr after reset", t2, bits, 2);
    }
    /* Again, placed with ggml_backend_tensor_alloc at the buffer's base. */
    ggml_backend_buffer_reset(w->buf);
    struct ggml_tensor *t3 = ggml_new_tensor_2d(ctx2, GGML_TYPE_BF16, k, n);
    ggml_set_name(t3, "w_third");
    s = ggml_backend_tensor_alloc(w->buf, t3, ggml_backend_buffer_get_base(w->buf));
    if (s != GGML_STATUS_SUCCESS) {
        pa_fail("ggml_backend_tensor_alloc after reset returned %s", pa_status_name(s));
    } else {
        pa_set_random(t3, bits);
        pa_expect_weight("a tensor placed by ggml_backend_tensor_alloc after reset", t3, bits, 2);
    }
    ggml_free(ctx2);
}

void group_clear(void)
{
    pa_weight_case("buffer clear", 16, 256, clear_body);
    pa_weight_case("buffer reset, tensors placed again", 16, 256, reset_body);
}
