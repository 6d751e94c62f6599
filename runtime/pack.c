#include "pack.h"

size_t gr_packed_words(size_t n, size_t k, size_t panel_width)
{
    size_t panels = n / panel_width + (n % panel_width != 0);
    size_t pairs = k / 2 + k % 2, words;
    if (__builtin_mul_overflow(panels, panel_width, &words) ||
        __builtin_mul_overflow(words, pairs, &words) || words > SIZE_MAX / sizeof(uint32_t))
        return 0;
    return words;
}

/* W[row, col], zero past n and k. */
static uint16_t weight(const uint16_t *w, size_t n, size_t k, size_t ldw, size_t row, size_t col)
{
    return row < n && col < k ? w[row * ldw + col] : 0;
}

void gr_pack(const uint16_t *w, size_t n, size_t k, size_t ldw, size_t panel_width,
             uint32_t layout, void *out)
{
    const size_t pairs = k / 2 + k % 2;
    uint32_t *word = out;
    uint16_t *half = out;
    for (size_t base = 0; base < n; base += panel_width) {
        for (size_t p = 0; p < pairs; p++) {
            if (layout == GR_LAYOUT_PAIRS) {
                for (size_t j = 0; j < panel_width; j++)
                    *word++ = weight(w, n, k, ldw, base + j, 2 * p) |
                              (uint32_t)weight(w, n, k, ldw, base + j, 2 * p + 1) << 16;
                continue;
            }
            for (size_t kk = 2 * p; kk < 2 * p + 2; kk++)
                for (size_t j = 0; j < panel_width; j++)
                    *half++ = weight(w, n, k, ldw, base + j, kk);
        }
    }
}

/* Where W[row, col] sits in packed weights: its 16-bit slot. */
static size_t slot(uint32_t layout, size_t k, size_t panel_width, size_t row, size_t col)
{
    const size_t pairs = k / 2 + k % 2;
    const size_t panel = row / panel_width * pairs * panel_width; /* in words */
    if (layout == GR_LAYOUT_PAIRS)
        return 2 * (panel + col / 2 * panel_width + row % panel_width) + col % 2;
    return 2 * panel + col * panel_width + row % panel_width;
}

static void set_one(void *packed, uint32_t layout, size_t k, size_t panel_width, size_t e,
                    uint16_t value)
{
    ((uint16_t *)packed)[slot(layout, k, panel_width, e / k, e % k)] = value;
}

void gr_pack_zero_padding(size_t n, size_t k, size_t panel_width, uint32_t layout, void *packed)
{
    const size_t pairs = k / 2 + k % 2, rows = (n + panel_width - 1) / panel_width * panel_width;
    uint16_t *half = packed;
    for (size_t row = n; row < rows; row++)
        for (size_t col = 0; col < 2 * pairs; col++)
            half[slot(layout, k, panel_width, row, col)] = 0;
    if (k % 2)
        for (size_t row = 0; row < n; row++)
            half[slot(layout, k, panel_width, row, k)] = 0;
}

void gr_pack_range(const uint16_t *src, size_t first, size_t count, size_t n, size_t k,
                   size_t panel_width, uint32_t layout, void *packed)
{
    const size_t end = first + count, pairs = k / 2 + k % 2;
    /* The whole panels inside the range (the last panel ends at n, zero-padded past it). */
    size_t p0 = (first / k + (first % k != 0) + panel_width - 1) / panel_width;
    size_t row_end = end / k, p1 = row_end == n ? (n + panel_width - 1) / panel_width
                                                : row_end / panel_width;
    if (p1 <= p0) {
        for (size_t e = first; e < end; e++)
            set_one(packed, layout, k, panel_width, e, src[e - first]);
        return;
    }
    size_t from = p0 * panel_width * k, to = p1 * panel_width * k < n * k ? p1 * panel_width * k
                                                                          : n * k;
    for (size_t e = first; e < from; e++)
        set_one(packed, layout, k, panel_width, e, src[e - first]);
    gr_pack(src + (from - first), to / k - from / k, k, k, panel_width, layout,
            (uint32_t *)packed + p0 * panel_width * pairs);
    for (size_t e = to; e < end; e++)
        set_one(packed, layout, k, panel_width, e, src[e - first]);
}

uint16_t gr_packed_get(const void *packed, uint32_t layout, size_t k, size_t panel_width,
                       size_t row, size_t col)
{
    return ((const uint16_t *)packed)[slot(layout, k, panel_width, row, col)];
}
