/* The machine's streaming read bandwidth: threads reading disjoint parts of one buffer far
 * larger than its caches, the way a GEMV reads its weights (vector loads, each byte once). */
#ifndef BENCH_BANDWIDTH_H
#define BENCH_BANDWIDTH_H

#include <stddef.h>

#include "stats.h"

struct bandwidth_run {
    size_t bytes;    /* buffer size */
    int threads;
    const int *cpus; /* pin thread i to cpus[i], or NULL to let the system place them */
    int repeat;      /* timed passes (one untimed pass comes first) */
};

/* Times `repeat` passes over a buffer of `bytes`; fills *out (seconds per pass). 0, or -1 when
 * memory or threads ran out (with a message on stderr). */
int bandwidth_measure(const struct bandwidth_run *run, struct timing *out);

#endif
