/* gemm-rvv-bench's command line. */
#ifndef BENCH_OPTIONS_H
#define BENCH_OPTIONS_H

#include <stddef.h>

#include "shape_bench.h"
#include "shape_list.h"

struct bench_options {
    struct shape_list shapes;   /* empty: the shapes the library was built for */
    struct bench_config config; /* thread_counts 0: 1, 2, 4, ... up to every CPU */
    const char *csv;            /* NULL: no CSV file */
    const char *affinity;       /* NULL: the library's (GEMM_RVV_AFFINITY) */
    long cold_mib, bw_mib;      /* -1: chosen from the caches */
};

/* Fills *o from argv. Returns 0 to go on, 1 after --help or --version (exit 0), 2 after a
 * usage error, 3 after a bad shapes file (both reported on stderr). */
int options_parse(int argc, char **argv, struct bench_options *o);

#endif
