/* One gemm_rvv_attention call bracketed by the cache model's markers, for
 * measure/cache/cache_model.c to count its DRAM traffic:
 *   dram_attention f16|bf16 D H_Q H_KV N_Q N_KV [THREADS]
 * The K and V caches in ggml's layout ([N_KV][H_KV][D], one allocation each), FP32 Q and out
 * ([N_Q][H_Q][D]), where DRAM_PLACEMENT puts them (placement.h); N_Q > 1 gets the causal F16
 * mask of a prompt (row i sees positions up to N_KV - N_Q + i), N_Q = 1 none. THREADS
 * (default 1): the library's pool, started before the region opens.
 * Prints the minimum traffic: the caches once (cache_bytes: 2 N_KV H_KV D 2 bytes), Q, the
 * mask and the outputs once (min_bytes: all of them), and where the buffers are. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache_marker.h"
#include "dram_data.h"
#include "../attention_layout.h"
#include "gemm_rvv.h"
#include "placement.h"

static long positive(const char *s, const char *name)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v <= 0) {
        fprintf(stderr, "dram_attention: %s must be a positive integer, got \"%s\"\n", name, s);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    if ((argc != 7 && argc != 8) || (strcmp(argv[1], "f16") && strcmp(argv[1], "bf16"))) {
        fprintf(stderr, "usage: dram_attention f16|bf16 D H_Q H_KV N_Q N_KV [THREADS]\n");
        return 2;
    }
    const int bf16 = strcmp(argv[1], "bf16") == 0;
    const long d = positive(argv[2], "D"), hq = positive(argv[3], "H_Q"),
               hkv = positive(argv[4], "H_KV"), n_q = positive(argv[5], "N_Q"),
               n_kv = positive(argv[6], "N_KV"), threads = argc == 8 ? positive(argv[7], "THREADS") : 1;
    if (n_q > n_kv) {
        fprintf(stderr, "dram_attention: N_Q above N_KV\n");
        return 2;
    }
    struct placement placement = placement_from_env("dram_attention");
    const size_t cache = (size_t)(n_kv * hkv * d), rows = (size_t)(n_q * hq * d);
    uint16_t *k = placement_alloc(&placement, 2 * cache, 2, "dram_attention");
    uint16_t *v = placement_alloc(&placement, 2 * cache, 2, "dram_attention");
    float *q = placement_alloc(&placement, 4 * rows, 4, "dram_attention");
    float *out = placement_alloc(&placement, 4 * rows, 4, "dram_attention");
    uint16_t *mask = n_q > 1 ? placement_alloc(&placement, (size_t)(2 * n_q * n_kv), 2,
                                               "dram_attention") : NULL;
    /* BF16 values in [2^-7, 8); the same patterns as F16 are values in [1, 3). */
    dram_fill_bf16(k, cache, 1);
    dram_fill_bf16(v, cache, 2);
    for (size_t i = 0; i < rows; i++)
        q[i] = (float)((int)(i * 2654435761u >> 20) % 2001 - 1000) / 1024.0f;
    memset(out, 0, 4 * rows);
    attention_causal_mask(mask, n_q, n_kv);
    if (gemm_rvv_set_threads((int)threads) != GEMM_RVV_OK || gemm_rvv_get_threads() != threads) {
        fprintf(stderr, "dram_attention: the pool could not take %ld threads\n", threads);
        return 1;
    }
    /* the workers just started: let them reach their wait for work before the region opens */
    if (threads > 1)
        nanosleep(&(struct timespec){.tv_sec = 1}, NULL);
    const gemm_rvv_type t = bf16 ? GEMM_RVV_BF16 : GEMM_RVV_F16;
    const gemm_rvv_attention_args a =
        attention_ggml_args(t, d, hq, hkv, n_q, n_kv, q, k, v, mask, out);
    cache_model_start();
    const gemm_rvv_status s = gemm_rvv_attention(&a);
    cache_model_stop();
    if (s != GEMM_RVV_OK) {
        fprintf(stderr, "dram_attention: %s\n", gemm_rvv_strerror(s));
        return 1;
    }
    char where[32];
    printf("placement=%s\n", placement_name(&placement, where, sizeof where));
    printf("threads=%ld\n", threads);
    printf("buffer=k addr=%p bytes=%zu\n", (void *)k, 2 * cache);
    printf("buffer=v addr=%p bytes=%zu\n", (void *)v, 2 * cache);
    printf("buffer=q addr=%p bytes=%zu\n", (void *)q, 4 * rows);
    printf("buffer=out addr=%p bytes=%zu\n", (void *)out, 4 * rows);
    printf("cache_bytes=%zu\n", 4 * cache);
    printf("min_bytes=%zu\n", 4 * cache + 8 * rows + (mask ? (size_t)(2 * n_q * n_kv) : 0));
    return 0;
}
