/* The worker pool: threads started once and reused; calls from several engine threads may
 * share it at once. */
#ifndef GEMM_RVV_THREADS_H
#define GEMM_RVV_THREADS_H

#include <stddef.h>

/* Runs fn(ctx, i) for every i in [0, count), on the pool's workers and the calling thread,
 * and returns when all have finished. Which thread runs which i does not change any result. */
void gr_parallel_for(size_t count, void (*fn)(void *ctx, size_t i), void *ctx);

/* Threads taking part in a call (the caller counts as one). 0 on success, -1 if a thread
 * could not be started (the pool then has as many as could). */
int gr_threads_set(int count);
int gr_threads_get(void);

/* The count before any gr_threads_set: GEMM_RVV_THREADS if set to a positive number, else the
 * number of online CPUs. */
int gr_threads_default(void);

#endif
