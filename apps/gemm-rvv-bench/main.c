/* gemm-rvv-bench: how fast gemm_rvv's Linear calls really are on this board, against what the
 * board's memory can deliver. See options.c for the command line and docs/gemm-rvv-bench.md for how to read
 * the tables. Figures under an emulator are printed too (the program must keep working) but
 * are marked as meaningless. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bandwidth.h"
#include "gemm_rvv.h"
#include "machine.h"
#include "options.h"
#include "report.h"
#include "shape_bench.h"

#define MAX_CPUS 256 /* the library's largest pool, and the bandwidth readers' */
#define MIB ((size_t)1 << 20)

/* The shapes file the library was built from, compiled in (mk/board.mk). */
extern const char bench_default_shapes_name[];
extern const char bench_default_shapes[];

static int cpus[MAX_CPUS], cpu_count;

/* Where bandwidth thread i of n runs: where the library puts participant i (gemm_rvv.h). */
static void place_readers(gemm_rvv_affinity mode, int n, int *out)
{
    for (int i = 0; i < n; i++)
        out[i] = cpus[(mode == GEMM_RVV_AFFINITY_SPREAD && n <= cpu_count ? (long)i * cpu_count / n
                                                                           : i) % cpu_count];
}

static void default_threads(struct bench_config *c)
{
    c->thread_counts = 0;
    for (int t = 1; t < cpu_count && c->thread_counts < MAX_THREAD_COUNTS - 1; t *= 2)
        c->threads[c->thread_counts++] = t;
    c->threads[c->thread_counts++] = cpu_count;
}

static int measure_bandwidth(const struct bench_config *c, gemm_rvv_affinity mode, size_t bytes,
                             int repeat, struct bandwidth_table *bw)
{
    int wanted[MAX_THREAD_COUNTS + 2], n = 0;
    wanted[n++] = 1;
    for (int i = 0; i < c->thread_counts; i++)
        wanted[n++] = c->threads[i];
    wanted[n++] = cpu_count;
    bw->count = 0;
    bw->bytes = bytes;
    bw->loads = machine_has_vector() ? "vector" : "64-bit scalar";
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < bw->count; j++)
            seen |= bw->threads[j] == wanted[i];
        if (seen)
            continue;
        int where[256];
        place_readers(mode, wanted[i], where);
        struct bandwidth_run run = {bytes, wanted[i],
                                    mode == GEMM_RVV_AFFINITY_NONE ? NULL : where, repeat};
        struct timing *t = &bw->time[bw->count];
        if (bandwidth_measure(&run, t) != 0)
            return -1;
        bw->threads[bw->count] = wanted[i];
        bw->gbs[bw->count++] = (double)bytes / t->median_s / 1e9;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct bench_options o;
    int rc = options_parse(argc, argv, &o);
    if (rc)
        return rc == 1 ? 0 : rc == 2 ? 2 : 1;
    cpu_count = machine_cpus(cpus, MAX_CPUS);
    const char *why;
    int emulated = machine_emulated(&why), cache_level;
    size_t cache = machine_largest_cache(&cache_level);
    const char *source = o.shapes.count ? "the command line" : bench_default_shapes_name;
    if (!o.shapes.count &&
        shape_list_read(&o.shapes, bench_default_shapes_name, bench_default_shapes) != 0)
        return 1;
    struct bench_config *c = &o.config;
    if (!c->thread_counts)
        default_threads(c);
    /* Under emulation small sizes: the figures mean nothing, the run only has to work. */
    size_t assumed = cache ? cache : 4 * MIB;
    c->cold_bytes = o.cold_mib > 0 ? (size_t)o.cold_mib * MIB : emulated ? 0 : 8 * assumed;
    size_t bw_bytes = o.bw_mib > 0 ? (size_t)o.bw_mib * MIB
                      : emulated ? 8 * MIB
                                 : (16 * assumed > 64 * MIB ? 16 * assumed : 64 * MIB);

    if (o.affinity &&
        gemm_rvv_set_affinity(strcmp(o.affinity, "compact") == 0  ? GEMM_RVV_AFFINITY_COMPACT
                              : strcmp(o.affinity, "spread") == 0 ? GEMM_RVV_AFFINITY_SPREAD
                                                                  : GEMM_RVV_AFFINITY_NONE) !=
            GEMM_RVV_OK)
        fprintf(stderr, "gemm-rvv-bench: the system refused to pin some workers\n");
    gemm_rvv_affinity mode = gemm_rvv_get_affinity();
    /* The calling thread is participant 0: the library leaves it to the caller. */
    if (mode != GEMM_RVV_AFFINITY_NONE && machine_pin_self(cpus[0]) != 0)
        fprintf(stderr, "gemm-rvv-bench: could not pin the main thread to CPU %d\n", cpus[0]);

    printf("gemm-rvv-bench %s: %zu shape%s from %s; %d CPUs; affinity %s; kernels %s%s%s\n",
           gemm_rvv_version(), o.shapes.count, o.shapes.count == 1 ? "" : "s", source, cpu_count,
           mode == GEMM_RVV_AFFINITY_COMPACT ? "compact"
           : mode == GEMM_RVV_AFFINITY_SPREAD ? "spread"
                                              : "none",
           gemm_rvv_kernels_active() ? "active, the " : "off (fallback only)",
           gemm_rvv_kernels_active() ? gemm_rvv_isa() : "",
           gemm_rvv_kernels_active() ? " variant" : "");
    if (cache)
        printf("largest cache: L%d, %zu KiB (sysfs, CPU 0); ", cache_level, cache >> 10);
    else
        printf("largest cache: not in sysfs, taken as 4 MiB; ");
    if (c->cold_bytes)
        printf("weights per shape: copies of at least %zu MiB in all, rotated", c->cold_bytes >> 20);
    else
        printf("weights per shape: one copy (emulated: nothing is cold)");
    printf("; repeat %d, at most %g s per measurement\n", c->repeat, c->max_seconds);
    if (emulated)
        printf("EMULATED: %s.\nEvery time below is emulated and means nothing about a board.\n",
               why);
    printf("\n");

    struct bandwidth_table bw;
    if (measure_bandwidth(c, mode, bw_bytes, c->repeat, &bw) != 0)
        return 1;
    report_bandwidth(&bw);

    FILE *csv = NULL;
    if (o.csv && !(csv = fopen(o.csv, "w"))) {
        perror(o.csv);
        return 1;
    }
    if (csv)
        report_csv_header(csv);
    struct shape_result *results = calloc(o.shapes.count, sizeof *results);
    if (!results)
        return 1;
    report_rows_header();
    int differ = 0;
    for (size_t i = 0; i < o.shapes.count; i++) {
        if (shape_bench_run(&o.shapes.items[i], c, &results[i]) != 0)
            return 1;
        report_rows(&o.shapes.items[i], &results[i], c, &bw, csv, emulated);
        fflush(stdout);
        differ += !results[i].agree;
    }
    report_scaling(&o.shapes, results, c);
    report_summary(&o.shapes, results, c, &bw);
    if (emulated)
        printf("(EMULATED: these figures mean nothing about a board.)\n");
    if (differ)
        printf("FAILED: on %d shapes the three paths gave different bits\n", differ);
    if (csv && fclose(csv) != 0) {
        perror(o.csv);
        return 1;
    }
    free(results);
    shape_list_free(&o.shapes);
    return differ ? 1 : 0;
}
