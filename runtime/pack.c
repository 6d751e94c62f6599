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

uint16_t gr_packed_get(const void *packed, uint32_t layout, size_t k, size_t panel_width,
                       size_t row, size_t col)
{
    const size_t pairs = k / 2 + k % 2;
    const size_t panel = row / panel_width * pairs * panel_width; /* in words */
    if (layout == GR_LAYOUT_PAIRS) {
        uint32_t word = ((const uint32_t *)packed)[panel + col / 2 * panel_width +
                                                   row % panel_width];
        return (uint16_t)(col % 2 ? word >> 16 : word);
    }
    return ((const uint16_t *)packed)[2 * panel + col * panel_width + row % panel_width];
}
