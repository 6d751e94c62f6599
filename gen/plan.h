/* From checked shapes to decisions and plans: pure data, no files. */
#ifndef GEN_PLAN_H
#define GEN_PLAN_H

#include <stddef.h>

#include "attn_plan.h"
#include "blocking.h"
#include "gate.h"
#include "plan_fields.h"
#include "shapes.h"
#include "target.h"
#include "tile.h"

#define PLAN_NAME_MAX 80
#define NO_PLAN ((size_t)-1)

/* The two shares of the L2 a plan is blocked for, as GR_L2_ALONE / GR_L2_SHARED. */
enum { SHARE_ALONE = 0, SHARE_CLUSTER = 1, SHARES = 2 };

/* One generated plan: how the runtime blocks one shape key (N, K, M bucket). */
struct plan_row {
    uint64_t n, k;
    enum weight_format format;       /* the layers' `weights:` */
    unsigned bucket;                 /* 1: the GEMV; else the largest M of the block */
    struct tile tile;
    unsigned row_tile_lmul[TILE_MAX_ROWS]; /* BF16: a row tile of r rows runs at [r - 1]
                                            * (tile_row_lmul); 0 elsewhere */
    struct blocking blocking[SHARES]; /* a core alone on the L2; its cluster's cores at once */
    struct blocking plain[SHARES];    /* the same, for plain [N, K] weights (zero: none) */
    int plain_weights;               /* the runtime may run it on plain weights: BF16 only */
    char name[PLAN_NAME_MAX];        /* "bf16_gemm_m16_n4096_k4096", "q8_0_gemv_m1_n..." */
    size_t users;                    /* (layer, M) entries it serves */
};

struct plan_entry {
    size_t layer; /* index into shapes.layers */
    uint64_t m;
    struct decision decision;
    size_t row;   /* index into plan.rows, or NO_PLAN */
};

struct plan {
    struct plan_entry *entries; /* file order: layers as written, M increasing */
    size_t count;
    struct plan_row *rows;      /* sorted by N, K, format, bucket */
    size_t row_count;
    size_t format_rows[WEIGHT_FORMAT_COUNT]; /* plans of each format */
    size_t fallback_count;
    /* The BF16 micro-kernels to emit: for each LMUL (1, 2, 4, 8), tiles of rows
     * tile_rows_from_lmul .. tile_rows_by_lmul, those a call may run (tile_rows_run; 0: none
     * at that LMUL). Q8_0 plans have tiles of their own, gr_q8_0_tiles. */
    unsigned tile_rows_from_lmul[9];
    unsigned tile_rows_by_lmul[9];
    struct target target;
    struct attn_plan attn;      /* the attention entries' plans (gen/attn_plan.h) */
};

/* Returns 0, or -1 when memory ran out (nothing is left allocated). */
int plan_build(const struct shapes *s, const struct gate *g, const struct buckets *b,
               const struct target *t, struct plan *out);
void plan_free(struct plan *p);

/* "bf16_gemv_m1_n4096_k4096", "bf16_gemm_m8_n4096_k4096", "q8_0_gemv_m1_n4096_k4096". */
void plan_name(char *buf, size_t size, enum weight_format format, unsigned bucket, uint64_t n,
               uint64_t k);

/* Whether two plans' blockings by share emit the same fields (the model's figures aside):
 * the plain weights' are then written as "the same blockings". */
int blockings_same(const struct blocking a[SHARES], const struct blocking b[SHARES]);

/* Rows of a Q8_0 plan's tile: 1 for the GEMV, else 2 (gr_q8_0_tiles has both). */
unsigned q8_0_tile_rows(unsigned bucket);

#endif
