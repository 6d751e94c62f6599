/* One mutex guards the queue of running jobs and each job's counters; the work itself runs
 * unlocked. A job lives on its caller's stack, so the caller waits until no worker still
 * holds it (refs) as well as until every item is done. */
#include "threads.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#define MAX_THREADS 256

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
    int stopping, resizing, started;
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
          PTHREAD_COND_INITIALIZER, NULL, {0}, 0, 1, 0, 0, 0};

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
    return rc;
}

int gr_threads_default(void)
{
    const char *env = getenv("GEMM_RVV_THREADS");
    if (env) {
        char *end;
        long n = strtol(env, &end, 10);
        if (*env && !*end && n > 0)
            return n > MAX_THREADS ? MAX_THREADS : (int)n;
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus < 1 ? 1 : cpus > MAX_THREADS ? MAX_THREADS : (int)cpus;
}

/* Resizes once no call is running; calls that arrive meanwhile wait for it. */
static int resize(int count)
{
    while (pool.resizing)
        pthread_cond_wait(&pool.idle, &pool.lock);
    pool.resizing = 1;
    while (pool.head)
        pthread_cond_wait(&pool.idle, &pool.lock);
    int rc = restart_workers(count);
    pool.started = 1;
    pool.resizing = 0;
    pthread_cond_broadcast(&pool.idle);
    return rc;
}

int gr_threads_set(int count)
{
    if (count < 1)
        count = 1;
    if (count > MAX_THREADS)
        count = MAX_THREADS;
    pthread_mutex_lock(&pool.lock);
    int rc = resize(count);
    pthread_mutex_unlock(&pool.lock);
    return rc;
}

int gr_threads_get(void)
{
    pthread_mutex_lock(&pool.lock);
    if (!pool.started)
        resize(gr_threads_default());
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
    if (!pool.started)
        resize(gr_threads_default());
    while (pool.resizing)
        pthread_cond_wait(&pool.idle, &pool.lock);
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
