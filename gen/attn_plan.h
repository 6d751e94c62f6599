/* Attention plans: the shapes file's `attention:` entries planned for the target (the rule is
 * docs/numerics.md, "Attention"; the tiles templates/base/attention.c.in). */
#ifndef GEN_ATTN_PLAN_H
#define GEN_ATTN_PLAN_H

/* Positions of one online-softmax step (fixed by the rule) and (query row, head) pairs of one
 * tile at most: a pair's score tile keeps 4 partial sums in vector registers at a time. */
#define ATTN_BLOCK 32
#define ATTN_PAIRS_MAX 4
/* Tiles sharing one widened K block at most: their state (D floats a pair) stays in L1/L2. */
#define ATTN_SHARED_MAX 16

#endif
