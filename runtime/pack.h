/* The packed weight layouts the micro-kernels read (enum gr_layout in gr_contract.h): panels
 * of panel_width columns, (K + 1) / 2 * 4 bytes per column in either layout, zero past N and
 * K; inside a panel, 32-bit words of a k-pair (GR_LAYOUT_PAIRS, the base variant's) or BF16
 * rows of one k (GR_LAYOUT_ROWS, Zvfbfwma's). Scalar code, done once per weight object. */
#ifndef GEMM_RVV_PACK_H
#define GEMM_RVV_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "gr_contract.h"

/* Bytes of one element of a layout, and its rows for kc k (one per k-pair, or per k). */
static inline size_t gr_layout_bytes(uint32_t layout)
{
    return layout == GR_LAYOUT_PAIRS ? 4 : 2;
}

static inline size_t gr_layout_rows(uint32_t layout, size_t kc)
{
    return layout == GR_LAYOUT_PAIRS ? (kc + 1) / 2 : kc;
}

/* 32-bit words of the packed form of an [n, k] weight (either layout); 0 when that overflows
 * size_t. */
size_t gr_packed_words(size_t n, size_t k, size_t panel_width);

/* Packs W (n rows of k, row stride ldw) into out (gr_packed_words() words) in `layout`. */
void gr_pack(const uint16_t *w, size_t n, size_t k, size_t ldw, size_t panel_width,
             uint32_t layout, void *out);

/* W[row, col] read back from packed weights. */
uint16_t gr_packed_get(const void *packed, uint32_t layout, size_t k, size_t panel_width,
                       size_t row, size_t col);

/* Zeroes the slots of packed weights that hold no element of an [n, k] weight (columns past n
 * in the last panel, the second half of the last k-pair when k is odd), which the kernels
 * read; the elements' slots are left as they are. */
void gr_pack_zero_padding(size_t n, size_t k, size_t panel_width, uint32_t layout, void *packed);

/* Writes `count` elements of W, row-major from element `first`, into packed weights of an
 * [n, k] weight (first + count <= n * k): whole panels at once, the rest one at a time. */
void gr_pack_range(const uint16_t *src, size_t first, size_t count, size_t n, size_t k,
                   size_t panel_width, uint32_t layout, void *packed);

#endif
