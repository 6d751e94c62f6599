/* Scratch memory for calls: blocks kept in a pool and reused, so that a steady-state call
 * allocates nothing. A call takes one block, cut into a shared part and one piece per column
 * piece, before it writes any output. The pool grows with the calls running at once: no count
 * of callers or threads is refused while memory lasts. */
#ifndef GEMM_RVV_SCRATCH_H
#define GEMM_RVV_SCRATCH_H

#include <stddef.h>

/* Every buffer the kernels stream is aligned to this (a cache line of the K1 and most cores). */
#define GR_ALIGN 64

struct gr_pool_block;

/* The scratch one call holds: a shared part and `count` pieces, each GR_ALIGN-aligned. */
struct gr_scratch {
    struct gr_pool_block *block; /* NULL when nothing is held */
    char *base;
    size_t shared_bytes, piece_bytes; /* rounded up to GR_ALIGN */
};

/* Takes one block holding `shared` bytes and `count` pieces of `each` bytes: reused from the
 * pool, grown or allocated where no idle block is big enough. Returns 0, or -1 (out of memory,
 * or sizes that overflow) with s holding nothing. */
int gr_scratch_take(struct gr_scratch *s, size_t shared, size_t count, size_t each);

/* The shared part, and piece i, of what s holds. */
void *gr_scratch_shared(const struct gr_scratch *s);
void *gr_scratch_piece(const struct gr_scratch *s, size_t i);

/* Gives the block of s back to the pool. */
void gr_scratch_give_back(struct gr_scratch *s);

/* Frees every idle block of the pool. */
void gr_scratch_trim(void);

/* Around fork() (fork.c): the pool's lock is held across it; the child marks every block idle,
 * since the calls that held them ran on threads the child does not have. */
void gr_scratch_fork_prepare(void);
void gr_scratch_fork_parent(void);
void gr_scratch_fork_child(void);

/* bytes rounded up to GR_ALIGN; 0 on overflow. */
size_t gr_align_up(size_t bytes);

/* A 64-byte aligned allocation (free with free()); NULL when out of memory or bytes is 0. */
void *gr_alloc_aligned(size_t bytes);

#endif
