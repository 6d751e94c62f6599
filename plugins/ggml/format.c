/* The weight formats GEMM_RVV packs, one entry each: ggml's type, the unit ggml stores its
 * elements in (a BF16 element; a Q8_0 block of 32), and the library's calls for that format,
 * so that the buffer and the products are written once for all of them. */
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
     .to_f32 = bf16_to_f32},
    {.type = GGML_TYPE_Q8_0,
     .name = "Q8_0",
     .unit_bytes = GEMM_RVV_Q8_0_BLOCK_BYTES,
     .unit_elems = GEMM_RVV_Q8_0_BLOCK,
     .plan_buckets = gemm_rvv_plan_buckets_q8_0,
     .bytes = gemm_rvv_weight_bytes_q8_0,
     .create_in = gemm_rvv_weight_create_in_q8_0,
     .write = gemm_rvv_weight_write_q8_0,
     .read = gemm_rvv_weight_read_q8_0,
     .to_f32 = q8_0_to_f32},
};

const struct grg_format *grg_format_of(enum ggml_type type)
{
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (formats[i].type == type)
            return &formats[i];
    return NULL;
}
