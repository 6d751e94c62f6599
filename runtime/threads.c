/* One mutex guards the queue of running jobs and each job's counters; the work itself runs
 * unlocked. A job lives on its caller's stack, so the caller waits until no worker still
 * holds it (refs) as well as until every item is done. */
#define _GNU_SOURCE /* pthread_setaffinity_np and the CPU_* macros */
#include "threads.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include "fork.h"
#include "gemm_rvv.h"
#include "settings.h"

#define MAX_THREADS GEMM_RVV_MAX_THREADS

struct job {
    void (*fn)(void *ctx, size_t i);
    void *ctx;
    size_t count, next, done;
    int refs;          /* workers inside this job */
    struct job *link;  /* the queue */
};

static struct {
    pthread_mutex_t lock;
    pthread_cond_t work;     /* a job was queued, or workers must stop */
    pthread_cond_t finished; /* a job's last item finished, or a worker left a job */
    pthread_cond_t idle;     /* the queue became empty */
    struct job *head;
    pthread_t workers[MAX_THREADS];
    int worker_count;
    int threads;             /* participants per call: workers + the caller */
    int wanted;              /* the count last set, or 0: gr_threads_default() */
    int stopping, resizing, started;
    int calls;               /* public calls running (gr_threads_call_begin to _end) */
    int affinity;            /* a gr_affinity */
    int affinity_chosen;     /* set by a call or read from the environment */
    int cpus[MAX_THREADS];   /* the CPUs the process may run on, read when first pinning */
    int cpu_count;
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
          PTHREAD_COND_INITIALIZER, NULL, {0}, 0, 1, 0, 0, 0, 0, 0, GR_AFFINITY_NONE, 0, {0}, 0};

static void unlink_job(struct job *j)
{
    for (struct job **p = &pool.head; *p; p = &(*p)->link) {
        if (*p == j) {
            *p = j->link;
            break;
        }
    }
    if (!pool.head)
        pthread_cond_broadcast(&pool.idle);
}

/* Takes and runs items of j until none is left. Called and returns with the lock held. */
static void work_on(struct job *j)
{
    while (j->next < j->count) {
        size_t i = j->next++;
        if (j->next == j->count)
            unlink_job(j); /* nothing left to hand out */
        pthread_mutex_unlock(&pool.lock);
        j->fn(j->ctx, i);
        pthread_mutex_lock(&pool.lock);
        if (++j->done == j->count)
            pthread_cond_broadcast(&pool.finished);
    }
}

static void *worker_main(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&pool.lock);
    for (;;) {
        while (!pool.head && !pool.stopping)
            pthread_cond_wait(&pool.work, &pool.lock);
        if (pool.stopping)
            break;
        struct job *j = pool.head;
        j->refs++;
        work_on(j);
        if (--j->refs == 0)
            pthread_cond_broadcast(&pool.finished);
    }
    pthread_mutex_unlock(&pool.lock);
    return NULL;
}

/* ---- affinity ------------------------------------------------------------------------------
 * The caller of a call is participant 0 and stays where the engine put it; worker w is
 * participant w + 1. compact puts participant i on the i-th allowed CPU (so four threads stay
 * in one cluster when the CPUs are numbered cluster by cluster, as on the K1); spread spaces
 * the participants evenly over the allowed CPUs. */

static void read_allowed_cpus(void)
{
    cpu_set_t set;
    pool.cpu_count = 0;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int c = 0; c < CPU_SETSIZE && pool.cpu_count < MAX_THREADS; c++)
            if (CPU_ISSET(c, &set))
                pool.cpus[pool.cpu_count++] = c;
}

/* The CPU of participant i of n under the current mode, or -1 for "any allowed CPU". */
static int cpu_of(int i, int n)
{
    if (pool.affinity == GR_AFFINITY_NONE || pool.cpu_count == 0)
        return -1;
    int slot = pool.affinity == GR_AFFINITY_SPREAD && n <= pool.cpu_count
                   ? (int)((long)i * pool.cpu_count / n)
                   : i;
    return pool.cpus[slot % pool.cpu_count];
}

/* Pins worker w (or lets it run on every allowed CPU again). 0, or -1 if the system refused. */
static int pin_worker(int w)
{
    if (pool.cpu_count == 0)
        return 0; /* nothing known to pin to: leave the worker as it was started */
    cpu_set_t set;
    CPU_ZERO(&set);
    int cpu = cpu_of(w + 1, pool.worker_count + 1);
    if (cpu >= 0)
        CPU_SET(cpu, &set);
    else
        for (int c = 0; c < pool.cpu_count; c++)
            CPU_SET(pool.cpus[c], &set);
    return pthread_setaffinity_np(pool.workers[w], sizeof set, &set) == 0 ? 0 : -1;
}

static int pin_workers(void)
{
    int rc = 0;
    for (int w = 0; w < pool.worker_count; w++)
        if (pin_worker(w) != 0)
            rc = -1;
    return rc;
}

/* The mode GEMM_RVV_AFFINITY gives, unless a call chose one already. Lock held. */
static void affinity_from_env(void)
{
    pool.affinity = gr_settings()->affinity;
    pool.affinity_chosen = 1;
}

/* Stops every worker and starts count - 1 new ones. Called with the lock held and no job
 * queued; returns with the lock held. */
static int restart_workers(int count)
{
    pool.stopping = 1;
    pthread_cond_broadcast(&pool.work);
    int old = pool.worker_count;
    pthread_mutex_unlock(&pool.lock);
    for (int i = 0; i < old; i++)
        pthread_join(pool.workers[i], NULL);
    pthread_mutex_lock(&pool.lock);
    pool.stopping = 0;
    pool.worker_count = 0;
    int rc = 0;
    for (int i = 0; i < count - 1 && i < MAX_THREADS; i++) {
        if (pthread_create(&pool.workers[i], NULL, worker_main, NULL) != 0) {
            rc = -1;
            break;
        }
        pool.worker_count++;
    }
    pool.threads = pool.worker_count + 1;
    if (!pool.affinity_chosen)
        affinity_from_env();
    if (pool.cpu_count == 0)
        read_allowed_cpus(); /* the starting thread's set: taskset or the engine's choice */
    if (pool.affinity != GR_AFFINITY_NONE && pin_workers() != 0)
        rc = -1;
    return rc;
}

int gr_threads_default(void)
{
    if (gr_settings()->threads > 0)
        return gr_settings()->threads;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus < 1 ? 1 : cpus > MAX_THREADS ? MAX_THREADS : (int)cpus;
}

/* Resizes once no call is running (a call is several jobs: the queue empties between them);
 * calls that arrive meanwhile wait for it. */
static int resize(int count)
{
    while (pool.resizing)
        pthread_cond_wait(&pool.idle, &pool.lock);
    pool.resizing = 1;
    while (pool.calls > 0 || pool.head)
        pthread_cond_wait(&pool.idle, &pool.lock);
    int rc = restart_workers(count);
    pool.started = 1;
    pool.resizing = 0;
    pthread_cond_broadcast(&pool.idle);
    return rc;
}

/* Starts the pool unless it runs already or is being started or resized: a first call that
 * meets gr_threads_set waits for it and keeps the count it set. While calls run, a resize
 * only waits for them, and they (and what they ask) must not wait for it. Lock held. */
static void start_if_needed(void)
{
    while (pool.resizing && pool.calls == 0)
        pthread_cond_wait(&pool.idle, &pool.lock);
    if (!pool.started)
        resize(pool.wanted ? pool.wanted : gr_threads_default());
}

int gr_threads_set(int count)
{
    int rc = 0;
    if (count < 1)
        count = 1;
    if (count > MAX_THREADS) {
        count = MAX_THREADS;
        rc = -1;
    }
    pthread_mutex_lock(&pool.lock);
    while (pool.resizing)
        pthread_cond_wait(&pool.idle, &pool.lock);
    pool.wanted = count;
    /* The same count again keeps the running workers: engines set it before every graph. */
    if (!(pool.started && pool.threads == count) && resize(count) != 0)
        rc = -1;
    pthread_mutex_unlock(&pool.lock);
    return rc;
}

int gr_threads_get(void)
{
    pthread_mutex_lock(&pool.lock);
    start_if_needed();
    int n = pool.threads;
    pthread_mutex_unlock(&pool.lock);
    return n;
}

void gr_parallel_for(size_t count, void (*fn)(void *ctx, size_t i), void *ctx)
{
    struct job j = {fn, ctx, count, 0, 0, 0, NULL};
    if (count == 0)
        return;
    pthread_mutex_lock(&pool.lock);
    start_if_needed();
    if (pool.worker_count > 0 && count > 1) {
        struct job **tail = &pool.head;
        while (*tail)
            tail = &(*tail)->link;
        *tail = &j;
        pthread_cond_broadcast(&pool.work);
        work_on(&j);
        while (j.done < j.count || j.refs > 0)
            pthread_cond_wait(&pool.finished, &pool.lock);
        pthread_mutex_unlock(&pool.lock);
        return;
    }
    pthread_mutex_unlock(&pool.lock);
    for (size_t i = 0; i < count; i++)
        fn(ctx, i);
}

void gr_threads_call_begin(void)
{
    pthread_mutex_lock(&pool.lock);
    while (pool.resizing)
        pthread_cond_wait(&pool.idle, &pool.lock);
    start_if_needed();
    pool.calls++;
    pthread_mutex_unlock(&pool.lock);
}

void gr_threads_call_end(void)
{
    pthread_mutex_lock(&pool.lock);
    if (--pool.calls == 0)
        pthread_cond_broadcast(&pool.idle);
    pthread_mutex_unlock(&pool.lock);
}

int gr_threads_calls(void)
{
    pthread_mutex_lock(&pool.lock);
    int n = pool.calls;
    pthread_mutex_unlock(&pool.lock);
    return n;
}

/* Waits while workers are being stopped (the only time a resize lets the lock go), so that
 * the worker list is complete. A resize still waiting for calls is not waited for: a call on
 * plain weights may need the scratch or counter lock that a fork holds by then. Lock held. */
static void wait_workers(void)
{
    while (pool.stopping)
        pthread_cond_wait(&pool.idle, &pool.lock);
}

int gr_threads_set_affinity(int mode)
{
    if (mode != GR_AFFINITY_NONE && mode != GR_AFFINITY_COMPACT && mode != GR_AFFINITY_SPREAD)
        return -1;
    pthread_mutex_lock(&pool.lock);
    wait_workers();
    if (pool.cpu_count == 0)
        read_allowed_cpus();
    pool.affinity = mode;
    pool.affinity_chosen = 1;
    int rc = pin_workers(); /* running calls go on: only where their threads run changes */
    pthread_mutex_unlock(&pool.lock);
    return rc;
}

int gr_threads_get_affinity(void)
{
    pthread_mutex_lock(&pool.lock);
    if (!pool.affinity_chosen)
        affinity_from_env();
    int mode = pool.affinity;
    pthread_mutex_unlock(&pool.lock);
    return mode;
}

int gr_threads_worker_cpu(int worker)
{
    cpu_set_t set;
    int cpu = -1;
    pthread_mutex_lock(&pool.lock);
    wait_workers();
    if (worker >= 0 && worker < pool.worker_count &&
        pthread_getaffinity_np(pool.workers[worker], sizeof set, &set) == 0 &&
        CPU_COUNT(&set) == 1)
        for (int c = 0; c < CPU_SETSIZE && cpu < 0; c++)
            if (CPU_ISSET(c, &set))
                cpu = c;
    pthread_mutex_unlock(&pool.lock);
    return cpu;
}

/* ---- fork -------------------------------------------------------------------------------- */

/* The pool's lock is held across fork(), once no worker is stopping (workers start with the
 * lock held), so the child's copy of the queue and counts is whole; the child has none of the
 * workers, so it forgets them (never joining them) and starts its own pool at the count last
 * set on its first call. */
void gr_threads_fork_prepare(void)
{
    pthread_mutex_lock(&pool.lock);
    wait_workers();
}

void gr_threads_fork_parent(void) { pthread_mutex_unlock(&pool.lock); }

void gr_threads_fork_child(void)
{
    pool.head = NULL;
    pool.calls = 0; /* the parent's callers are not in the child */
    pool.worker_count = 0;
    pool.threads = 1;
    pool.stopping = pool.resizing = pool.started = 0;
    /* Threads of the parent may have waited on these: the child's start afresh. */
    pthread_cond_init(&pool.work, NULL);
    pthread_cond_init(&pool.finished, NULL);
    pthread_cond_init(&pool.idle, NULL);
    pthread_mutex_unlock(&pool.lock);
}

/* Registered when the library is loaded, as OpenBLAS does, so that no fork finds a call half
 * way through the library's locks. */
__attribute__((constructor)) static void register_fork_handlers(void) { gr_fork_register(); }

/* ---- the API -------------------------------------------------------------------------------- */

gemm_rvv_status gemm_rvv_set_threads(int count)
{
    return gr_threads_set(count) == 0 ? GEMM_RVV_OK : GEMM_RVV_ERR_THREADS;
}

int gemm_rvv_get_threads(void) { return gr_threads_get(); }

gemm_rvv_status gemm_rvv_set_affinity(gemm_rvv_affinity mode)
{
    return gr_threads_set_affinity((int)mode) == 0 ? GEMM_RVV_OK : GEMM_RVV_ERR_THREADS;
}

gemm_rvv_affinity gemm_rvv_get_affinity(void)
{
    return (gemm_rvv_affinity)gr_threads_get_affinity();
}
