/* Times one shape through the library's three paths at each thread count: the kernel on
 * packed weight objects (gemm_rvv_linear), the kernel on plain [N, K] arrays
 * (gemm_rvv_linear_plain), and the scalar fallback (gemm_rvv_force_fallback). Weights are cold:
 * calls rotate over a set of copies larger than the caches, so no call finds its weights in
 * the cache the previous call filled. */
#ifndef BENCH_SHAPE_BENCH_H
#define BENCH_SHAPE_BENCH_H

#include <stddef.h>

#include "shape_list.h"
#include "stats.h"

enum bench_path { PATH_PACKED, PATH_PLAIN, PATH_FALLBACK, PATH_COUNT };
extern const char *const bench_path_names[PATH_COUNT];

#define MAX_THREAD_COUNTS 16

struct bench_config {
    int threads[MAX_THREAD_COUNTS];
    int thread_counts;
    int repeat;          /* timed calls per (path, thread count) */
    double max_seconds;  /* ... unless they take longer than this (at least one is timed) */
    size_t cold_bytes;   /* the weight set of a shape is at least this large */
};

struct path_result {
    struct timing time;
    int by_kernel; /* a generated kernel served the calls (the counters say so) */
};

struct shape_result {
    struct path_result path[PATH_COUNT][MAX_THREAD_COUNTS];
    size_t copies;  /* weight objects the calls rotate over */
    int agree;      /* the three paths gave the same bits */
};

/* 0, or -1 when memory or the library failed (with a message on stderr). */
int shape_bench_run(const struct bench_shape *s, const struct bench_config *cfg,
                    struct shape_result *out);

#endif
