#include "shape_bench.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_rvv.h"
#include "machine.h"

const char *const bench_path_names[PATH_COUNT] = {"packed", "plain", "fallback"};

struct shape_data {
    const struct bench_shape *s;
    uint16_t *x;
    uint16_t **plain;          /* copies of the [N, K] weight */
    gemm_rvv_weight **packed;  /* the same copies packed */
    size_t copies;
    float *y;
};

/* Made-up values in [-1, 1): a BF16 is the top half of an FP32, truncation is enough here. */
static void fill_bf16(uint16_t *v, size_t count, uint64_t seed)
{
    for (size_t i = 0; i < count; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        float f = (float)(seed >> 40) / (float)(1u << 23) - 1.0f;
        uint32_t bits;
        memcpy(&bits, &f, sizeof bits);
        v[i] = (uint16_t)(bits >> 16);
    }
}

static void free_data(struct shape_data *d)
{
    for (size_t c = 0; c < d->copies; c++) {
        if (d->plain)
            free(d->plain[c]);
        if (d->packed)
            gemm_rvv_weight_free(d->packed[c]);
    }
    free(d->plain);
    free(d->packed);
    free(d->x);
    free(d->y);
}

static int make_data(const struct bench_shape *s, size_t cold_bytes, struct shape_data *d)
{
    size_t weight_bytes = (size_t)s->n * (size_t)s->k * sizeof(uint16_t);
    size_t copies = (cold_bytes + weight_bytes - 1) / weight_bytes;
    *d = (struct shape_data){s, NULL, NULL, NULL, 0, NULL};
    copies = copies < 1 ? 1 : copies;
    d->x = malloc((size_t)s->m * (size_t)s->k * sizeof *d->x);
    d->y = malloc((size_t)s->m * (size_t)s->n * sizeof *d->y);
    d->plain = calloc(copies, sizeof *d->plain);
    d->packed = calloc(copies, sizeof *d->packed);
    if (!d->x || !d->y || !d->plain || !d->packed)
        goto nomem;
    fill_bf16(d->x, (size_t)s->m * (size_t)s->k, 1);
    for (size_t c = 0; c < copies; c++) {
        d->plain[c] = malloc(weight_bytes);
        d->copies = c + 1;
        if (!d->plain[c])
            goto nomem;
        fill_bf16(d->plain[c], weight_bytes / sizeof(uint16_t), 2); /* same values: same bits */
        gemm_rvv_status st = gemm_rvv_weight_create(d->plain[c], s->n, s->k, s->k, &d->packed[c]);
        if (st != GEMM_RVV_OK) {
            fprintf(stderr, "gemm-rvv-bench: weight_create(N=%lld, K=%lld): %s\n",
                    (long long)s->n, (long long)s->k, gemm_rvv_strerror(st));
            free_data(d);
            return -1;
        }
    }
    return 0;
nomem:
    fprintf(stderr, "gemm-rvv-bench: no memory for %zu copies of a %zu MiB weight\n", copies,
            weight_bytes >> 20);
    free_data(d);
    return -1;
}

/* One call of a path on weight copy c. */
static gemm_rvv_status call(const struct shape_data *d, enum bench_path path, size_t c)
{
    const struct bench_shape *s = d->s;
    if (path == PATH_PLAIN)
        return gemm_rvv_linear_plain(d->x, s->m, s->k, d->plain[c], s->n, s->k, s->k, NULL, d->y,
                                     s->n, GEMM_RVV_F32);
    return gemm_rvv_linear(d->x, s->m, s->k, d->packed[c], NULL, d->y, s->n, GEMM_RVV_F32);
}

static uint64_t kernel_calls(void)
{
    gemm_rvv_counter rows[256];
    size_t count = gemm_rvv_counters(rows, 256);
    uint64_t sum = 0;
    for (size_t i = 0; i < count && i < 256; i++)
        sum += rows[i].kernel_calls;
    return sum;
}

/* Runs each path once on copy 0: whether a kernel served it, and whether all gave the same
 * bits (the library promises they do). */
static int check_paths(const struct shape_data *d, int by_kernel[PATH_COUNT], int *agree)
{
    size_t ny = (size_t)d->s->m * (size_t)d->s->n;
    float *first = malloc(ny * sizeof *first);
    if (!first)
        return -1;
    *agree = 1;
    for (int p = 0; p < PATH_COUNT; p++) {
        gemm_rvv_force_fallback(p == PATH_FALLBACK);
        uint64_t before = kernel_calls();
        gemm_rvv_status st = call(d, (enum bench_path)p, 0);
        gemm_rvv_force_fallback(0);
        if (st != GEMM_RVV_OK) {
            fprintf(stderr, "gemm-rvv-bench: %s path: %s\n", bench_path_names[p],
                    gemm_rvv_strerror(st));
            free(first);
            return -1;
        }
        by_kernel[p] = kernel_calls() > before;
        if (p == 0)
            memcpy(first, d->y, ny * sizeof *first);
        else if (memcmp(first, d->y, ny * sizeof *first) != 0)
            *agree = 0;
    }
    free(first);
    return 0;
}

/* Warm-up (each copy once, within half the time budget), then timed calls rotating over the
 * copies. */
static struct timing time_path(const struct shape_data *d, enum bench_path path,
                               const struct bench_config *cfg, double *samples)
{
    gemm_rvv_force_fallback(path == PATH_FALLBACK);
    double start = machine_seconds();
    for (size_t c = 0; c < d->copies; c++) {
        call(d, path, c);
        if (machine_seconds() - start > cfg->max_seconds / 2)
            break;
    }
    int reps = 0;
    start = machine_seconds();
    while (reps < cfg->repeat && (reps == 0 || machine_seconds() - start < cfg->max_seconds)) {
        double t0 = machine_seconds();
        call(d, path, (size_t)reps % d->copies);
        samples[reps++] = machine_seconds() - t0;
    }
    gemm_rvv_force_fallback(0);
    return timing_of(samples, reps);
}

int shape_bench_run(const struct bench_shape *s, const struct bench_config *cfg,
                    struct shape_result *out)
{
    struct shape_data d;
    int by_kernel[PATH_COUNT];
    double *samples = malloc((size_t)cfg->repeat * sizeof *samples);
    if (!samples || make_data(s, cfg->cold_bytes, &d) != 0) {
        free(samples);
        return -1;
    }
    int rc = check_paths(&d, by_kernel, &out->agree);
    out->copies = d.copies;
    for (int t = 0; t < cfg->thread_counts && rc == 0; t++) {
        if (gemm_rvv_set_threads(cfg->threads[t]) != GEMM_RVV_OK)
            fprintf(stderr, "gemm-rvv-bench: only %d of %d threads could be started\n",
                    gemm_rvv_get_threads(), cfg->threads[t]);
        for (int p = 0; p < PATH_COUNT; p++) {
            out->path[p][t].time = time_path(&d, (enum bench_path)p, cfg, samples);
            out->path[p][t].by_kernel = by_kernel[p];
        }
    }
    free_data(&d);
    free(samples);
    return rc;
}
