/* One gemm_rvv_attention call of a decoded token, for the instruction counter: ggml's layout,
 * n_q query rows, 9 query heads on 3 KV heads (the shape), D = 128, n_kv positions,
 * one thread, no mask. Prints the call's attention MACs (QK and PV: 2 n_q n_kv D H_q).
 *   count_attention f16|bf16 N_KV [N_Q] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_rvv.h"

#define D 128
#define HQ 9
#define HKV 3

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "f16") != 0 && strcmp(argv[1], "bf16") != 0)) {
        fprintf(stderr, "usage: %s f16|bf16 N_KV [N_Q]\n", argv[0]);
        return 2;
    }
    const int bf16 = strcmp(argv[1], "bf16") == 0;
    const long n_kv = atol(argv[2]), n_q = argc > 3 ? atol(argv[3]) : 1;
    const gemm_rvv_type t = bf16 ? GEMM_RVV_BF16 : GEMM_RVV_F16;
    float *q = malloc(sizeof(float) * D * HQ * n_q), *out = malloc(sizeof(float) * D * HQ * n_q);
    uint16_t *k = malloc(2 * D * HKV * n_kv), *v = malloc(2 * D * HKV * n_kv);
    if (n_kv < 1 || n_q < 1 || !q || !out || !k || !v)
        return 2;
    /* Values of moderate size: |q| < 1, K and V in [0.25, 1) (F16) or [1, 2) (BF16). */
    for (long i = 0; i < D * HQ * n_q; i++)
        q[i] = (float)(i * 37 % 101 - 50) / 64;
    for (long i = 0; i < D * HKV * n_kv; i++) {
        k[i] = (uint16_t)(bf16 ? 0x3f80 + i * 7919 % 127 : 0x3400 + i * 7919 % 2047);
        v[i] = (uint16_t)(bf16 ? 0x3f80 + i * 104729 % 127 : 0x3400 + i * 104729 % 2047);
    }
    gemm_rvv_set_threads(1);
    const gemm_rvv_attention_args a = {
        .n_q = n_q, .n_kv = n_kv, .head_dim = D, .q_heads = HQ, .kv_heads = HKV, .q = q,
        .q_row_stride = HQ * D, .q_head_stride = D, .k = k, .k_pos_stride = HKV * D,
        .k_head_stride = D, .k_type = t, .v = v, .v_pos_stride = HKV * D, .v_head_stride = D,
        .v_type = t, .scale = 0.0884f, .out = out, .out_row_stride = HQ * D,
        .out_head_stride = D};
    const gemm_rvv_status s = gemm_rvv_attention(&a);
    if (s != GEMM_RVV_OK) {
        fprintf(stderr, "%s\n", gemm_rvv_strerror(s));
        return 1;
    }
    printf("%ld\n", 2 * n_q * n_kv * D * HQ);
    return 0;
}
