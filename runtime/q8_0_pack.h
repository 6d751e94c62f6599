/* Packed Q8_0 weights, the layout of gr_contract.h's "Q8_0 micro-kernels": panels of pw =
 * VLMAX(e8, m1) columns (zero past N), per block of 32 k the panel's FP16 scales then 32 rows
 * of its int8. Written and read back a GGUF block at a time. */
#ifndef GEMM_RVV_Q8_0_PACK_H
#define GEMM_RVV_Q8_0_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "gr_contract.h"

/* Bytes of the packed form of an [n, k] Q8_0 weight; 0 when that overflows size_t. */
size_t gr_q8_packed_bytes(size_t n, size_t k, size_t pw);

/* Blocks [first, first + count) of the weight (block b = row * k / 32 + kb), 34 bytes each at
 * src, into packed weights: the FP16 scale's two bytes as they are, the values. */
void gr_q8_pack_blocks(const unsigned char *src, size_t first, size_t count, size_t k, size_t pw,
                       void *packed);

/* The same blocks read back into dst as GGUF blocks: the FP16 bits as stored, exactly. */
void gr_q8_packed_read(const void *packed, size_t first, size_t count, size_t k, size_t pw,
                       unsigned char *dst);

/* Zeroes the slots of columns past n in the last panel (scales and values), which the tiles
 * read; the weight's own slots are left as they are. */
void gr_q8_pack_zero_padding(size_t n, size_t k, size_t pw, void *packed);

/* Column col's scale of block kb as FP32 (gr_fp16_to_f32), and its 32 values, one panel row
 * (pw bytes) apart. */
float gr_q8_packed_scale(const void *packed, size_t k, size_t pw, size_t col, size_t kb);
const int8_t *gr_q8_packed_values(const void *packed, size_t k, size_t pw, size_t col, size_t kb);

#endif
