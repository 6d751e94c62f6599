/* How often each (N, K, M bucket) went to a kernel and how often to the fallback. */
#ifndef GEMM_RVV_COUNTERS_H
#define GEMM_RVV_COUNTERS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct gr_counter {
    uint64_t n, k;
    uint32_t bucket;
    atomic_uint_fast64_t kernel_calls, fallback_calls;
};

/* The M bucket a call is counted under, whoever serves it: 1 for M = 1, else the next power
 * of two (the default buckets), so a kernel call and a fallback call of one M share a row. */
uint32_t gr_count_bucket(size_t m);

/* The counter of (n, k, bucket), created on first use; NULL only when the table is full
 * (4096 shape keys), and then the call is not counted. */
struct gr_counter *gr_counter_for(uint64_t n, uint64_t k, uint32_t bucket);

/* Around fork() (fork.c): the table's lock is held across it. */
void gr_counters_fork_prepare(void);
void gr_counters_fork_parent(void);
void gr_counters_fork_child(void);

#endif
