/* The Q8_0 weight calls: objects made, written and read in GGUF's blocks. The object itself
 * (its lock, its form, the live list) is weight.c's, shared with BF16. */
#include <string.h>

#include "isa.h"
#include "q8_0.h"
#include "q8_0_pack.h"
#include "weight.h"

/* Blocks [first, first + count) from src into the object's copy: packed, or as they are. */
static void store_blocks(struct gemm_rvv_weight *obj, const unsigned char *src, size_t first,
                         size_t count)
{
    if (obj->packed)
        gr_q8_pack_blocks(src, first, count, obj->k, obj->panel_width, obj->packed);
    else
        memcpy(obj->q8 + first * GR_Q8_BLOCK_BYTES, src, count * GR_Q8_BLOCK_BYTES);
}

gemm_rvv_status gemm_rvv_weight_create_q8_0(const void *blocks, int64_t n, int64_t k,
                                            gemm_rvv_weight **out)
{
    gemm_rvv_status s;
    if ((s = gr_isa_status()) != GEMM_RVV_OK)
        return s;
    if (!blocks || !out)
        return GEMM_RVV_ERR_NULL;
    struct gemm_rvv_weight *obj;
    if ((s = gr_weight_new(GR_FORMAT_Q8_0, n, k, NULL, 0, &obj)) != GEMM_RVV_OK)
        return s;
    if (obj->packed)
        gr_q8_pack_zero_padding(obj->n, obj->k, obj->panel_width, obj->packed);
    store_blocks(obj, blocks, 0, obj->n * (obj->k / GR_Q8_BLOCK));
    gr_weight_publish(obj, out);
    return GEMM_RVV_OK;
}

gemm_rvv_status gemm_rvv_weight_bytes_q8_0(int64_t n, int64_t k, size_t *bytes)
{
    return gr_weight_form_bytes(GR_FORMAT_Q8_0, n, k, bytes);
}

gemm_rvv_status gemm_rvv_weight_create_in_q8_0(int64_t n, int64_t k, void *mem,
                                               size_t mem_bytes, gemm_rvv_weight **out)
{
    return gr_weight_create_in(GR_FORMAT_Q8_0, n, k, mem, mem_bytes, out);
}

gemm_rvv_status gemm_rvv_weight_write_q8_0(gemm_rvv_weight *weight, const void *src,
                                           size_t first_block, size_t blocks)
{
    gemm_rvv_status s = gr_weight_check_range(weight, GR_FORMAT_Q8_0, src, first_block, blocks);
    if (s != GEMM_RVV_OK || (s = gr_weight_lock(weight)) != GEMM_RVV_OK)
        return s;
    store_blocks(weight, src, first_block, blocks);
    gr_weight_unlock(weight);
    return GEMM_RVV_OK;
}

gemm_rvv_status gemm_rvv_weight_read_q8_0(const gemm_rvv_weight *weight, void *dst,
                                          size_t first_block, size_t blocks)
{
    gemm_rvv_status s = gr_weight_check_range(weight, GR_FORMAT_Q8_0, dst, first_block, blocks);
    if (s != GEMM_RVV_OK || (s = gr_weight_hold(weight)) != GEMM_RVV_OK)
        return s;
    if (weight->packed)
        gr_q8_packed_read(weight->packed, first_block, blocks, weight->k, weight->panel_width,
                          dst);
    else
        memcpy(dst, weight->q8 + first_block * GR_Q8_BLOCK_BYTES, blocks * GR_Q8_BLOCK_BYTES);
    gr_weight_release(weight);
    return GEMM_RVV_OK;
}
