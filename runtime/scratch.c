/* One mutex guards the pool: a short list scan per call, no allocation once every block a
 * workload needs has been made. Blocks are never freed: a pool holds what the largest calls
 * needed, per concurrent thread (docs/runtime.md says how much). */
#include "scratch.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#define POOL_MAX 1024

struct pool_block {
    void *ptr;
    size_t bytes;
    int busy;
};

static struct pool_block pool[POOL_MAX];
static size_t pool_used;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

size_t gr_align_up(size_t bytes)
{
    if (bytes > SIZE_MAX - (GR_ALIGN - 1))
        return 0;
    return (bytes + GR_ALIGN - 1) / GR_ALIGN * GR_ALIGN;
}

void *gr_alloc_aligned(size_t bytes)
{
    size_t size = gr_align_up(bytes);
    return size ? aligned_alloc(GR_ALIGN, size) : NULL;
}

/* The smallest idle block of at least `bytes`, or else the largest idle one (to grow), or
 * else a new slot; NULL when the pool is full. Called with the lock held. */
static struct pool_block *pick(size_t bytes)
{
    struct pool_block *fit = NULL, *grow = NULL;
    for (size_t i = 0; i < pool_used; i++) {
        struct pool_block *b = &pool[i];
        if (b->busy)
            continue;
        if (b->bytes >= bytes && (!fit || b->bytes < fit->bytes))
            fit = b;
        if (b->bytes < bytes && (!grow || b->bytes > grow->bytes))
            grow = b;
    }
    if (fit)
        return fit;
    if (grow)
        return grow;
    return pool_used < POOL_MAX ? &pool[pool_used++] : NULL;
}

static void release(struct gr_scratch *s, size_t from)
{
    for (size_t i = from; i < s->count; i++)
        for (size_t j = 0; j < pool_used; j++)
            if (pool[j].busy && pool[j].ptr == s->block[i]) {
                pool[j].busy = 0;
                break;
            }
    s->count = from;
}

int gr_scratch_take(struct gr_scratch *s, size_t count, size_t bytes)
{
    size_t from = s->count;
    if (count > GR_SCRATCH_MAX - s->count)
        return -1;
    if (bytes == 0)
        bytes = GR_ALIGN;
    pthread_mutex_lock(&pool_lock);
    for (size_t i = 0; i < count; i++) {
        struct pool_block *b = pick(bytes);
        if (b && b->bytes < bytes) {
            void *p = gr_alloc_aligned(bytes);
            if (p) {
                free(b->ptr);
                b->ptr = p;
                b->bytes = gr_align_up(bytes);
            }
        }
        if (!b || b->bytes < bytes) {
            release(s, from);
            pthread_mutex_unlock(&pool_lock);
            return -1;
        }
        b->busy = 1;
        s->block[s->count++] = b->ptr;
    }
    pthread_mutex_unlock(&pool_lock);
    return 0;
}

void gr_scratch_give_back(struct gr_scratch *s)
{
    pthread_mutex_lock(&pool_lock);
    release(s, 0);
    pthread_mutex_unlock(&pool_lock);
}

void gr_scratch_trim(void)
{
    pthread_mutex_lock(&pool_lock);
    for (size_t i = 0; i < pool_used; i++)
        if (!pool[i].busy) {
            free(pool[i].ptr);
            pool[i].ptr = NULL;
            pool[i].bytes = 0;
        }
    pthread_mutex_unlock(&pool_lock);
}
