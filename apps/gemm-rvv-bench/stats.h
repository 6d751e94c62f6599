/* Repeated timings summed up: the median and the spread around it. */
#ifndef BENCH_STATS_H
#define BENCH_STATS_H

struct timing {
    double median_s, min_s, max_s; /* seconds per call */
    int reps;                      /* how many timed calls these come from */
};

/* Sorts the samples in place and summarises them. count >= 1. */
struct timing timing_of(double *samples, int count);

/* (max - min) / median, as a fraction. */
double timing_spread(const struct timing *t);

#endif
