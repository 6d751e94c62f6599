/* gemm-rvv-bench's output: the tables on stdout and the optional CSV file. */
#ifndef BENCH_REPORT_H
#define BENCH_REPORT_H

#include <stdio.h>

#include "shape_bench.h"
#include "shape_list.h"
#include "stats.h"

/* The read bandwidth at each thread count measured (threads[i] -> bw[i]). */
struct bandwidth_table {
    int threads[MAX_THREAD_COUNTS + 2];
    struct timing time[MAX_THREAD_COUNTS + 2];
    double gbs[MAX_THREAD_COUNTS + 2];
    int count;
    size_t bytes;
    const char *loads; /* how the buffer was read: "vector" or "64-bit scalar" */
};

void report_bandwidth(const struct bandwidth_table *bw);

/* The best bandwidth measured: the board's read bandwidth; *threads gets its thread count. */
double report_best_bandwidth(const struct bandwidth_table *bw, int *threads);

void report_rows_header(void);
void report_rows(const struct bench_shape *s, const struct shape_result *r,
                 const struct bench_config *cfg, const struct bandwidth_table *bw, FILE *csv,
                 int emulated);
void report_csv_header(FILE *csv);

/* The packed path's GMAC/s by thread count, with the speed-up over the first count. */
void report_scaling(const struct shape_list *shapes, const struct shape_result *results,
                    const struct bench_config *cfg);

/* Per shape: the best weight traffic reached, as a share of the board's read bandwidth. */
void report_summary(const struct shape_list *shapes, const struct shape_result *results,
                    const struct bench_config *cfg, const struct bandwidth_table *bw);

#endif
