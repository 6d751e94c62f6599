/* The smallest complete use of gemm_rvv: pack a Linear layer's BF16 weight once, run it for a
 * decode step (M = 1) and a small batch (M = 4), and check the answers against a plain loop.
 * Build against an installed copy:
 *   cc linear.c $(pkg-config --cflags --libs gemm_rvv) -o linear
 * The shape is Qwen3-0.6B's q_proj (N = 2048, K = 1024), which the default shapes.yaml gives
 * kernels; with another build the same calls run the fallback and give the same bits. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gemm_rvv.h>

enum { N = 2048, K = 1024, M_MAX = 4 };

/* A BF16 value is the top half of an FP32: truncation is enough for made-up data. */
static uint16_t to_bf16(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return (uint16_t)(bits >> 16);
}

static float from_bf16(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* The library's order of operations: the first product, then fused multiply-adds. */
static float reference(const uint16_t *x, const uint16_t *w_row, float bias)
{
    float acc = from_bf16(x[0]) * from_bf16(w_row[0]);
    for (int k = 1; k < K; k++)
        acc = fmaf(from_bf16(x[k]), from_bf16(w_row[k]), acc);
    return acc + bias;
}

int main(void)
{
    uint16_t *w = malloc((size_t)N * K * sizeof *w);
    uint16_t *x = malloc((size_t)M_MAX * K * sizeof *x);
    float *x_f32 = malloc((size_t)M_MAX * K * sizeof *x_f32);
    float *bias = malloc(N * sizeof *bias), *y = malloc((size_t)M_MAX * N * sizeof *y);
    if (!w || !x || !x_f32 || !bias || !y)
        return 1;
    for (size_t i = 0; i < (size_t)N * K; i++)
        w[i] = to_bf16((float)((i * 7919) % 41) / 32.0f - 0.625f);
    /* An engine's activations are often FP32: the library rounds them to BF16. */
    for (size_t i = 0; i < (size_t)M_MAX * K; i++)
        x_f32[i] = (float)((i * 104729) % 23) / 16.0f - 0.6875f;
    gemm_rvv_status s = gemm_rvv_round_bf16(x_f32, (int64_t)M_MAX * K, x);
    if (s != GEMM_RVV_OK) {
        fprintf(stderr, "round_bf16: %s\n", gemm_rvv_strerror(s));
        return 1;
    }
    for (int n = 0; n < N; n++)
        bias[n] = (float)(n % 5) * 0.25f;

    gemm_rvv_weight *weight;
    s = gemm_rvv_weight_create(w, N, K, K, &weight);
    if (s != GEMM_RVV_OK) {
        fprintf(stderr, "weight_create: %s\n", gemm_rvv_strerror(s));
        return 1;
    }
    int wrong = 0;
    unsigned long long digest = 14695981039346656037ull; /* FNV-1a of Y's bits */
    for (int m = 1; m <= M_MAX; m += 3) { /* M = 1, then M = 4 */
        s = gemm_rvv_linear(x, m, K, weight, bias, y, N, GEMM_RVV_F32);
        if (s != GEMM_RVV_OK) {
            fprintf(stderr, "linear: %s\n", gemm_rvv_strerror(s));
            return 1;
        }
        for (int r = 0; r < m; r++)
            for (int n = 0; n < N; n++)
                wrong += memcmp(&y[r * N + n], &(float){reference(x + r * K, w + n * K, bias[n])},
                                sizeof(float)) != 0;
        printf("M=%d: y[0][0..3] = %g %g %g %g\n", m, y[0], y[1], y[2], y[3]);
        for (size_t i = 0; i < (size_t)m * N * sizeof *y; i++)
            digest = (digest ^ ((const unsigned char *)y)[i]) * 1099511628211ull;
    }
    printf("digest: outputs %016llx (the same bits on every core)\n", digest);
    gemm_rvv_weight_free(weight);
    printf("gemm_rvv %s, %d threads, kernels %s\n", gemm_rvv_version(), gemm_rvv_get_threads(),
           gemm_rvv_kernels_active() ? "active" : "off (fallback only)");
    gemm_rvv_counters_print(stdout);
    printf("%s: %d of %d outputs differ from the reference\n", wrong ? "FAILED" : "ok", wrong,
           5 * N);
    free(w);
    free(x);
    free(x_f32);
    free(bias);
    free(y);
    return wrong != 0;
}
