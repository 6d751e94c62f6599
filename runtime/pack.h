/* The packed weight layout the micro-kernels read (gr_contract.h): panels of panel_width
 * columns, each (K + 1) / 2 rows of 32-bit words holding two k-adjacent BF16 weights of one
 * column, zero past N and K. Scalar code, done once per weight object. */
#ifndef GEMM_RVV_PACK_H
#define GEMM_RVV_PACK_H

#include <stddef.h>
#include <stdint.h>

/* Words of the packed form of an [n, k] weight; 0 when that overflows size_t. */
size_t gr_packed_words(size_t n, size_t k, size_t panel_width);

/* Packs W (n rows of k, row stride ldw) into out (gr_packed_words() words), zero past n and k. */
void gr_pack(const uint16_t *w, size_t n, size_t k, size_t ldw, size_t panel_width,
             uint32_t *out);

/* W[row, col] read back from packed words. */
uint16_t gr_packed_get(const uint32_t *packed, size_t k, size_t panel_width, size_t row,
                       size_t col);

#endif
