/* Packed Q8_0 weights (gr_contract.h, "Q8_0 micro-kernels"): panels of pw columns, per block
 * the columns' FP16 scales (GGUF's bits) then 32 rows of their int8. Scalar code, run once per write. */
#include "q8_0_pack.h"

#include <string.h>

#include "format.h"
#include "q8_0_scale.h"

size_t gr_q8_packed_bytes(size_t n, size_t k, size_t pw)
{
    size_t panels = n / pw + (n % pw != 0), bytes;
    if (__builtin_mul_overflow(panels, pw, &bytes) ||
        __builtin_mul_overflow(bytes, k / GR_Q8_BLOCK * GR_Q8_PANEL_BLOCK_BYTES, &bytes))
        return 0;
    return bytes;
}

/* Where block kb of column col starts: its scale; its q follow pw * GR_Q8_SCALE_BYTES bytes
 * later, one panel row (pw bytes) apart. */
static unsigned char *block_at(void *packed, size_t k, size_t pw, size_t col, size_t kb)
{
    return (unsigned char *)packed + gr_panel_offset(&gr_format_q8_0, k, pw, col, kb);
}

void gr_q8_pack_blocks(const unsigned char *src, size_t first, size_t count, size_t k, size_t pw,
                       void *packed)
{
    const size_t kb_count = k / GR_Q8_BLOCK;
    for (size_t b = first; b < first + count; b++, src += GR_Q8_BLOCK_BYTES) {
        size_t col = b / kb_count, j = col % pw;
        unsigned char *at = block_at(packed, k, pw, col, b % kb_count);
        at[j * GR_Q8_SCALE_BYTES] = src[0];
        at[j * GR_Q8_SCALE_BYTES + 1] = src[1];
        for (size_t i = 0; i < GR_Q8_BLOCK; i++)
            at[GR_Q8_SCALE_BYTES * pw + i * pw + j] = src[2 + i];
    }
}

void gr_q8_packed_read(const void *packed, size_t first, size_t count, size_t k, size_t pw,
                       unsigned char *dst)
{
    const size_t kb_count = k / GR_Q8_BLOCK;
    for (size_t b = first; b < first + count; b++, dst += GR_Q8_BLOCK_BYTES) {
        size_t col = b / kb_count, j = col % pw;
        const unsigned char *at = block_at((void *)packed, k, pw, col, b % kb_count);
        dst[0] = at[j * GR_Q8_SCALE_BYTES];
        dst[1] = at[j * GR_Q8_SCALE_BYTES + 1];
        for (size_t i = 0; i < GR_Q8_BLOCK; i++)
            dst[2 + i] = at[GR_Q8_SCALE_BYTES * pw + i * pw + j];
    }
}

void gr_q8_pack_zero_padding(size_t n, size_t k, size_t pw, void *packed)
{
    if (n % pw == 0)
        return;
    for (size_t kb = 0; kb < k / GR_Q8_BLOCK; kb++) {
        unsigned char *at = block_at(packed, k, pw, n - n % pw, kb);
        const size_t used = n % pw;
        memset(at + used * GR_Q8_SCALE_BYTES, 0, (pw - used) * GR_Q8_SCALE_BYTES);
        for (size_t i = 0; i < GR_Q8_BLOCK; i++)
            memset(at + GR_Q8_SCALE_BYTES * pw + i * pw + used, 0, pw - used);
    }
}

float gr_q8_packed_scale(const void *packed, size_t k, size_t pw, size_t col, size_t kb)
{
    return gr_fp16_to_f32(
        gr_q8_scale_bits(block_at((void *)packed, k, pw, col, kb) + col % pw * GR_Q8_SCALE_BYTES));
}

const int8_t *gr_q8_packed_values(const void *packed, size_t k, size_t pw, size_t col, size_t kb)
{
    return (const int8_t *)(block_at((void *)packed, k, pw, col, kb) + GR_Q8_SCALE_BYTES * pw +
                            col % pw);
}
