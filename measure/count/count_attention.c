/* One gemm_rvv_attention call, for the instruction counter: ggml's layout, 9 query heads on 3
 * KV heads (issue 40's shape), head dim D, N_Q query rows over N_KV cache positions, one
 * thread. A decoded token (N_Q = 1) has no mask; a prompt (N_Q > 1) the causal mask of its last
 * N_Q positions (row i sees positions up to N_KV - N_Q + i), as llama.cpp gives it. Prints the
 * call's attention MACs as issue 40 counts them (QK and PV, masked or not: 2 N_Q N_KV D H_q),
 * then those of the positions the mask leaves (2 D H_q times the live positions).
 *   count_attention f16|bf16 D N_Q N_KV */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../attention_layout.h"
#include "gemm_rvv.h"

#define HQ 9
#define HKV 3

int main(int argc, char **argv)
{
    if (argc != 5 || (strcmp(argv[1], "f16") != 0 && strcmp(argv[1], "bf16") != 0)) {
        fprintf(stderr, "usage: %s f16|bf16 D N_Q N_KV\n", argv[0]);
        return 2;
    }
    const int bf16 = strcmp(argv[1], "bf16") == 0;
    const long d = atol(argv[2]), n_q = atol(argv[3]), n_kv = atol(argv[4]);
    if (d < 8 || n_q < 1 || n_kv < n_q) {
        fprintf(stderr, "count_attention: D >= 8 and 1 <= N_Q <= N_KV\n");
        return 2;
    }
    const gemm_rvv_type t = bf16 ? GEMM_RVV_BF16 : GEMM_RVV_F16;
    float *q = malloc(sizeof(float) * d * HQ * n_q), *out = malloc(sizeof(float) * d * HQ * n_q);
    uint16_t *k = malloc(2 * d * HKV * n_kv), *v = malloc(2 * d * HKV * n_kv);
    uint16_t *mask = n_q > 1 ? malloc(2 * n_q * n_kv) : NULL;
    if (!q || !out || !k || !v || (n_q > 1 && !mask))
        return 2;
    /* Values of moderate size: |q| < 1, K and V in [0.25, 1) (F16) or [1, 2) (BF16). */
    for (long i = 0; i < d * HQ * n_q; i++)
        q[i] = (float)(i * 37 % 101 - 50) / 64;
    for (long i = 0; i < d * HKV * n_kv; i++) {
        k[i] = (uint16_t)(bf16 ? 0x3f80 + i * 7919 % 127 : 0x3400 + i * 7919 % 2047);
        v[i] = (uint16_t)(bf16 ? 0x3f80 + i * 104729 % 127 : 0x3400 + i * 104729 % 2047);
    }
    attention_causal_mask(mask, n_q, n_kv);
    gemm_rvv_set_threads(1);
    const gemm_rvv_attention_args a =
        attention_ggml_args(t, d, HQ, HKV, n_q, n_kv, q, k, v, mask, out);
    const gemm_rvv_status s = gemm_rvv_attention(&a);
    if (s != GEMM_RVV_OK) {
        fprintf(stderr, "%s\n", gemm_rvv_strerror(s));
        return 1;
    }
    const long live = n_q * (n_kv - n_q) + n_q * (n_q + 1) / 2;
    printf("%ld %ld\n", 2 * n_q * n_kv * d * HQ, 2 * live * d * HQ);
    return 0;
}
