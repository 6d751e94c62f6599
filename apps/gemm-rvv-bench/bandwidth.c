#include "bandwidth.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "machine.h"
#include "read_vector.h"


#define MAX_READERS 256

/* Sums the words so the loads cannot be dropped: with the kernels' vector loads where the core
 * has V (read_vector.c), else 64-bit scalar loads. */
static uint64_t read_all(const uint64_t *p, size_t n)
{
    if (machine_has_vector())
        return read_vector(p, n);
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += p[i];
        s1 += p[i + 1];
        s2 += p[i + 2];
        s3 += p[i + 3];
    }
    for (; i < n; i++)
        s0 += p[i];
    return s0 + s1 + s2 + s3;
}

struct reader {
    const uint64_t *part;
    size_t words;
    int cpu; /* -1: not pinned */
    int passes;
    pthread_barrier_t *start, *done;
    double *began, *ended; /* per pass, this reader's own clock readings */
    uint64_t sink;
};

/* Each pass: wait for the start, read the part (timed by the reader itself: a main thread that
 * shares a CPU with readers may be scheduled late), report done. */
static void *reader_main(void *arg)
{
    struct reader *r = arg;
    if (r->cpu >= 0)
        machine_pin_self(r->cpu);
    for (int p = 0; p < r->passes; p++) {
        pthread_barrier_wait(r->start);
        r->began[p] = machine_seconds();
        r->sink += read_all(r->part, r->words);
        r->ended[p] = machine_seconds();
        pthread_barrier_wait(r->done);
    }
    return NULL;
}

int bandwidth_measure(const struct bandwidth_run *run, struct timing *out)
{
    int t = run->threads < 1 ? 1 : run->threads > MAX_READERS ? MAX_READERS : run->threads;
    size_t words = run->bytes / sizeof(uint64_t);
    uint64_t *buf = aligned_alloc(4096, (words * sizeof *buf + 4095) / 4096 * 4096);
    int passes = run->repeat + 1;
    double *samples = malloc((size_t)passes * sizeof *samples);
    double *clocks = malloc(2 * (size_t)passes * (size_t)t * sizeof *clocks);
    struct reader *readers = calloc((size_t)t, sizeof *readers);
    pthread_t *ids = calloc((size_t)t, sizeof *ids);
    pthread_barrier_t start, done;
    int rc = -1;
    if (!buf || !samples || !clocks || !readers || !ids) {
        fprintf(stderr, "gemm-rvv-bench: no memory for a %zu MiB bandwidth buffer\n",
                run->bytes >> 20);
        goto out;
    }
    for (size_t i = 0; i < words; i++) /* touch every page: no page faults while timed */
        buf[i] = i;
    pthread_barrier_init(&start, NULL, (unsigned)t + 1);
    pthread_barrier_init(&done, NULL, (unsigned)t + 1);
    for (int i = 0; i < t; i++) {
        size_t lo = words * (size_t)i / (size_t)t, hi = words * (size_t)(i + 1) / (size_t)t;
        double *began = clocks + 2 * (size_t)passes * (size_t)i;
        readers[i] = (struct reader){buf + lo, hi - lo, run->cpus ? run->cpus[i] : -1, passes,
                                     &start, &done, began, began + passes, 0};
        if (pthread_create(&ids[i], NULL, reader_main, &readers[i]) != 0) {
            /* The started ones wait at a barrier for all: nothing to unwind but the process. */
            fprintf(stderr, "gemm-rvv-bench: could not start bandwidth thread %d of %d\n", i + 1,
                    t);
            exit(1);
        }
    }
    for (int p = 0; p < passes; p++) {
        pthread_barrier_wait(&start);
        pthread_barrier_wait(&done);
    }
    for (int i = 0; i < t; i++)
        pthread_join(ids[i], NULL);
    /* A pass lasts from the first reader's start to the last reader's end. */
    for (int p = 0; p < passes; p++) {
        double first = readers[0].began[p], last = readers[0].ended[p];
        for (int i = 1; i < t; i++) {
            first = readers[i].began[p] < first ? readers[i].began[p] : first;
            last = readers[i].ended[p] > last ? readers[i].ended[p] : last;
        }
        samples[p] = last - first;
    }
    *out = timing_of(samples + 1, run->repeat); /* the first pass is the warm-up */
    rc = 0;
    pthread_barrier_destroy(&start);
    pthread_barrier_destroy(&done);
out:
    free(buf);
    free(samples);
    free(clocks);
    free(readers);
    free(ids);
    return rc;
}
