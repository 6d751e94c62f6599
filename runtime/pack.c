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

void gr_pack(const uint16_t *w, size_t n, size_t k, size_t ldw, size_t panel_width,
             uint32_t *out)
{
    size_t pairs = k / 2 + k % 2;
    for (size_t base = 0; base < n; base += panel_width) {
        for (size_t p = 0; p < pairs; p++) {
            for (size_t j = 0; j < panel_width; j++) {
                size_t row = base + j;
                uint32_t lo = 0, hi = 0;
                if (row < n) {
                    lo = w[row * ldw + 2 * p];
                    hi = 2 * p + 1 < k ? w[row * ldw + 2 * p + 1] : 0;
                }
                *out++ = lo | hi << 16;
            }
        }
    }
}

uint16_t gr_packed_get(const uint32_t *packed, size_t k, size_t panel_width, size_t row,
                       size_t col)
{
    size_t pairs = k / 2 + k % 2;
    uint32_t word = packed[(row / panel_width * pairs + col / 2) * panel_width + row % panel_width];
    return (uint16_t)(col % 2 ? word >> 16 : word);
}
