/* Attention plans: the shapes file's `attention:` entries planned for the target (the rule is
 * docs/numerics.md, "Attention"; the tiles templates/base/attention.c.in). Pure data, no files:
 * emit.c, manifest.c and explain.c print what attn_plan_build decides. */
#ifndef GEN_ATTN_PLAN_H
#define GEN_ATTN_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "shapes.h"

/* Positions of one online-softmax step (fixed by the rule) and (query row, head) pairs of one
 * tile at most: a pair's score tile keeps 4 partial sums in vector registers at a time. */
#define ATTN_BLOCK 32
#define ATTN_PAIRS_MAX 4
/* Tiles sharing one widened K block at most (the runtime keeps their state on its stack). */
#define ATTN_SHARED_MAX 16
/* Bytes of the accumulators of the tiles that share a K block (pairs x head_dim floats a
 * tile) at most: they stay in L1 with the widened K block. */
#define ATTN_SHARED_ACC_BYTES (16u << 10)
/* The widest head planned: the score tile's scratch, head_dim x ATTN_BLOCK floats, is then at
 * most 32 KiB (a K1's L1D). Wider heads run the scalar fallback. */
#define ATTN_HEAD_DIM_PLANNED 256
#define ATTN_NAME_MAX 80

/* One attention plan: a struct gr_attn_plan of registry.c. */
struct attn_row {
    uint64_t head_dim, q_heads, kv_heads;
    enum kv_type k_type, v_type;
    uint64_t n_q;           /* the bucket: calls of up to n_q query rows (1: decoding) */
    unsigned pairs;         /* (row, head) pairs of a KV head a tile takes, 1 .. ATTN_PAIRS_MAX */
    unsigned shared;        /* tiles that share each widened K block, 1 .. ATTN_SHARED_MAX */
    char name[ATTN_NAME_MAX]; /* "attn_f16_d128_h16_kv8_q1", "attn_kf16_vbf16_d64_h8_kv8_q128" */
    char why[240];          /* how its tiles take the pairs, in words */
    size_t users;           /* (entry, n_q) it serves */
};

/* One (attention entry, n_q) of the shapes file and what serves it. */
struct attn_entry {
    size_t attention;           /* index into shapes.attention */
    uint64_t n_q;
    const struct attn_row *row; /* NULL: the scalar fallback */
    char reason[160];           /* why the fallback; "" for a plan */
};

struct attn_plan {
    struct attn_entry *entries; /* file order: entries as written, n_q increasing */
    size_t count;
    struct attn_row *rows;      /* sorted by (head_dim, q_heads, kv_heads, k_type, v_type, n_q),
                                 * as gr_attn_registry */
    size_t row_count;
    size_t fallback_count;
};

/* Returns 0, or -1 when memory ran out (nothing is left allocated). */
int attn_plan_build(const struct shapes *s, struct attn_plan *out);
void attn_plan_free(struct attn_plan *p);

/* The K and V caches' types in words (`words`: kv_type_words or others): `same` (one %s) when
 * they are one type, else `apart` (two). */
void attn_types_text(char *buf, size_t size, const char *const words[KV_TYPE_COUNT],
                     enum kv_type k, enum kv_type v, const char *same, const char *apart);

/* The pairs of a tile for calls of up to n_q rows of a KV head serving `group` query heads:
 * every pair of such a call, ATTN_PAIRS_MAX at most. Decoding (n_q = 1): the group's heads,
 * which share each K and V block read; prompts: ATTN_PAIRS_MAX, rows then heads. */
unsigned attn_pairs(uint64_t n_q, uint64_t group);

/* The tiles of such a call that one thread runs block by block together, so that each K block
 * is widened once for them: all of a KV head's tiles, as many as keep their accumulators
 * within ATTN_SHARED_ACC_BYTES, ATTN_SHARED_MAX at most, 1 at least. */
unsigned attn_shared(uint64_t n_q, uint64_t group, unsigned pairs, uint64_t head_dim);

#endif
