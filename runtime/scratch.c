/* One mutex guards the pool, a list of blocks: a short scan per call, no allocation once every
 * block a workload needs has been made. The list grows by one block per call running at once
 * (a call holds one block), so concurrency is limited by memory alone. */
#include "scratch.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "gemm_rvv.h"

struct gr_pool_block {
    void *ptr;
    size_t bytes;
    int busy;
    struct gr_pool_block *next;
};

static struct gr_pool_block *pool;
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

/* The smallest idle block of at least `bytes`, else the largest idle one (to grow), else a
 * new empty one added to the list; NULL when even that cannot be allocated. Lock held. */
static struct gr_pool_block *pick(size_t bytes)
{
    struct gr_pool_block *fit = NULL, *grow = NULL;
    for (struct gr_pool_block *b = pool; b; b = b->next) {
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
    struct gr_pool_block *b = calloc(1, sizeof *b);
    if (b) {
        b->next = pool;
        pool = b;
    }
    return b;
}

/* shared + count * each, each part rounded up to GR_ALIGN; 0 on overflow. */
static size_t total_bytes(size_t shared, size_t count, size_t each, size_t *shared_a,
                          size_t *each_a)
{
    size_t total;
    *shared_a = shared ? gr_align_up(shared) : 0;
    *each_a = gr_align_up(each ? each : 1);
    if ((shared && !*shared_a) || !*each_a || __builtin_mul_overflow(count, *each_a, &total) ||
        __builtin_add_overflow(total, *shared_a, &total))
        return 0;
    return total ? total : GR_ALIGN;
}

int gr_scratch_take(struct gr_scratch *s, size_t shared, size_t count, size_t each)
{
    size_t shared_a, each_a, total = total_bytes(shared, count, each, &shared_a, &each_a);
    s->block = NULL;
    if (total == 0)
        return -1;
    pthread_mutex_lock(&pool_lock);
    struct gr_pool_block *b = pick(total);
    if (b && b->bytes < total) {
        void *p = gr_alloc_aligned(total);
        if (p) {
            free(b->ptr);
            b->ptr = p;
            b->bytes = total;
        }
    }
    if (!b || b->bytes < total) {
        pthread_mutex_unlock(&pool_lock);
        return -1;
    }
    b->busy = 1;
    pthread_mutex_unlock(&pool_lock);
    *s = (struct gr_scratch){b, b->ptr, shared_a, each_a};
    return 0;
}

void *gr_scratch_shared(const struct gr_scratch *s) { return s->base; }

void *gr_scratch_piece(const struct gr_scratch *s, size_t i)
{
    return s->base + s->shared_bytes + i * s->piece_bytes;
}

void gr_scratch_give_back(struct gr_scratch *s)
{
    if (!s->block)
        return;
    pthread_mutex_lock(&pool_lock);
    s->block->busy = 0;
    pthread_mutex_unlock(&pool_lock);
    s->block = NULL;
}

void gr_scratch_trim(void)
{
    pthread_mutex_lock(&pool_lock);
    for (struct gr_pool_block **p = &pool; *p;) {
        struct gr_pool_block *b = *p;
        if (b->busy) {
            p = &b->next;
            continue;
        }
        *p = b->next;
        free(b->ptr);
        free(b);
    }
    pthread_mutex_unlock(&pool_lock);
}

void gemm_rvv_release_memory(void) { gr_scratch_trim(); }

void gr_scratch_fork_prepare(void) { pthread_mutex_lock(&pool_lock); }

void gr_scratch_fork_parent(void) { pthread_mutex_unlock(&pool_lock); }

void gr_scratch_fork_child(void)
{
    for (struct gr_pool_block *b = pool; b; b = b->next)
        b->busy = 0;
    pthread_mutex_unlock(&pool_lock);
}
