/* The worker pool: threads started once and reused; calls from several engine threads may
 * share it at once. */
#ifndef GEMM_RVV_THREADS_H
#define GEMM_RVV_THREADS_H

#include <stddef.h>

/* Runs fn(ctx, i) for every i in [0, count), on the pool's workers and the calling thread,
 * and returns when all have finished. Which thread runs which i does not change any result. */
void gr_parallel_for(size_t count, void (*fn)(void *ctx, size_t i), void *ctx);

/* Around each public call (its several gr_parallel_for jobs): gr_threads_set waits until no
 * call runs, and calls that begin while it waits wait for it; a running call never waits for
 * a resize. Begin starts the pool if needed. */
void gr_threads_call_begin(void);
void gr_threads_call_end(void);

/* The calls between gr_threads_call_begin and _end now. For tests. */
int gr_threads_calls(void);

/* Threads taking part in a call (the caller counts as one; below 1 means 1). 0 on success,
 * -1 if a thread could not be started (the pool then has as many as could) or count is above
 * GEMM_RVV_MAX_THREADS (the pool then has that many). */
int gr_threads_set(int count);
int gr_threads_get(void);

/* The count before any gr_threads_set: GEMM_RVV_THREADS if it holds a valid count, else the
 * number of online CPUs (at most GEMM_RVV_MAX_THREADS). */
int gr_threads_default(void);

/* Where the workers run (gemm_rvv_set_affinity): the default comes from GEMM_RVV_AFFINITY. */
enum gr_affinity { GR_AFFINITY_NONE = 0, GR_AFFINITY_COMPACT = 1, GR_AFFINITY_SPREAD = 2 };

/* Sets the mode and re-pins the running workers; later pools are pinned when started. 0, or
 * -1 for an unknown mode or when the system refused to pin a worker. */
int gr_threads_set_affinity(int mode);
int gr_threads_get_affinity(void);

/* The one CPU worker `worker` (0-based) is pinned to, as the system reports it, or -1 when it
 * may run on more than one (or there is no such worker). For tests. */
int gr_threads_worker_cpu(int worker);

/* Around fork() (fork.c): the pool's lock is held across it; the child forgets the parent's
 * workers and queue, and starts a pool of its own on its first call. */
void gr_threads_fork_prepare(void);
void gr_threads_fork_parent(void);
void gr_threads_fork_child(void);

#endif
