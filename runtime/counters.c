#include "counters.h"

#include <pthread.h>
#include <stdio.h>

#include "gemm_rvv.h"
#include "isa.h"

#define MAX_COUNTERS 4096

static struct gr_counter table[MAX_COUNTERS];
static size_t used;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

uint32_t gr_count_bucket(size_t m)
{
    uint32_t b = 1;
    while (b < m && b < (1u << 31))
        b *= 2;
    return b;
}

struct gr_counter *gr_counter_for(uint64_t n, uint64_t k, uint32_t bucket)
{
    struct gr_counter *c = NULL;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < used && !c; i++)
        if (table[i].n == n && table[i].k == k && table[i].bucket == bucket)
            c = &table[i];
    if (!c && used < MAX_COUNTERS) {
        c = &table[used++];
        c->n = n;
        c->k = k;
        c->bucket = bucket;
        atomic_init(&c->kernel_calls, 0);
        atomic_init(&c->fallback_calls, 0);
    }
    pthread_mutex_unlock(&lock);
    return c;
}

size_t gemm_rvv_counters(gemm_rvv_counter *out, size_t capacity)
{
    pthread_mutex_lock(&lock);
    size_t total = used;
    for (size_t i = 0; i < used && i < capacity; i++) {
        out[i].n = (int64_t)table[i].n;
        out[i].k = (int64_t)table[i].k;
        out[i].m_bucket = table[i].bucket;
        out[i].kernel_calls = atomic_load(&table[i].kernel_calls);
        out[i].fallback_calls = atomic_load(&table[i].fallback_calls);
    }
    pthread_mutex_unlock(&lock);
    return total;
}

void gemm_rvv_counters_reset(void)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < used; i++) {
        atomic_store(&table[i].kernel_calls, 0);
        atomic_store(&table[i].fallback_calls, 0);
    }
    pthread_mutex_unlock(&lock);
}

void gemm_rvv_counters_print(FILE *out)
{
    fprintf(out, "kernels: %s variant%s; detected %s\n", gemm_rvv_isa(),
            gemm_rvv_kernels_active() ? "" : " (inactive: no V, or the fallback forced)",
            gr_isa_reason());
    pthread_mutex_lock(&lock);
    fprintf(out, "%8s %8s %8s %12s %12s %7s\n", "N", "K", "M<=", "kernel", "fallback", "missed");
    for (size_t i = 0; i < used; i++) {
        uint64_t kc = atomic_load(&table[i].kernel_calls);
        uint64_t fc = atomic_load(&table[i].fallback_calls);
        fprintf(out, "%8llu %8llu %8u %12llu %12llu %6.1f%%\n", (unsigned long long)table[i].n,
                (unsigned long long)table[i].k, table[i].bucket, (unsigned long long)kc,
                (unsigned long long)fc, kc + fc ? 100.0 * (double)fc / (double)(kc + fc) : 0.0);
    }
    pthread_mutex_unlock(&lock);
}

void gr_counters_fork_prepare(void) { pthread_mutex_lock(&lock); }

void gr_counters_fork_parent(void) { pthread_mutex_unlock(&lock); }

void gr_counters_fork_child(void) { pthread_mutex_unlock(&lock); }
