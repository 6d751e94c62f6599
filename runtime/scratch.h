/* Scratch memory for calls: blocks kept in a pool and reused, so that a steady-state call
 * allocates nothing. A call takes every block it needs before it writes any output. */
#ifndef GEMM_RVV_SCRATCH_H
#define GEMM_RVV_SCRATCH_H

#include <stddef.h>

/* Most blocks one call holds: one per participating thread, plus one shared. */
#define GR_SCRATCH_MAX 260

/* Every buffer the kernels stream is aligned to this (a cache line of the K1 and most cores). */
#define GR_ALIGN 64

struct gr_scratch {
    void *block[GR_SCRATCH_MAX];
    size_t count;
};

/* Adds `count` blocks of at least `bytes` (64-byte aligned) to s: reused from the pool, grown
 * or allocated where none is big enough. All or nothing: returns 0, or -1 (out of memory)
 * with s as it was. */
int gr_scratch_take(struct gr_scratch *s, size_t count, size_t bytes);

/* Gives every block of s back to the pool. */
void gr_scratch_give_back(struct gr_scratch *s);

/* Frees every idle block of the pool. */
void gr_scratch_trim(void);

/* bytes rounded up to GR_ALIGN; 0 on overflow. */
size_t gr_align_up(size_t bytes);

/* A 64-byte aligned allocation (free with free()); NULL when out of memory or bytes is 0. */
void *gr_alloc_aligned(size_t bytes);

#endif
