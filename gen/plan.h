/* From checked shapes to decisions and kernel specs: pure data, no files. */
#ifndef GEN_PLAN_H
#define GEN_PLAN_H

#include <stddef.h>

#include "gate.h"
#include "shapes.h"
#include "tile.h"

#define KERNEL_NAME_MAX 64
#define NO_KERNEL ((size_t)-1)

/* One generated kernel. Its code depends on K, the M bucket and the tile, not on N: the
 * columns are walked in strips of VLMAX, a run-time number, so every N of the same (K, bucket)
 * shares it. The registry then lists it once per N. */
struct kernel_spec {
    unsigned bucket; /* 1: the M=1 GEMV kernel; else the largest M of a GEMM kernel */
    uint64_t k;
    struct tile tile;
    char name[KERNEL_NAME_MAX]; /* "bf16_gemm_m8_k4096": types, kind, bucket, K */
    size_t users;               /* how many (layer, M) entries map to it */
};

/* A registry row: the shape key (N, K, bucket) and its kernel. */
struct registry_row {
    uint64_t n, k;
    unsigned bucket;
    size_t kernel; /* index into plan.kernels */
};

struct plan_entry {
    size_t layer;    /* index into shapes.layers */
    uint64_t m;
    struct decision decision;
    size_t kernel;   /* index into plan.kernels, or NO_KERNEL */
};

struct plan {
    struct plan_entry *entries; /* file order: layers as written, M increasing */
    size_t count;
    struct kernel_spec *kernels; /* ordered by K, bucket */
    size_t kernel_count;
    struct registry_row *rows;   /* ordered by N, K, bucket */
    size_t row_count;
    size_t fallback_count;
};

int plan_build(const struct shapes *s, const struct gate *g, const struct buckets *b,
               struct plan *out);
void plan_free(struct plan *p);

/* "bf16_gemv_m1_k4096" or "bf16_gemm_m8_k4096". */
void kernel_name(char *buf, size_t size, unsigned bucket, uint64_t k);

#endif
