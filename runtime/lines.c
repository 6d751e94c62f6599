#include "lines.h"

#define LINE_K (GR_LINE_BYTES / 2) /* BF16 elements of a line */

struct gr_k_blocks gr_k_blocks_lines(size_t k, size_t block, uintptr_t rows, size_t ld_bytes,
                                     size_t step)
{
    struct gr_k_blocks b = {k, block < k ? block : k, block < k ? block : k};
    if (b.block == 0)
        b.first = b.block = 1;
    const size_t o = rows % GR_LINE_BYTES;
    if (b.block >= k || o == 0 || o % 2 || ld_bytes % GR_LINE_BYTES || b.block % LINE_K)
        return b;
    /* later blocks start at line position 0, or at its last k where an odd offset meets
     * blocks of even starts */
    const size_t e0 = o / 2, target = e0 % step ? LINE_K - 1 : 0;
    const size_t first = (target + LINE_K - e0) % LINE_K; /* the least such start */
    if (first > 0)
        b.first = first + (b.block - first) / LINE_K * LINE_K;
    return b;
}

size_t gr_k_block_end(const struct gr_k_blocks *b, size_t k0)
{
    size_t end = k0 == 0 ? b->first : k0 + b->block;
    return end < b->k ? end : b->k;
}

size_t gr_k_carry(uintptr_t row, size_t k, size_t kk)
{
    const size_t into = (row + 2 * kk) % GR_LINE_BYTES;
    if (kk == 0 || kk >= k || into == 0)
        return 0;
    const size_t rest = (GR_LINE_BYTES - into) / 2;
    return rest < k - kk ? rest : k - kk;
}

int gr_y_from_partials(uintptr_t y, size_t ldy_bytes, size_t strip_bytes, int strips_order,
                       size_t k_blocks)
{
    return strips_order && k_blocks > 1 &&
           (y % GR_LINE_BYTES || ldy_bytes % GR_LINE_BYTES || strip_bytes % GR_LINE_BYTES);
}

size_t gr_y_line_col(uintptr_t y, size_t y_bytes, size_t col, size_t done)
{
    const uintptr_t line = (y + col * y_bytes) / GR_LINE_BYTES * GR_LINE_BYTES;
    if (line <= y || y % y_bytes)
        return done;
    size_t at = (size_t)(line - y) / y_bytes;
    return at > done ? at : done;
}

size_t gr_y_tail(uintptr_t y, size_t y_bytes, size_t ldy_bytes, size_t col_end, size_t piece_end)
{
    if (col_end >= piece_end || ldy_bytes % GR_LINE_BYTES)
        return col_end;
    const size_t at = gr_y_line_col(y, y_bytes, col_end, 0); /* 0: no line starts in the row */
    return at ? at : col_end;
}
