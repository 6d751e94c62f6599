/* plugin_api's groups for plugins/ggml/matmul.c (and format.c): the products against the CPU
 * backend's: BF16 at llama.cpp's small shapes, Q8_0 bit for bit. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- group products: llama.cpp's small shapes ---- */

/* (N, K) pairs: every N of {128, 256, 384, 512, 896, 4864} and every K of {896, 960, 1152,
 * 2048, 4864} at least once, mostly small models' layers (Qwen2.5-0.5B's k/v, q/o, gate/up
 * and down; Gemma 3 1B's k/v; Llama 3.2 1B's k/v; 384 x 960 takes the N and K left). All 30
 * pairs would take minutes under QEMU: M = 33 on the two largest of these alone takes 40 s. */
static const int64_t product_shapes[][2] = {
    {128, 896}, {896, 896}, {4864, 896}, {896, 4864}, {256, 1152}, {384, 960}, {512, 2048},
};
static const int64_t product_ms[] = {1, 7, 33};
/* In the quick tier the shapes of more than 500,000 weights run M = 1 and 7 only (M = 33 on
 * the two with N or K = 4864 takes 40 s under QEMU), and those two M = 1 only; M = 7's and
 * M = 33's plans are driven by the others. */
bool pa_full_tier;

void group_products(void)
{
    for (size_t i = 0; i < sizeof product_shapes / sizeof *product_shapes; i++) {
        int64_t n = product_shapes[i][0], k = product_shapes[i][1];
        pa_case_begin();
        struct weight w;
        uint16_t *bits = pa_xmalloc((size_t)(n * k) * sizeof *bits);
        if (pa_weight_random(&w, n, k, "w", bits)) {
            bool big = n * k > 500000, huge = n * k > 4000000;
            for (size_t j = 0; j < sizeof product_ms / sizeof *product_ms; j++) {
                if (!pa_full_tier && ((big && product_ms[j] > 8) || (huge && product_ms[j] > 1)))
                    continue;
                struct timespec t0, t1;
                clock_gettime(CLOCK_MONOTONIC, &t0);
                pa_check_product(w.t, bits, product_ms[j], "product");
                clock_gettime(CLOCK_MONOTONIC, &t1);
                if (pa_verbose)
                    fprintf(stderr, "plugin_api: N = %lld, K = %lld, M = %lld: %.2f s\n",
                            (long long)n, (long long)k, (long long)product_ms[j],
                            (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
            }
        }
        free(bits);
        pa_weight_free(&w);
        pa_case_end("products N=%lld K=%lld M=%s", (long long)n, (long long)k,
                    pa_full_tier ? "1,7,33" : n * k > 4000000 ? "1" : n * k > 500000 ? "1,7" : "1,7,33");
    }
}

/* ---- group q8_0: Q8_0 weights, held packed ---- */

/* Activations at the edges of ggml's Q8_0 quantisation, one kind of block after another: exact
 * ties (amax 127 makes d = 1, amax 508 d = 4), FP16 scales at a tie of their rounding
 * (d = 1 + 2^-11, 1 + 3 * 2^-11) and at the largest finite one (65504 from d = 65519), zero
 * blocks, a scale that rounds to 0 (d = 2^-25), a subnormal one, d = 2^-11, and ordinary
 * values of magnitudes 2^-10 .. 2^9. With `overflow`, the last block's amax makes d = 65520:
 * an FP16 scale of Inf. */
static void fill_q8_x_edges(float *x, size_t count, bool overflow)
{
    static const float amax[] = {127.0f, 508.0f, 127.0f * (1 + 0x1p-11f),
                                 127.0f * (1 + 3 * 0x1p-11f), 127.0f * 65519.0f, 0.0f,
                                 127 * 0x1p-25f, 127 * 0x1p-20f * 1.37f, 127 * 0x1p-11f};
    const size_t kinds = sizeof amax / sizeof *amax;
    for (size_t b = 0; b < count / 32; b++) {
        float *xb = x + 32 * b;
        const size_t kind = b % (kinds + 1);
        for (int j = 0; j < 32; j++) {
            if (kind == kinds) /* ordinary */
                xb[j] = ldexpf(pa_frand(), (int)(b % 20) - 10);
            else if (kind < 2) /* ties: d * (k + 1/2) */
                xb[j] = (amax[kind] / 127) * ((j % 2 ? 0.5f : -0.5f) + (float)(j % 7));
            else
                xb[j] = amax[kind] * pa_frand() / 2;
        }
        xb[b % 32] = amax[kind % kinds];
        if (kind == kinds)
            xb[b % 32] = pa_frand();
    }
    if (overflow)
        x[count - 1] = 127.0f * 65520.0f;
}

/* Q8_0 shapes of the test shapes file (q8_*): products against the CPU backend's Q8_0. */
static const int64_t q8_shapes[][3] = {{64, 96, 5}, {384, 1152, 1}, {384, 1152, 7}, {100, 96, 13}};

void group_q8_0(void)
{
    for (size_t i = 0; i < sizeof q8_shapes / sizeof *q8_shapes; i++) {
        int64_t n = q8_shapes[i][0], k = q8_shapes[i][1], m = q8_shapes[i][2];
        size_t bytes = (size_t)(n * k / 32) * PA_Q8_BLOCK_BYTES;
        uint8_t *b = pa_xmalloc(bytes);
        struct weight w;
        pa_case_begin();
        if (pa_q8_weight_new(&w, n, k, "w_q8")) {
            size_t alloc = ggml_backend_buft_get_alloc_size(pa_buft_rvv, w.t);
            pa_fill_q8_0(b, bytes / PA_Q8_BLOCK_BYTES, false);
            ggml_backend_tensor_set(w.t, b, 0, bytes);
            pa_expect_bytes("Q8_0 weight", w.t, b, 0, bytes);
            pa_check_product(w.t, b, m, "Q8_0 product");
            /* Packed: GGUF's 34 bytes a block (FP16 scales kept) with N padded to a panel,
             * not a second copy; on a narrow N the padding alone can be a quarter. */
            if (n >= 256 && (double)alloc > 1.10 * (double)bytes)
                pa_fail("a %zu-byte Q8_0 weight takes %zu bytes in a GEMM_RVV buffer", bytes, alloc);
        }
        pa_weight_free(&w);
        free(b);
        pa_case_end("Q8_0 product N=%lld K=%lld M=%lld", (long long)n, (long long)k, (long long)m);
    }

    /* ggml's quantisation at its edges, on the GEMV tile (M = 1) and on two-row tiles (M = 5,
     * 7), with finite weight scales and with special ones (0, subnormal, Inf, NaN). */
    static const int64_t edge_shapes[][3] = {{384, 1152, 1}, {64, 96, 5}, {384, 1152, 7}};
    for (size_t i = 0; i < sizeof edge_shapes / sizeof *edge_shapes; i++) {
        int64_t n = edge_shapes[i][0], k = edge_shapes[i][1], m = edge_shapes[i][2];
        size_t bytes = (size_t)(n * k / 32) * PA_Q8_BLOCK_BYTES;
        uint8_t *b = pa_xmalloc(bytes);
        float *x = pa_xmalloc((size_t)(k * m) * sizeof *x);
        struct weight w;
        pa_case_begin();
        if (pa_q8_weight_new(&w, n, k, "w_q8_edges")) {
            for (int special = 0; special < 2; special++) {
                pa_fill_q8_0(b, bytes / PA_Q8_BLOCK_BYTES, special);
                ggml_backend_tensor_set(w.t, b, 0, bytes);
                fill_q8_x_edges(x, (size_t)(k * m), m > 1);
                pa_check_product_of(w.t, b, m, x,
                                    special ? "special weight scales" : "finite weight scales");
            }
        }
        pa_weight_free(&w);
        free(x);
        free(b);
        pa_case_end("Q8_0 product at the edges of ggml's quantisation, the same bits: N=%lld K=%lld "
                    "M=%lld", (long long)n, (long long)k, (long long)m);
    }

    /* 64 x 96: 3 blocks a row, rows of 102 bytes. Special scales read back exactly; chunks
     * that cut blocks, out of order; partial gets; memset; clear. */
    const int64_t n = 64, k = 96;
    const size_t bytes = (size_t)(n * k / 32) * PA_Q8_BLOCK_BYTES;
    uint8_t *b = pa_xmalloc(bytes);
    struct weight w;
    pa_case_begin();
    if (pa_q8_weight_new(&w, n, k, "w_q8_bits")) {
        pa_fill_q8_0(b, bytes / PA_Q8_BLOCK_BYTES, true);
        ggml_backend_tensor_set(w.t, b, 0, bytes);
        pa_expect_bytes("special scales, whole set", w.t, b, 0, bytes);
        static const size_t cuts[] = {0, 1, 35, 101, 102, 1000, 3333, 5000, 6528};
        static const size_t order[] = {4, 0, 6, 2, 7, 1, 5, 3};
        pa_fill_q8_0(b, bytes / PA_Q8_BLOCK_BYTES, true);
        for (size_t c = 0; c < 8; c++) {
            size_t from = cuts[order[c]], to = cuts[order[c] + 1];
            ggml_backend_tensor_set(w.t, b + from, from, to - from);
            pa_expect_bytes("a chunk right after its set", w.t, b, from, to - from);
        }
        pa_expect_bytes("set in 8 chunks that cut blocks, out of order", w.t, b, 0, bytes);
        static const size_t reads[][2] = {{1, 1}, {33, 2}, {17, 100}, {6527, 1}, {2040, 68}};
        for (size_t r = 0; r < sizeof reads / sizeof *reads; r++)
            pa_expect_bytes("a partial get", w.t, b, reads[r][0], reads[r][1]);
        /* memset of a range that cuts blocks: 0x11 everywhere in it (scale 0x1111). */
        ggml_backend_tensor_memset(w.t, 0x11, 50, 700);
        memset(b + 50, 0x11, 700);
        pa_expect_bytes("after memset of bytes 50-749", w.t, b, 0, bytes);
        pa_fill_q8_0(b, bytes / PA_Q8_BLOCK_BYTES, false);
        ggml_backend_tensor_set(w.t, b, 0, bytes);
        pa_check_product(w.t, b, 5, "finite blocks set again");
        ggml_backend_buffer_clear(w.buf, 0);
        memset(b, 0, bytes);
        pa_expect_bytes("after ggml_backend_buffer_clear(buf, 0)", w.t, b, 0, bytes);
        pa_check_product(w.t, b, 5, "after clear");
    }
    pa_weight_free(&w);
    free(b);
    pa_case_end("Q8_0 read-back: special scales, chunks that cut blocks, partial gets, memset, clear");
}
