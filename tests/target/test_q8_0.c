/* Q8_0 weights: sizes and alignment, bad shapes and ranges refused with nothing written, the
 * exact bytes of every block read back after writes in pieces, gemm_rvv_linear_f32x against
 * the rule of docs/numerics.md (the same bits, from a model of the rule written here) and
 * against an exact FP64 reference within the stated bound, special scales and activations,
 * thread counts, the format errors of every call, and the counters. Kernels (where the build
 * has Q8_0 plans and the core has V) and the fallback must give the same bits: the digest
 * lines agree in every configuration. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "gemm_rvv.h"
#include "gr_contract.h"
#include "q8_0_scale.h"
#include "testdata.h"

#define BB GEMM_RVV_Q8_0_BLOCK_BYTES
#define GUARD 256 /* bytes after the caller's block, which no call may write */

/* (N, K): with Q8_0 plans in tests/target/shapes-test.yaml (odd N, K blocks that end before
 * K), and 50 x 64, which no shapes file has. */
static const int64_t shapes[][2] = {{67, 96}, {129, 352}, {50, 64}, {1, 32}};
#define SHAPES (sizeof shapes / sizeof shapes[0])

/* A random Q8_0 block: a scale of 2^-8 .. 2^-4, any sign and mantissa, and 32 int8 of the
 * whole range (-128 too, which GGUF files may hold). */
static void random_block(struct rng *r, unsigned char *b)
{
    uint64_t v = rng_next(r);
    uint16_t d = (uint16_t)((v & 0x8000) | (7 + (v >> 16) % 5) << 10 | (v >> 24 & 0x3ff));
    b[0] = (unsigned char)d;
    b[1] = (unsigned char)(d >> 8);
    for (int j = 0; j < 32; j++)
        b[2 + j] = (unsigned char)rng_next(r);
}

static unsigned char *random_blocks(size_t count, uint64_t seed)
{
    struct rng r = {seed};
    unsigned char *b = malloc(count * BB);
    assert_non_null(b);
    for (size_t i = 0; i < count; i++)
        random_block(&r, b + i * BB);
    return b;
}

/* FP32 activations, each block of its own magnitude (2^-10 .. 2^10), some zeros. */
static float *random_x(size_t count, uint64_t seed)
{
    struct rng r = {seed};
    float *x = malloc(count * sizeof *x);
    assert_non_null(x);
    double scale = 1;
    for (size_t i = 0; i < count; i++) {
        if (i % 32 == 0)
            scale = ldexp(1, (int)(rng_next(&r) % 21) - 10);
        uint64_t v = rng_next(&r);
        x[i] = v % 13 == 0 ? 0.0f : (float)(((double)(v >> 11) / 0x1p53 * 2 - 1) * scale);
    }
    return x;
}

static double fp16(const unsigned char *b)
{
    uint16_t h = (uint16_t)(b[0] | b[1] << 8);
    int e = h >> 10 & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return h & 0x8000 ? -v : v;
}

/* One block's q as ggml 0.27's RVV quantize_row_q8_0 computes it, written from its
 * instructions: t = x * id in FP32, vfncvt.x.f.w to int16 at the default rounding mode
 * (nearest even; saturating, NaN to the largest), then vnsrl (the low 8 bits). */
static int8_t ggml_q(float x, float id)
{
    float t = rintf(x * id) /* in this program's default mode: nearest even */;
    long v = isnan(t) ? 32767 : t > 32767 ? 32767 : t < -32768 ? -32768 : (long)t;
    return (int8_t)(uint8_t)(v & 0xff);
}

/* The rule of docs/numerics.md written out again, independently of the library, from ggml's
 * code (quantize_row_q8_0 and ggml_vec_dot_q8_0_q8_0 of its RVV CPU variant): the bits every
 * kernel and the fallback must give for Y[r, n] (FP32, no bias). ggml computes q even where
 * the FP16 scale is 0 (the library leaves them 0: the same outputs). A block holding Inf or
 * NaN is the library's own rule: its terms are NaN. */
static float model(const float *x, const unsigned char *w, size_t k)
{
    float acc = 0.0f;
    for (size_t b = 0; b < k / 32; b++) {
        const float *xb = x + 32 * b;
        float amax = 0;
        int finite = 1;
        for (int j = 0; j < 32; j++) {
            finite = finite && isfinite(xb[j]);
            amax = fmaxf(amax, fabsf(xb[j]));
        }
        float d = amax / 127.0f, id = d != 0 ? 1.0f / d : 0.0f;
        float dx = finite ? (float)(_Float16)d : NAN; /* the compiler's IEEE conversion */
        int32_t isum = 0;
        for (int j = 0; j < 32; j++)
            isum += (int32_t)ggml_q(xb[j], id) * (int8_t)w[b * BB + 2 + j];
        float dw = (float)fp16(w + b * BB);
        acc = fmaf((float)isum, dw * dx, acc);
    }
    return acc;
}

/* The exact value of Y[r, n] - bias (FP64: each product has at most 24 + 19 bits) and the
 * bound of docs/numerics.md on the distance of the library's FP32 result from it, for blocks
 * whose FP16 scale is finite. */
static double reference(const float *x, const unsigned char *w, size_t k, double *bound)
{
    const double u = 0x1p-24, blocks = (double)(k / 32);
    const double gamma = (blocks + 1) * u / (1 - (blocks + 1) * u);
    double sum = 0, err = 0;
    for (size_t b = 0; b < k / 32; b++) {
        double amax = 0, wsum = 0, xwsum = 0;
        for (int j = 0; j < 32; j++) {
            double wv = fp16(w + b * BB) * (int8_t)w[b * BB + 2 + j], xv = x[32 * b + j];
            sum += xv * wv;
            amax = fmax(amax, fabs(xv));
            wsum += fabs(wv);
            xwsum += fabs(xv * wv);
        }
        double d = amax / 127 * (1 + 0x1p-23);
        double quant = (0.5 + 0x1p-16) * d * wsum;
        double scale = d >= 0x1p-14 ? 0x1p-11 * (xwsum + quant) : 127 * 0x1p-25 * wsum;
        err += quant + scale + gamma * (xwsum + quant + scale) + 0x1p-131;
    }
    *bound = err * 1.001;
    return sum;
}

/* Y (FP32, row stride n + 3) of one call on `obj`, X with row stride k + 5. */
static float *call(const gemm_rvv_weight *obj, const float *x, size_t m, size_t n, size_t k,
                   const float *bias)
{
    float *y = malloc(m * (n + 3) * sizeof *y);
    assert_non_null(y);
    memset(y, 0x7f, m * (n + 3) * sizeof *y);
    assert_int_equal(gemm_rvv_linear_f32x(x, (int64_t)m, (int64_t)k + 5, obj, bias, y,
                                          (int64_t)n + 3, GEMM_RVV_F32),
                     GEMM_RVV_OK);
    return y;
}

/* X [m, k] with row stride k + 5. */
static float *strided_x(size_t m, size_t k, uint64_t seed)
{
    float *dense = random_x(m * k, seed), *x = calloc(m * (k + 5), sizeof *x);
    assert_non_null(x);
    for (size_t r = 0; r < m; r++)
        memcpy(x + r * (k + 5), dense + r * k, k * sizeof *x);
    free(dense);
    return x;
}

static void test_sizes_and_errors(void **state)
{
    (void)state;
    size_t bytes = 0;
    for (size_t s = 0; s < SHAPES; s++) {
        int64_t n = shapes[s][0], k = shapes[s][1];
        assert_int_equal(gemm_rvv_weight_bytes_q8_0(n, k, &bytes), GEMM_RVV_OK);
        assert_int_equal(bytes % GEMM_RVV_WEIGHT_ALIGN, 0);
        size_t blocks_bytes = (size_t)(n * k / 32) * BB;
        assert_true(bytes >= blocks_bytes);
        /* The packed form pads N to a panel (128 at most) and keeps each block's FP16 scale:
         * 34 bytes a block, as GGUF's. */
        assert_true(bytes <= (size_t)((n + 127) * (k / 32)) * BB + GEMM_RVV_WEIGHT_ALIGN);
        if (gemm_rvv_plan_buckets_q8_0(n, k, NULL, 0) == 0 || !gemm_rvv_kernels_active())
            assert_int_equal(bytes, (blocks_bytes + 63) / 64 * 64); /* the blocks as given */
    }
    assert_int_equal(gemm_rvv_plan_buckets_q8_0(50, 64, NULL, 0), 0);
    /* tests/target/shapes-test.yaml's Q8_0 layers (and the host runtime's, the same): M 1, 2,
     * 3, 16, 17, 70 and 1, 7, 16, 128. */
    int64_t buckets[8];
    assert_int_equal(gemm_rvv_plan_buckets_q8_0(67, 96, buckets, 8), 6);
    assert_int_equal(gemm_rvv_plan_buckets_q8_0(129, 352, buckets, 8), 4);
    assert_true(buckets[0] == 1 && buckets[3] == 128);
    assert_int_equal(gemm_rvv_plan_buckets(67, 96, NULL, 0), 0); /* BF16 has none there */
    assert_int_equal(gemm_rvv_weight_bytes_q8_0(50, 64, &bytes), GEMM_RVV_OK);
    assert_int_equal(bytes, (50 * 2 * BB + 63) / 64 * 64); /* no plan: the blocks */
    assert_int_equal(gemm_rvv_weight_bytes_q8_0(50, 64, NULL), GEMM_RVV_ERR_NULL);
    assert_int_equal(gemm_rvv_weight_bytes_q8_0(0, 64, &bytes), GEMM_RVV_ERR_SIZE);
    assert_int_equal(gemm_rvv_weight_bytes_q8_0(50, -32, &bytes), GEMM_RVV_ERR_SIZE);
    assert_int_equal(gemm_rvv_weight_bytes_q8_0(50, 33, &bytes), GEMM_RVV_ERR_FORMAT);
    assert_int_equal(gemm_rvv_weight_bytes_q8_0(50, 16, &bytes), GEMM_RVV_ERR_FORMAT);
    assert_int_equal(bytes, (50 * 2 * BB + 63) / 64 * 64); /* refused calls left it */
    assert_int_equal(gemm_rvv_weight_bytes_q8_0(INT64_MAX / 64, INT64_MAX / 64 * 32, &bytes),
                     GEMM_RVV_ERR_OVERFLOW);

    unsigned char *blocks = random_blocks(50 * 2, 1);
    gemm_rvv_weight *obj = (gemm_rvv_weight *)&bytes, *was = obj;
    assert_int_equal(gemm_rvv_weight_create_q8_0(NULL, 50, 64, &obj), GEMM_RVV_ERR_NULL);
    assert_int_equal(gemm_rvv_weight_create_q8_0(blocks, 50, 64, NULL), GEMM_RVV_ERR_NULL);
    assert_int_equal(gemm_rvv_weight_create_q8_0(blocks, -1, 64, &obj), GEMM_RVV_ERR_SIZE);
    assert_int_equal(gemm_rvv_weight_create_q8_0(blocks, 50, 48, &obj), GEMM_RVV_ERR_FORMAT);
    assert_ptr_equal(obj, was);

    assert_int_equal(gemm_rvv_weight_bytes_q8_0(67, 96, &bytes), GEMM_RVV_OK);
    unsigned char *mem = aligned_alloc(GEMM_RVV_WEIGHT_ALIGN, bytes + GEMM_RVV_WEIGHT_ALIGN);
    assert_non_null(mem);
    memset(mem, 0x5a, bytes + GEMM_RVV_WEIGHT_ALIGN);
    assert_int_equal(gemm_rvv_weight_create_in_q8_0(67, 96, mem, bytes - 1, &obj),
                     GEMM_RVV_ERR_BUFFER);
    assert_int_equal(gemm_rvv_weight_create_in_q8_0(67, 96, mem + 2, bytes, &obj),
                     GEMM_RVV_ERR_BUFFER);
    assert_int_equal(gemm_rvv_weight_create_in_q8_0(67, 96, NULL, bytes, &obj),
                     GEMM_RVV_ERR_NULL);
    assert_int_equal(gemm_rvv_weight_create_in_q8_0(67, 96, mem, bytes, NULL),
                     GEMM_RVV_ERR_NULL);
    assert_int_equal(gemm_rvv_weight_create_in_q8_0(0, 96, mem, bytes, &obj), GEMM_RVV_ERR_SIZE);
    assert_int_equal(gemm_rvv_weight_create_in_q8_0(67, 100, mem, bytes, &obj),
                     GEMM_RVV_ERR_FORMAT);
    assert_ptr_equal(obj, was);
    for (size_t i = 0; i < bytes + GEMM_RVV_WEIGHT_ALIGN; i++)
        if (mem[i] != 0x5a)
            fail_msg("a refused create_in_q8_0 wrote byte %zu", i);
    free(mem);
    free(blocks);
}

/* The calls of the other format on each object, and the Q8_0 ranges. */
static void test_format_errors(void **state)
{
    (void)state;
    unsigned char *blocks = random_blocks(50 * 2, 2);
    uint16_t bf16[50 * 64] = {0};
    gemm_rvv_weight *q8, *bf;
    assert_int_equal(gemm_rvv_weight_create_q8_0(blocks, 50, 64, &q8), GEMM_RVV_OK);
    assert_int_equal(gemm_rvv_weight_create(bf16, 50, 64, 64, &bf), GEMM_RVV_OK);
    float xf[64] = {1}, y[50];
    uint16_t xb[64] = {0}, v[4] = {0};
    unsigned char b[3 * BB];
    memset(y, 0x33, sizeof y);
    assert_int_equal(gemm_rvv_linear(xb, 1, 64, q8, NULL, y, 50, GEMM_RVV_F32),
                     GEMM_RVV_ERR_FORMAT);
    assert_int_equal(gemm_rvv_linear_f32x(xf, 1, 64, bf, NULL, y, 50, GEMM_RVV_F32),
                     GEMM_RVV_ERR_FORMAT);
    for (size_t i = 0; i < sizeof y; i++)
        assert_int_equal(((unsigned char *)y)[i], 0x33);
    assert_int_equal(gemm_rvv_weight_update(q8, bf16, 64), GEMM_RVV_ERR_FORMAT);
    assert_int_equal(gemm_rvv_weight_write(q8, v, 0, 4), GEMM_RVV_ERR_FORMAT);
    assert_int_equal(gemm_rvv_weight_read(q8, v, 0, 4), GEMM_RVV_ERR_FORMAT);
    assert_int_equal(gemm_rvv_weight_write_q8_0(bf, b, 0, 1), GEMM_RVV_ERR_FORMAT);
    assert_int_equal(gemm_rvv_weight_read_q8_0(bf, b, 0, 1), GEMM_RVV_ERR_FORMAT);
    /* Ranges: 100 blocks. */
    memset(b, 0x11, sizeof b);
    assert_int_equal(gemm_rvv_weight_write_q8_0(q8, b, 98, 3), GEMM_RVV_ERR_RANGE);
    assert_int_equal(gemm_rvv_weight_write_q8_0(q8, b, 101, 0), GEMM_RVV_ERR_RANGE);
    assert_int_equal(gemm_rvv_weight_write_q8_0(q8, b, SIZE_MAX, 2), GEMM_RVV_ERR_RANGE);
    assert_int_equal(gemm_rvv_weight_write_q8_0(q8, NULL, 0, 1), GEMM_RVV_ERR_NULL);
    assert_int_equal(gemm_rvv_weight_write_q8_0(NULL, b, 0, 1), GEMM_RVV_ERR_NULL);
    assert_int_equal(gemm_rvv_weight_read_q8_0(q8, b, 99, 2), GEMM_RVV_ERR_RANGE);
    assert_int_equal(gemm_rvv_weight_read_q8_0(q8, NULL, 0, 1), GEMM_RVV_ERR_NULL);
    assert_int_equal(gemm_rvv_weight_read_q8_0(q8, b, 97, 3), GEMM_RVV_OK);
    assert_memory_equal(b, blocks + 97 * BB, 3 * BB); /* the refused writes changed nothing */
    /* The call checks of gemm_rvv_linear, X counted in floats. */
    assert_int_equal(gemm_rvv_linear_f32x(NULL, 1, 64, q8, NULL, y, 50, GEMM_RVV_F32),
                     GEMM_RVV_ERR_NULL);
    assert_int_equal(gemm_rvv_linear_f32x(xf, 1, 64, NULL, NULL, y, 50, GEMM_RVV_F32),
                     GEMM_RVV_ERR_NULL);
    assert_int_equal(gemm_rvv_linear_f32x(xf, 0, 64, q8, NULL, y, 50, GEMM_RVV_F32),
                     GEMM_RVV_ERR_SIZE);
    assert_int_equal(gemm_rvv_linear_f32x(xf, 1, 63, q8, NULL, y, 50, GEMM_RVV_F32),
                     GEMM_RVV_ERR_STRIDE);
    assert_int_equal(gemm_rvv_linear_f32x(xf, 1, 64, q8, NULL, y, 49, GEMM_RVV_F32),
                     GEMM_RVV_ERR_STRIDE);
    assert_int_equal(gemm_rvv_linear_f32x(xf, 1, 64, q8, NULL, y, 50, (gemm_rvv_type)2),
                     GEMM_RVV_ERR_TYPE);
    float xy[64 + 50] = {0};
    assert_int_equal(gemm_rvv_linear_f32x(xy, 1, 64, q8, NULL, xy + 63, 50, GEMM_RVV_F32),
                     GEMM_RVV_ERR_ALIAS);
    assert_int_equal(gemm_rvv_linear_f32x(xy, 1, 64, q8, NULL, xy + 64, 50, GEMM_RVV_F32),
                     GEMM_RVV_OK);
    assert_int_equal(gemm_rvv_linear_f32x(xf, 1, 64, q8, y, y, 50, GEMM_RVV_F32),
                     GEMM_RVV_ERR_ALIAS);
    gemm_rvv_weight_free(q8);
    gemm_rvv_weight_free(bf);
    free(blocks);
}

/* A call on obj with X of `rows` rows of k floats (y_over_copy_refused's callback). */
struct f32x_call {
    const gemm_rvv_weight *obj;
    const float *x;
    int64_t rows, n, k;
};

static int call_f32x(void *ctx, void *y, int bf16)
{
    const struct f32x_call *c = ctx;
    return gemm_rvv_linear_f32x(c->x, c->rows, c->k, c->obj, NULL, y, c->n,
                                bf16 ? GEMM_RVV_BF16 : GEMM_RVV_F32);
}

/* Y over a create_in object's copy (the caller's memory) is refused with GEMM_RVV_ERR_ALIAS,
 * the copy unchanged; Y right after it is served. 67 x 96 has plans (packed with V), 50 x 64
 * none (the blocks). */
static void test_y_over_the_copy(void **state)
{
    (void)state;
    enum { ROWS = 3 };
    static const int64_t own[2][2] = {{67, 96}, {50, 64}};
    for (int s = 0; s < 2; s++) {
        int64_t n = own[s][0], k = own[s][1];
        size_t bytes, y_bytes = (size_t)(ROWS * n) * sizeof(float);
        assert_int_equal(gemm_rvv_weight_bytes_q8_0(n, k, &bytes), GEMM_RVV_OK);
        unsigned char *mem = aligned_alloc(GEMM_RVV_WEIGHT_ALIGN, bytes + (y_bytes + 63) / 64 * 64);
        unsigned char *blocks = random_blocks((size_t)(n * k / 32), 40);
        float *x = random_x((size_t)(ROWS * k), 41), *apart = malloc(y_bytes);
        assert_true(mem && apart);
        gemm_rvv_weight *obj;
        assert_int_equal(gemm_rvv_weight_create_in_q8_0(n, k, mem, bytes, &obj), GEMM_RVV_OK);
        assert_int_equal(gemm_rvv_weight_write_q8_0(obj, blocks, 0, (size_t)(n * k / 32)),
                         GEMM_RVV_OK);
        struct f32x_call c = {obj, x, ROWS, n, k};
        size_t bad = y_over_copy_refused(call_f32x, &c, mem, bytes, GEMM_RVV_ERR_ALIAS);
        if (bad)
            fail_msg("%lld x %lld: Y at byte %zu of the copy not refused, or the copy written",
                     (long long)n, (long long)k, bad - 1);
        assert_int_equal(call_f32x(&c, apart, 0), GEMM_RVV_OK);
        assert_int_equal(call_f32x(&c, mem + bytes, 0), GEMM_RVV_OK);
        assert_memory_equal(mem + bytes, apart, y_bytes);
        gemm_rvv_weight_free(obj);
        free(apart);
        free(x);
        free(blocks);
        free(mem);
    }
}

/* Writes the blocks in pieces of seeded sizes (1 block up to a few rows), front to back or
 * back to front. */
static void write_in_pieces(gemm_rvv_weight *obj, const unsigned char *blocks, size_t total,
                            size_t row_blocks, uint64_t seed, int backwards)
{
    struct rng r = {seed};
    size_t cuts[4096], count = 0, at = 0;
    while (at < total && count + 1 < sizeof cuts / sizeof cuts[0]) {
        cuts[count++] = at;
        at += 1 + rng_next(&r) % (3 * row_blocks + 2);
    }
    cuts[count] = total;
    for (size_t i = 0; i < count; i++) {
        size_t p = backwards ? count - 1 - i : i;
        assert_int_equal(gemm_rvv_weight_write_q8_0(obj, blocks + cuts[p] * BB, cuts[p],
                                                    cuts[p + 1] - cuts[p]),
                         GEMM_RVV_OK);
    }
}

/* Scales a packed form must keep exactly: zeros, subnormals, Inf, quiet and signalling NaNs
 * with payloads, the largest finite. */
static const uint16_t odd_scales[] = {0x0000, 0x8000, 0x0001, 0x83ff, 0x7c00, 0xfc00,
                                      0x7e00, 0xfd55, 0x7c01, 0x7bff};

static void test_write_read(void **state)
{
    (void)state;
    uint64_t h = DIGEST_INIT;
    for (size_t s = 0; s < SHAPES; s++) {
        int64_t n = shapes[s][0], k = shapes[s][1];
        size_t total = (size_t)(n * k / 32), bytes;
        unsigned char *blocks = random_blocks(total, 10 + s);
        for (size_t i = 0; i < total; i += 7) {
            uint16_t d = odd_scales[i / 7 % (sizeof odd_scales / sizeof odd_scales[0])];
            blocks[i * BB] = (unsigned char)d;
            blocks[i * BB + 1] = (unsigned char)(d >> 8);
        }
        gemm_rvv_weight *whole, *obj;
        assert_int_equal(gemm_rvv_weight_create_q8_0(blocks, n, k, &whole), GEMM_RVV_OK);
        float *x = strided_x(5, (size_t)k, 20 + s);
        float *want = call(whole, x, 5, (size_t)n, (size_t)k, NULL);
        assert_int_equal(gemm_rvv_weight_bytes_q8_0(n, k, &bytes), GEMM_RVV_OK);
        unsigned char *mem = aligned_alloc(GEMM_RVV_WEIGHT_ALIGN, bytes + GUARD);
        assert_non_null(mem);
        memset(mem + bytes, 0xa5, GUARD);
        unsigned char *back = malloc(total * BB);
        assert_non_null(back);
        for (int pass = 0; pass < 3; pass++) {
            /* NaN everywhere: padding create_in did not zero would turn the sums into NaN. */
            memset(mem, 0xff, bytes);
            assert_int_equal(gemm_rvv_weight_create_in_q8_0(n, k, mem, bytes, &obj),
                             GEMM_RVV_OK);
            if (pass == 0)
                assert_int_equal(gemm_rvv_weight_write_q8_0(obj, blocks, 0, total), GEMM_RVV_OK);
            else
                write_in_pieces(obj, blocks, total, (size_t)k / 32, 30 + (uint64_t)pass,
                                pass == 2);
            float *got = call(obj, x, 5, (size_t)n, (size_t)k, NULL);
            assert_memory_equal(got, want, 5 * ((size_t)n + 3) * sizeof *got);
            assert_int_equal(gemm_rvv_weight_read_q8_0(obj, back, 0, total), GEMM_RVV_OK);
            assert_memory_equal(back, blocks, total * BB);
            size_t from = total / 3, count = total - total / 3 - total / 5;
            memset(back, 0, total * BB);
            assert_int_equal(gemm_rvv_weight_read_q8_0(obj, back, from, count), GEMM_RVV_OK);
            assert_memory_equal(back, blocks + from * BB, count * BB);
            assert_int_equal(gemm_rvv_weight_write_q8_0(obj, blocks, total, 0), GEMM_RVV_OK);
            gemm_rvv_weight_free(obj);
            for (size_t i = 0; i < GUARD; i++)
                if (mem[bytes + i] != 0xa5)
                    fail_msg("byte %zu past the caller's block was written", i);
            free(got);
        }
        assert_int_equal(gemm_rvv_weight_read_q8_0(whole, back, 0, total), GEMM_RVV_OK);
        assert_memory_equal(back, blocks, total * BB);
        h = digest_add(h, want, 5 * ((size_t)n + 3) * sizeof *want);
        gemm_rvv_weight_free(whole);
        free(mem);
        free(back);
        free(want);
        free(x);
        free(blocks);
    }
    digest_print("q8_0 write/read outputs", h);
}

/* Every output: the bits of the rule, within the bound of the exact value; BF16 outputs the
 * FP32 ones rounded; the same bits with 1 and 3 threads and with the fallback forced. */
static void test_linear(void **state)
{
    (void)state;
    static const size_t ms[] = {1, 2, 3, 7, 16, 17, 70};
    uint64_t h = DIGEST_INIT;
    for (size_t s = 0; s < SHAPES; s++) {
        const size_t n = (size_t)shapes[s][0], k = (size_t)shapes[s][1], kb = k / 32;
        unsigned char *blocks = random_blocks(n * kb, 40 + s);
        gemm_rvv_weight *obj;
        assert_int_equal(gemm_rvv_weight_create_q8_0(blocks, (int64_t)n, (int64_t)k, &obj),
                         GEMM_RVV_OK);
        float *bias = malloc(n * sizeof *bias);
        assert_non_null(bias);
        for (size_t j = 0; j < n; j++)
            bias[j] = (float)(j % 5) - 2.0f;
        for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; mi++) {
            const size_t m = ms[mi];
            float *x = strided_x(m, k, 50 + mi);
            float *y = call(obj, x, m, n, k, NULL), *yb = call(obj, x, m, n, k, bias);
            for (size_t r = 0; r < m; r++)
                for (size_t j = 0; j < n; j++) {
                    const float *xr = x + r * (k + 5);
                    const unsigned char *wj = blocks + j * kb * BB;
                    float got = y[r * (n + 3) + j], want = model(xr, wj, k);
                    if (memcmp(&got, &want, sizeof got) != 0)
                        fail_msg("N=%zu K=%zu M=%zu Y[%zu,%zu] = %a, the rule gives %a", n, k, m,
                                 r, j, (double)got, (double)want);
                    double bound, ref = reference(xr, wj, k, &bound);
                    if (fabs(got - ref) > bound)
                        fail_msg("N=%zu K=%zu M=%zu Y[%zu,%zu] = %.9g, exact %.9g: error "
                                 "%.3g over the bound %.3g",
                                 n, k, m, r, j, (double)got, ref, fabs(got - ref), bound);
                    float with_bias = yb[r * (n + 3) + j], sum = got + bias[j];
                    assert_memory_equal(&with_bias, &sum, sizeof sum);
                }
            /* BF16 outputs: the FP32 ones rounded to nearest even. */
            uint16_t *y16 = malloc(m * n * sizeof *y16);
            assert_non_null(y16);
            assert_int_equal(gemm_rvv_linear_f32x(x, (int64_t)m, (int64_t)k + 5, obj, bias, y16,
                                                  (int64_t)n, GEMM_RVV_BF16),
                             GEMM_RVV_OK);
            uint16_t *r16 = malloc(m * n * sizeof *r16);
            assert_non_null(r16);
            for (size_t r = 0; r < m; r++)
                assert_int_equal(gemm_rvv_round_bf16(yb + r * (n + 3), (int64_t)n, r16 + r * n),
                                 GEMM_RVV_OK);
            assert_memory_equal(y16, r16, m * n * sizeof *y16);
            /* Threads and the fallback change no bit. */
            int threads = gemm_rvv_get_threads();
            gemm_rvv_set_threads(threads == 1 ? 3 : 1);
            float *other = call(obj, x, m, n, k, bias);
            gemm_rvv_set_threads(threads);
            assert_memory_equal(other, yb, m * (n + 3) * sizeof *other);
            free(other);
            gemm_rvv_force_fallback(1);
            other = call(obj, x, m, n, k, bias);
            gemm_rvv_force_fallback(0);
            assert_memory_equal(other, yb, m * (n + 3) * sizeof *other);
            free(other);
            h = digest_add(h, yb, m * (n + 3) * sizeof *yb);
            h = digest_add(h, y16, m * n * sizeof *y16);
            free(y16);
            free(r16);
            free(y);
            free(yb);
            free(x);
        }
        gemm_rvv_weight_free(obj);
        free(bias);
        free(blocks);
    }
    digest_print("q8_0 outputs", h);
}

/* One column of two blocks (K = 64) with scales d0, d1, all q = q; X row given. */
static float one_output(uint16_t d0, uint16_t d1, int8_t q, const float *x)
{
    unsigned char b[2 * BB];
    const uint16_t d[2] = {d0, d1};
    for (int i = 0; i < 2; i++) {
        b[i * BB] = (unsigned char)d[i];
        b[i * BB + 1] = (unsigned char)(d[i] >> 8);
        memset(b + i * BB + 2, (unsigned char)q, 32);
    }
    gemm_rvv_weight *obj;
    assert_int_equal(gemm_rvv_weight_create_q8_0(b, 1, 64, &obj), GEMM_RVV_OK);
    float y;
    assert_int_equal(gemm_rvv_linear_f32x(x, 1, 64, obj, NULL, &y, 1, GEMM_RVV_F32),
                     GEMM_RVV_OK);
    gemm_rvv_weight_free(obj);
    float want = model(x, b, 64);
    assert_memory_equal(&y, &want, sizeof y);
    return y;
}

/* What the rule says of special scales and activations. */
static void test_special_values(void **state)
{
    (void)state;
    float ones[64], zero_first[64], inf_x[64], nan_x[64], tiny[64];
    for (int j = 0; j < 64; j++) {
        ones[j] = 1.0f;
        zero_first[j] = j < 32 ? 0.0f : 1.0f;
        inf_x[j] = j == 40 ? INFINITY : 1.0f;
        nan_x[j] = j == 3 ? NAN : 1.0f;
        tiny[j] = 0x1p-149f; /* amax / 127 underflows: an FP16 scale of 0 */
    }
    const uint16_t one = 0x3c00, inf = 0x7c00, nan = 0x7e00, sub = 0x0001;
    /* X = 1: d_x = 1/127 as FP16 (within 2^-11 of it), q_x = 127, isum = 32 * 127 * q per
     * block. */
    assert_true(fabsf(one_output(one, one, 1, ones) - 64.0f) < 64 * 0x1p-11f);
    assert_true(isinf(one_output(inf, one, 1, ones)) && one_output(inf, one, 1, ones) > 0);
    assert_true(isinf(one_output(one, inf, -1, ones)) && one_output(one, inf, -1, ones) < 0);
    assert_true(isnan(one_output(inf, 0xfc00, 1, ones))); /* Inf - Inf */
    assert_true(isnan(one_output(inf, one, 0, ones)));    /* Inf * 0 (isum 0) */
    assert_true(isnan(one_output(inf, one, 1, zero_first))); /* Inf * 0 (d_x 0) */
    assert_true(isnan(one_output(nan, one, 1, ones)));
    assert_true(isnan(one_output(one, one, 1, inf_x)));
    assert_true(isnan(one_output(one, one, 1, nan_x)));
    /* Zero scales: +0 whatever the terms' signs, the sum starting from +0 as ggml's. */
    float z = one_output(0x0000, 0x0000, 1, ones);
    assert_true(z == 0 && !signbit(z));
    z = one_output(0x0000, 0x0000, -1, ones);
    assert_true(z == 0 && !signbit(z));
    z = one_output(0x8000, 0x8000, 0, ones);
    assert_true(z == 0 && !signbit(z));
    z = one_output(one, one, 1, tiny);
    assert_true(z == 0 && !signbit(z));
    /* A subnormal scale is exact: 2^-24 * fp16(1/127) * 4064 per block, no flush to zero. */
    z = one_output(sub, sub, 1, ones);
    assert_true(z > 0 && fabs(z - 64 * 0x1p-24) < 64 * 0x1p-24 * 0x1p-11);
}

/* One block of x (the second block zero) by weights of scale 1 and every q 1: d_x * isum. */
static float block_output(const float *xb)
{
    float x[64] = {0};
    memcpy(x, xb, 32 * sizeof *x);
    return one_output(0x3c00, 0x3c00, 1, x);
}

/* ggml's rule at its edges: ties, the FP16 scale's rounding, overflow and underflow. */
static void test_ggml_rule(void **state)
{
    (void)state;
    /* amax 127: d = 1 exactly, so x * (1 / d) is x and exact ties round to even: q = 127, 2,
     * -2, 4, 0, 2, -126, -4 (sum 3); ties away from zero would give 127, 3, -3, 4, -1, 2,
     * -127, -4 (sum 1). */
    float ties[32] = {127.0f, 2.5f, -2.5f, 3.5f, -0.5f, 1.5f, -126.5f, -3.5f};
    assert_true(block_output(ties) == 3.0f);
    /* d = amax / 127 is held as FP16: 1 + 2^-11 is the tie of 1 and 1 + 2^-10 and goes to 1
     * (even); 1 + 3 * 2^-11 goes to 1 + 2^-9. q = 127 either way. */
    float x[32] = {127.0f * (1 + 0x1p-11f)};
    assert_true(block_output(x) == 127.0f);
    x[0] = 127.0f * (1 + 3 * 0x1p-11f);
    assert_true(block_output(x) == 127.0f * (1 + 0x1p-9f));
    /* The largest finite FP16 scale, 65504, then Inf from d = 65520 up (amax >= 8 321 040). */
    x[0] = 127.0f * 65504.0f;
    assert_true(block_output(x) == 127.0f * 65504.0f);
    x[0] = -127.0f * 65519.0f;
    assert_true(block_output(x) == -127.0f * 65504.0f);
    x[0] = 127.0f * 65520.0f;
    assert_true(isinf(block_output(x)) && block_output(x) > 0);
    /* Subnormal FP16 scales: d = 2^-20 exactly; d = 2^-25 is the tie of 0 and 2^-24, which
     * gives 0 (every term 0, +0 out); a little above it gives 2^-24. */
    x[0] = 127.0f * 0x1p-20f;
    assert_true(block_output(x) == 127.0f * 0x1p-20f);
    x[0] = 127.0f * 0x1p-25f;
    float z = block_output(x);
    assert_true(z == 0 && !signbit(z));
    x[0] = -127.0f * 0x1p-25f * (1 + 0x1p-10f);
    assert_true(block_output(x) == -127.0f * 0x1p-24f);
}

/* Whether two outputs agree: the same bits, or both NaN (a NaN's payload depends on which
 * operand it came from on some hosts; RISC-V gives the canonical one everywhere). */
static int same_value(float a, float b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

/* gr_f32_round_fp16 (the activations' FP16 scale) against the compiler's IEEE conversion to
 * _Float16 and back: both signs, every exponent, mantissas at the edges of FP16's (carries
 * into the exponent) and every rounding position's ties and neighbours (subnormal results
 * round at bit 13 to 24), then random bit patterns; NaNs stay NaN. */
static void test_fp16_rounding(void **state)
{
    (void)state;
    static const uint32_t tops[] = {0, 1, 2, 0x1ff, 0x200, 0x3fe, 0x3ff}; /* mantissa bits 22-13 */
    struct rng r = {90};
    size_t checked = 0;
    for (uint32_t i = 0; i < 2 * 256 * 7 * 12 * 6 + 200000; i++) {
        uint32_t bits;
        if (i < 2 * 256 * 7 * 12 * 6) {
            uint32_t sign = i & 1, e = i >> 1 & 0xff, top = tops[(i >> 9) % 7];
            uint32_t pos = 13 + (i / (2 * 256 * 7)) % 12; /* a rounding position: 13 .. 24 */
            uint32_t half = 1u << (pos - 1);
            const uint32_t lows[] = {0, 1, half - 1, half, half + 1, (1u << pos) - 1};
            uint32_t low = lows[i / (2 * 256 * 7 * 12)] & 0x7fffff;
            bits = sign << 31 | e << 23 | ((top << 13 & 0x7fffff) | low);
        } else {
            bits = (uint32_t)rng_next(&r);
        }
        float f, got, want;
        memcpy(&f, &bits, sizeof f);
        got = gr_f32_round_fp16(f);
        want = (float)(_Float16)f;
        if (!(isnan(f) ? isnan(got) : memcmp(&got, &want, sizeof got) == 0))
            fail_msg("FP16 rounding of %a (0x%08x): %a, the compiler's conversion %a", (double)f,
                     bits, (double)got, (double)want);
        checked++;
    }
    assert_true(checked > 200000);
}

/* The plans' shapes with special scales (zeros, subnormals, Inf, NaN, the largest) in some
 * blocks and special activations in some rows (a zero block, a block whose amax / 127
 * underflows, Inf, NaN, huge values, amax at the FP16 scale's edges, a block of exact ties):
 * the rule's values, kernels and the fallback the same bits. */
static void test_special_on_plans(void **state)
{
    (void)state;
    uint64_t h = DIGEST_INIT;
    for (size_t s = 0; s < 2; s++) {
        const size_t n = (size_t)shapes[s][0], k = (size_t)shapes[s][1], kb = k / 32, m = 12;
        unsigned char *blocks = random_blocks(n * kb, 70 + s);
        for (size_t i = 0; i < n * kb; i += 5) {
            uint16_t d = odd_scales[i / 5 % (sizeof odd_scales / sizeof odd_scales[0])];
            blocks[i * BB] = (unsigned char)d;
            blocks[i * BB + 1] = (unsigned char)(d >> 8);
        }
        float *x = strided_x(m, k, 80 + s);
        /* Row r's special value, at element r of one block: zeros, underflow, Inf, NaN, huge
         * values, then as the amax of a block (its other values within +-amax / 2): the FP16
         * scale's overflow (d = 65520) and the largest below it, the tie of 0 and 2^-24
         * (d = 2^-25), a subnormal d, a zero block and d = 2^-11. */
        static const float specials[] = {0.0f /* row 0 stays ordinary */,
                                         0x1p-149f, INFINITY, NAN, 0x1p120f, -0x1p127f,
                                         8321040.0f, -8320913.0f, 127 * 0x1p-25f,
                                         127 * 0x1p-21f + 0x1p-30f, 0.0f, 127 * 0x1p-11f};
        for (size_t r = 1; r < m; r++) {
            float *block = x + r * (k + 5) + 32 * (r % kb);
            const float sp = specials[r];
            for (int j = 0; j < 32; j++)
                block[j] = j == (int)r ? sp
                                       : r >= 6 ? sp * (float)(j % 9 - 4) / 8 : block[j] * 1e-3f;
            if (r == 1)
                for (int j = 0; j < 32; j++)
                    block[j] = 0x1p-149f;
            /* Another block of ties: amax 127 makes d = 1, so v * (1 / d) = +-2.5, +-3.5, ...
             * exactly, which round to even, +-2, +-4 (ties away from zero: +-3, +-4). */
            float *ties = x + r * (k + 5) + 32 * ((r + 1) % kb);
            for (int j = 0; j < 32; j++)
                ties[j] = j == 0 ? 127.0f : (j % 2 ? 1.0f : -1.0f) * (0.5f + (float)(j % 7));
        }
        gemm_rvv_weight *obj;
        assert_int_equal(gemm_rvv_weight_create_q8_0(blocks, (int64_t)n, (int64_t)k, &obj),
                         GEMM_RVV_OK);
        float *y = call(obj, x, m, n, k, NULL);
        gemm_rvv_force_fallback(1);
        float *yf = call(obj, x, m, n, k, NULL);
        gemm_rvv_force_fallback(0);
        size_t nans = 0;
        for (size_t r = 0; r < m; r++)
            for (size_t j = 0; j < n; j++) {
                float got = y[r * (n + 3) + j], fb = yf[r * (n + 3) + j];
                float want = model(x + r * (k + 5), blocks + j * kb * BB, k);
                if (memcmp(&got, &fb, sizeof got) != 0 || !same_value(got, want))
                    fail_msg("N=%zu K=%zu Y[%zu,%zu] = %a, the fallback %a, the rule %a", n, k, r,
                             j, (double)got, (double)fb, (double)want);
                nans += isnan(got);
            }
        assert_true(nans > 0 && nans < m * n); /* the specials reached the outputs */
        /* Each row alone (M = 1: the tile of one row converts the scales itself) gives the
         * same bits as in the call of m rows. */
        for (size_t r = 0; r < m; r++) {
            float *y1 = call(obj, x + r * (k + 5), 1, n, k, NULL);
            for (size_t j = 0; j < n; j++)
                if (memcmp(&y1[j], &y[r * (n + 3) + j], sizeof *y1) != 0)
                    fail_msg("N=%zu K=%zu row %zu alone: Y[%zu] = %a, in %zu rows %a", n, k, r, j,
                             (double)y1[j], m, (double)y[r * (n + 3) + j]);
            free(y1);
        }
        /* An odd count of rows (a last row tile of one row, which converts the strip's scales
         * for the tiles of 2 rows before it) gives each row the same bits too. */
        for (size_t mo = 3; mo < m; mo += 8) {
            float *yo = call(obj, x, mo, n, k, NULL);
            for (size_t r = 0; r < mo; r++)
                for (size_t j = 0; j < n; j++)
                    if (memcmp(&yo[r * (n + 3) + j], &y[r * (n + 3) + j], sizeof *yo) != 0)
                        fail_msg("N=%zu K=%zu %zu rows: Y[%zu,%zu] = %a, in %zu rows %a", n, k,
                                 mo, r, j, (double)yo[r * (n + 3) + j], m,
                                 (double)y[r * (n + 3) + j]);
            free(yo);
        }
        h = digest_add(h, y, m * (n + 3) * sizeof *y);
        gemm_rvv_weight_free(obj);
        free(y);
        free(yf);
        free(x);
        free(blocks);
    }
    digest_print("q8_0 special values on plans", h);
}

/* The tiles load the next block's first weights during a block's scales, but not past the
 * weight's last block (gr_tile_args.w_more): a weight whose copy ends where a page no one may
 * read begins serves every call as one placed anywhere else (a read past it stops the
 * program). */
static void test_weight_end_at_page(void **state)
{
    (void)state;
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    for (size_t s = 0; s < 2; s++) {
        const int64_t n = shapes[s][0], k = shapes[s][1];
        size_t bytes;
        assert_int_equal(gemm_rvv_weight_bytes_q8_0(n, k, &bytes), GEMM_RVV_OK);
        const size_t span = (bytes + page - 1) / page * page + page;
        unsigned char *region = aligned_alloc(page, span);
        assert_non_null(region);
        unsigned char *guard = region + span - page, *mem = guard - bytes;
        assert_int_equal(mprotect(guard, page, PROT_NONE), 0);
        unsigned char *blocks = random_blocks((size_t)(n * k / 32), 90 + s);
        gemm_rvv_weight *whole, *obj;
        assert_int_equal(gemm_rvv_weight_create_q8_0(blocks, n, k, &whole), GEMM_RVV_OK);
        assert_int_equal(gemm_rvv_weight_create_in_q8_0(n, k, mem, bytes, &obj), GEMM_RVV_OK);
        assert_int_equal(gemm_rvv_weight_write_q8_0(obj, blocks, 0, (size_t)(n * k / 32)),
                         GEMM_RVV_OK);
        static const size_t ms[] = {1, 5, 12};
        for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
            float *x = strided_x(ms[i], (size_t)k, 95 + i);
            float *got = call(obj, x, ms[i], (size_t)n, (size_t)k, NULL);
            float *want = call(whole, x, ms[i], (size_t)n, (size_t)k, NULL);
            assert_memory_equal(got, want, ms[i] * ((size_t)n + 3) * sizeof *got);
            free(got);
            free(want);
            free(x);
        }
        gemm_rvv_weight_free(obj);
        gemm_rvv_weight_free(whole);
        free(blocks);
        assert_int_equal(mprotect(guard, page, PROT_READ | PROT_WRITE), 0);
        free(region);
    }
}

/* Q8_0 calls are counted under their (N, K, M bucket), by whoever served them. */
static void test_counters(void **state)
{
    (void)state;
    unsigned char *blocks = random_blocks(67 * 3, 60);
    gemm_rvv_weight *obj;
    assert_int_equal(gemm_rvv_weight_create_q8_0(blocks, 67, 96, &obj), GEMM_RVV_OK);
    float *x = strided_x(3, 96, 61);
    gemm_rvv_counters_reset();
    free(call(obj, x, 3, 67, 96, NULL));
    free(call(obj, x, 3, 67, 96, NULL));
    gemm_rvv_counter rows[64];
    size_t count = gemm_rvv_counters(rows, 64), found = 0;
    assert_true(count <= 64);
    int kernels = gemm_rvv_kernels_active() && gemm_rvv_plan_buckets_q8_0(67, 96, NULL, 0) > 0;
    for (size_t i = 0; i < count; i++) {
        if (rows[i].n != 67 || rows[i].k != 96 || rows[i].m_bucket != 4) {
            assert_int_equal(rows[i].kernel_calls + rows[i].fallback_calls, 0);
            continue;
        }
        found++;
        assert_int_equal(rows[i].kernel_calls, kernels ? 2 : 0);
        assert_int_equal(rows[i].fallback_calls, kernels ? 0 : 2);
    }
    assert_int_equal(found, 1);
    if (getenv("GEMM_RVV_TEST_NO_V"))
        assert_false(gemm_rvv_kernels_active());
    gemm_rvv_weight_free(obj);
    free(x);
    free(blocks);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes_and_errors), cmocka_unit_test(test_format_errors),
        cmocka_unit_test(test_write_read),       cmocka_unit_test(test_linear),
        cmocka_unit_test(test_special_values),   cmocka_unit_test(test_ggml_rule),
        cmocka_unit_test(test_fp16_rounding),    cmocka_unit_test(test_special_on_plans),
        cmocka_unit_test(test_counters),         cmocka_unit_test(test_y_over_the_copy),
        cmocka_unit_test(test_weight_end_at_page),
    };
    return cmocka_run_group_tests_name("q8_0", tests, NULL, NULL);
}
