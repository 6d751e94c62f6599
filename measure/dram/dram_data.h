/* The inputs of the one-call DRAM programs (dram_call.c, dram_variant.c): one generator, so
 * that both measure, and the twin's bit-exactness check compares, the same data. */
#ifndef DRAM_DATA_H
#define DRAM_DATA_H

#include <stddef.h>
#include <stdint.h>

/* v[0 .. count) = BF16 values with |v| in [2^-7, 8), from a linear congruential sequence. */
static inline void dram_fill_bf16(uint16_t *v, size_t count, uint32_t seed)
{
    for (size_t i = 0; i < count; i++) {
        seed = seed * 1664525u + 1013904223u;
        v[i] = (uint16_t)(0x3c00 + (seed >> 20) % 0x600);
    }
}

#endif
