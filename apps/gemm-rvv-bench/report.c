#include "report.h"

#include <string.h>

static double macs(const struct bench_shape *s)
{
    return (double)s->m * (double)s->n * (double)s->k;
}

/* The minimum bytes a call must read: the BF16 weight, once. */
static double weight_bytes(const struct bench_shape *s)
{
    return (double)s->n * (double)s->k * 2.0;
}

static double bandwidth_at(const struct bandwidth_table *bw, int threads)
{
    for (int i = 0; i < bw->count; i++)
        if (bw->threads[i] == threads)
            return bw->gbs[i];
    return 0;
}

void report_bandwidth(const struct bandwidth_table *bw)
{
    int passes = bw->count ? bw->time[0].reps : 0;
    printf("streaming read bandwidth (%s loads over %zu MiB, median of %d pass%s):\n", bw->loads,
           bw->bytes >> 20, passes, passes == 1 ? "" : "es");
    printf("  threads     GB/s   spread\n");
    for (int i = 0; i < bw->count; i++)
        printf("  %7d %8.2f %7.1f%%\n", bw->threads[i], bw->gbs[i],
               100 * timing_spread(&bw->time[i]));
    printf("\n");
}

double report_best_bandwidth(const struct bandwidth_table *bw, int *threads)
{
    double best = 0;
    *threads = 1;
    for (int i = 0; i < bw->count; i++)
        if (bw->gbs[i] > best) {
            best = bw->gbs[i];
            *threads = bw->threads[i];
        }
    return best;
}

void report_rows_header(void)
{
    printf("%-14s %5s %6s %6s %3s %-8s %-8s %4s %10s %10s %7s %8s %7s %5s\n", "layer", "M", "N",
           "K", "thr", "path", "served", "reps", "median_ms", "min_ms", "spread", "GMAC/s",
           "wGB/s", "%read");
}

void report_csv_header(FILE *csv)
{
    fprintf(csv, "layer,M,N,K,threads,path,served_by,reps,median_s,min_s,max_s,gmac_per_s,"
                 "weight_gb_per_s,read_bw_gb_per_s,read_bw_fraction,emulated\n");
}

void report_rows(const struct bench_shape *s, const struct shape_result *r,
                 const struct bench_config *cfg, const struct bandwidth_table *bw, FILE *csv,
                 int emulated)
{
    for (int t = 0; t < cfg->thread_counts; t++)
        for (int p = 0; p < PATH_COUNT; p++) {
            const struct path_result *pr = &r->path[p][t];
            const struct timing *tm = &pr->time;
            double gmacs = macs(s) / tm->median_s / 1e9, wgbs = weight_bytes(s) / tm->median_s / 1e9;
            double read = bandwidth_at(bw, cfg->threads[t]);
            const char *served = pr->by_kernel ? "kernel" : "fallback";
            printf("%-14s %5lld %6lld %6lld %3d %-8s %-8s %4d %10.3f %10.3f %6.1f%% %8.3f %7.2f "
                   "%4.0f%%\n",
                   s->name, (long long)s->m, (long long)s->n, (long long)s->k, cfg->threads[t],
                   bench_path_names[p], served, tm->reps, tm->median_s * 1e3, tm->min_s * 1e3,
                   100 * timing_spread(tm), gmacs, wgbs, read > 0 ? 100 * wgbs / read : 0);
            if (csv)
                fprintf(csv, "%s,%lld,%lld,%lld,%d,%s,%s,%d,%.9g,%.9g,%.9g,%.6g,%.6g,%.6g,%.4f,%d\n",
                        s->name, (long long)s->m, (long long)s->n, (long long)s->k,
                        cfg->threads[t], bench_path_names[p], served, tm->reps, tm->median_s,
                        tm->min_s, tm->max_s, gmacs, wgbs, read, read > 0 ? wgbs / read : 0,
                        emulated);
        }
}

void report_scaling(const struct shape_list *shapes, const struct shape_result *results,
                    const struct bench_config *cfg)
{
    printf("\nthread scaling, packed path: GMAC/s (speed-up over %d thread%s)\n",
           cfg->threads[0], cfg->threads[0] == 1 ? "" : "s");
    printf("%-14s %5s %6s %6s", "layer", "M", "N", "K");
    for (int t = 0; t < cfg->thread_counts; t++)
        printf(" %10d thr", cfg->threads[t]);
    printf("\n");
    for (size_t i = 0; i < shapes->count; i++) {
        const struct bench_shape *s = &shapes->items[i];
        const struct path_result *row = results[i].path[PATH_PACKED];
        printf("%-14s %5lld %6lld %6lld", s->name, (long long)s->m, (long long)s->n,
               (long long)s->k);
        for (int t = 0; t < cfg->thread_counts; t++)
            printf(" %7.3f (%4.2fx)", macs(s) / row[t].time.median_s / 1e9,
                   row[0].time.median_s / row[t].time.median_s);
        printf("\n");
    }
}

void report_summary(const struct shape_list *shapes, const struct shape_result *results,
                    const struct bench_config *cfg, const struct bandwidth_table *bw)
{
    int bw_threads;
    double best_bw = report_best_bandwidth(bw, &bw_threads);
    printf("\nagainst this board's measured read bandwidth (%.2f GB/s, %d thread%s):\n", best_bw,
           bw_threads, bw_threads == 1 ? "" : "s");
    for (size_t i = 0; i < shapes->count; i++) {
        const struct bench_shape *s = &shapes->items[i];
        int best_t = 0;
        for (int t = 1; t < cfg->thread_counts; t++)
            if (results[i].path[PATH_PACKED][t].time.median_s <
                results[i].path[PATH_PACKED][best_t].time.median_s)
                best_t = t;
        double wgbs = weight_bytes(s) / results[i].path[PATH_PACKED][best_t].time.median_s / 1e9;
        int t = cfg->threads[best_t];
        printf("  %-14s M=%-4lld N=%-6lld K=%-6lld %s at %3.0f %% of it (%.2f GB/s of weights, "
               "packed, %d thread%s)%s\n",
               s->name, (long long)s->m, (long long)s->n, (long long)s->k,
               s->m == 1 ? "GEMV" : "GEMM", best_bw > 0 ? 100 * wgbs / best_bw : 0, wgbs, t,
               t == 1 ? "" : "s", results[i].agree ? "" : "  RESULTS DIFFER");
    }
}
