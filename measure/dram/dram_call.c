/* One Linear call through the public API, bracketed by the cache model's markers, for
 * measure/cache/cache_model.c to count its DRAM traffic:
 *   dram_call PATH M N K [THREADS]
 * PATH: packed (gemm_rvv_linear on a weight object: packing at create is outside the region),
 * plain (gemm_rvv_linear_plain on [N, K] weights), fallback (the same, fallback forced), q8
 * (gemm_rvv_linear_f32x on a Q8_0 weight object, FP32 X: its minimum counts the GGUF blocks,
 * 34 bytes per 32 weights, and 4 bytes per activation).
 * THREADS (default 1): the library's pool (gemm_rvv_set_threads), set before the weight is
 * made, so its workers exist before the region opens (vCPUs 1 to THREADS - 1 under QEMU, the
 * caller vCPU 0) and the call takes the blocking the runtime picks for that count. No call
 * runs before the measured one, on any thread count. F32 output, no bias; X, W and Y where
 * DRAM_PLACEMENT puts them (placement.h).
 * Prints what served the call (kernel or fallback, from the library's counters) and the
 * minimum traffic: the weights once (N * K BF16; the packed copy is no smaller), the BF16
 * activations once and the F32 outputs once, and where X, W and Y are. Uses nothing but
 * gemm_rvv.h, so it builds against any version of the library. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache_marker.h"
#include "dram_data.h"
#include "gemm_rvv.h"
#include "placement.h"

static struct placement placement;

static uint16_t *bf16_data(size_t count, uint32_t seed)
{
    uint16_t *v = placement_alloc(&placement, count * sizeof *v, sizeof *v, "dram_call");
    dram_fill_bf16(v, count, seed);
    return v;
}

static void check(gemm_rvv_status s, const char *what)
{
    if (s != GEMM_RVV_OK) {
        fprintf(stderr, "dram_call: %s: %s\n", what, gemm_rvv_strerror(s));
        exit(1);
    }
}

static long positive(const char *s, const char *name)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v <= 0) {
        fprintf(stderr, "dram_call: %s must be a positive integer, got \"%s\"\n", name, s);
        exit(2);
    }
    return v;
}

/* Q8_0 blocks: FP16 scales of 2^-8 .. 2^-5, values over the whole int8 range; X in FP32. */
static unsigned char *q8_data(size_t blocks)
{
    unsigned char *b = placement_alloc(&placement, blocks * GEMM_RVV_Q8_0_BLOCK_BYTES, 1,
                                       "dram_call");
    uint32_t seed = 2;
    for (size_t i = 0; i < blocks * GEMM_RVV_Q8_0_BLOCK_BYTES; i++) {
        seed = seed * 1664525u + 1013904223u;
        b[i] = (unsigned char)(i % GEMM_RVV_Q8_0_BLOCK_BYTES == 1 ? 0x1c + (seed >> 30)
                                                                   : seed >> 24);
    }
    return b;
}

static float *f32_data(size_t count)
{
    float *x = placement_alloc(&placement, count * sizeof *x, sizeof *x, "dram_call");
    for (size_t i = 0; i < count; i++)
        x[i] = (float)((int)(i * 2654435761u >> 20) % 2001 - 1000) / 256.0f;
    return x;
}

int main(int argc, char **argv)
{
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: dram_call packed|plain|fallback|q8 M N K [THREADS]\n");
        return 2;
    }
    const char *path = argv[1];
    int64_t m = positive(argv[2], "M"), n = positive(argv[3], "N"), k = positive(argv[4], "K");
    long threads = argc == 6 ? positive(argv[5], "THREADS") : 1;
    int packed = strcmp(path, "packed") == 0, q8 = strcmp(path, "q8") == 0;
    if (!packed && !q8 && strcmp(path, "plain") != 0 && strcmp(path, "fallback") != 0) {
        fprintf(stderr, "dram_call: unknown path \"%s\" (packed, plain, fallback, q8)\n", path);
        return 2;
    }
    placement = placement_from_env("dram_call");
    uint16_t *x = NULL, *w = NULL;
    unsigned char *q8_w = NULL;
    float *x_f = NULL;
    if (q8) {
        q8_w = q8_data((size_t)(n * k / GEMM_RVV_Q8_0_BLOCK));
        x_f = f32_data((size_t)(m * k));
    } else {
        x = bf16_data((size_t)(m * k), 1);
        w = bf16_data((size_t)(n * k), 2);
    }
    float *y = placement_alloc(&placement, (size_t)(m * n) * sizeof *y, sizeof *y, "dram_call");
    memset(y, 0, (size_t)(m * n) * sizeof *y);
    check(gemm_rvv_set_threads((int)threads), "set_threads");
    if (gemm_rvv_get_threads() != threads) {
        fprintf(stderr, "dram_call: the pool has %d threads, not %ld\n", gemm_rvv_get_threads(),
                threads);
        return 1;
    }
    /* The workers just started: let them reach their wait for work before the region opens
     * (a plain call opens it at once; under QEMU on a loaded host they took over a second). */
    if (threads > 1)
        nanosleep(&(struct timespec){.tv_sec = 1}, NULL);
    gemm_rvv_force_fallback(strcmp(path, "fallback") == 0);
    gemm_rvv_weight *weight = NULL;
    if (packed)
        check(gemm_rvv_weight_create(w, n, k, k, &weight), "weight_create");
    if (q8)
        check(gemm_rvv_weight_create_q8_0(q8_w, n, k, &weight), "weight_create_q8_0");

    cache_model_start();
    gemm_rvv_status s;
    if (q8)
        s = gemm_rvv_linear_f32x(x_f, m, k, weight, NULL, y, n, GEMM_RVV_F32);
    else if (packed)
        s = gemm_rvv_linear(x, m, k, weight, NULL, y, n, GEMM_RVV_F32);
    else
        s = gemm_rvv_linear_plain(x, m, k, w, n, k, k, NULL, y, n, GEMM_RVV_F32);
    cache_model_stop();
    check(s, "linear");

    gemm_rvv_counter rows[64];
    size_t count = gemm_rvv_counters(rows, 64), kernel_calls = 0;
    for (size_t i = 0; i < count && i < 64; i++)
        kernel_calls += rows[i].kernel_calls;
    char where[32];
    printf("served=%s\n", kernel_calls ? "kernel" : "fallback");
    printf("placement=%s\n", placement_name(&placement, where, sizeof where));
    printf("threads=%ld\n", threads);
    /* for telling the caller's buffers from the library's in the plugin's regions= map */
    const long long x_bytes = q8 ? m * k * 4 : m * k * 2;
    const long long w_bytes =
        q8 ? n * k / GEMM_RVV_Q8_0_BLOCK * GEMM_RVV_Q8_0_BLOCK_BYTES : n * k * 2;
    printf("buffer=x addr=%p bytes=%lld\n", q8 ? (void *)x_f : (void *)x, x_bytes);
    printf("buffer=w addr=%p bytes=%lld\n", q8 ? (void *)q8_w : (void *)w, w_bytes);
    printf("buffer=y addr=%p bytes=%lld\n", (void *)y, (long long)(m * n * 4));
    printf("min_bytes=%lld\n", w_bytes + x_bytes + m * n * 4);
    gemm_rvv_weight_free(weight);
    return 0;
}
