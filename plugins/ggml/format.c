/* The weight formats GEMM_RVV packs, one entry each: ggml's type, the unit ggml stores its
 * elements in (a BF16 element; a Q8_0 block of 32), and the library's calls for that format,
 * so that the buffer, the rows and the products are written once for all of them; and which
 * tensors GEMM_RVV packs (grg_packs). */
#include <string.h>

#include "plugin.h"

static gemm_rvv_status bf16_write(gemm_rvv_weight *w, const void *src, size_t first,
                                  size_t count)
{
    return gemm_rvv_weight_write(w, src, first, count);
}

static gemm_rvv_status bf16_read(const gemm_rvv_weight *w, void *dst, size_t first, size_t count)
{
    return gemm_rvv_weight_read(w, dst, first, count);
}

/* ggml's GGML_BF16_TO_FP32: the bits shifted up, exact. */
static void bf16_to_f32(const void *units, size_t count, float *out)
{
    const uint16_t *b = units;
    for (size_t i = 0; i < count; i++) {
        uint32_t bits = (uint32_t)b[i] << 16;
        memcpy(&out[i], &bits, sizeof bits);
    }
}

/* ggml's dequantize_row_q8_0: q * d in FP32, d the block's FP16 scale widened (exact). */
static void q8_0_to_f32(const void *units, size_t count, float *out)
{
    const unsigned char *b = units;
    for (size_t i = 0; i < count; i++, b += GEMM_RVV_Q8_0_BLOCK_BYTES) {
        ggml_fp16_t d16;
        memcpy(&d16, b, sizeof d16);
        float d = ggml_fp16_to_fp32(d16);
        for (int j = 0; j < GEMM_RVV_Q8_0_BLOCK; j++)
            *out++ = (float)(int8_t)b[2 + j] * d;
    }
}

/* The BF16 calls: X rounded to BF16 by the caller (x_bf16). */
static gemm_rvv_status bf16_linear(const void *x, int64_t m, int64_t ldx,
                                   const gemm_rvv_weight *w, void *y, int64_t ldy)
{
    return gemm_rvv_linear(x, m, ldx, w, NULL, y, ldy, GEMM_RVV_F32);
}

static gemm_rvv_status bf16_linear_plain(const void *x, int64_t m, int64_t ldx, const void *w,
                                         int64_t n, int64_t k, int64_t ldw, void *y, int64_t ldy)
{
    return gemm_rvv_linear_plain(x, m, ldx, w, n, k, ldw, NULL, y, ldy, GEMM_RVV_F32);
}

/* Q8_0's: FP32 X as it is, quantised by the library as ggml's CPU backend quantises it. */
static gemm_rvv_status q8_0_linear(const void *x, int64_t m, int64_t ldx,
                                   const gemm_rvv_weight *w, void *y, int64_t ldy)
{
    return gemm_rvv_linear_f32x(x, m, ldx, w, NULL, y, ldy, GEMM_RVV_F32);
}

static const struct grg_format formats[] = {
    {.type = GGML_TYPE_BF16,
     .name = "BF16",
     .unit_bytes = 2,
     .unit_elems = 1,
     .plan_buckets = gemm_rvv_plan_buckets,
     .bytes = gemm_rvv_weight_bytes,
     .create_in = gemm_rvv_weight_create_in,
     .write = bf16_write,
     .read = bf16_read,
     .to_f32 = bf16_to_f32,
     .x_bf16 = true,
     .linear = bf16_linear,
     .linear_plain = bf16_linear_plain,
     .plan_label = "",
     .no_plan = "this build has no plan for its N x K"},
    {.type = GGML_TYPE_Q8_0,
     .name = "Q8_0",
     .unit_bytes = GEMM_RVV_Q8_0_BLOCK_BYTES,
     .unit_elems = GEMM_RVV_Q8_0_BLOCK,
     .plan_buckets = gemm_rvv_plan_buckets_q8_0,
     .bytes = gemm_rvv_weight_bytes_q8_0,
     .create_in = gemm_rvv_weight_create_in_q8_0,
     .write = gemm_rvv_weight_write_q8_0,
     .read = gemm_rvv_weight_read_q8_0,
     .to_f32 = q8_0_to_f32,
     .linear = q8_0_linear,
     .plan_label = "Q8_0 ",
     .no_plan = "this build has no Q8_0 plan for its N x K",
     .packed_only = "a Q8_0 weight is served packed only, and this one is not in GEMM_RVV's "
                    "buffer"},
};

const struct grg_format *grg_format_of(enum ggml_type type)
{
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (formats[i].type == type)
            return &formats[i];
    return NULL;
}

bool grg_has_plans(const struct ggml_tensor *w)
{
    const struct grg_format *fmt = grg_format_of(w->type);
    return fmt && fmt->plan_buckets(w->ne[1], w->ne[0], NULL, 0) > 0;
}

bool grg_weight_2d(const struct ggml_tensor *w)
{
    return w->ne[2] == 1 && w->ne[3] == 1 && ggml_is_contiguous(w);
}

/* llama.cpp's KV cache lives in its layer's device's buffer, and graph nodes write it in
 * ggml's layout: never packed, whatever its type and shape. */
bool grg_kv_cache(const struct ggml_tensor *t)
{
    return strncmp(t->name, "cache_", 6) == 0;
}

bool grg_packs(const struct ggml_tensor *t)
{
    return grg_format_of(t->type) && !t->view_src && grg_weight_2d(t) && !ggml_is_empty(t) &&
           !grg_kv_cache(t) && grg_has_plans(t);
}
