#include "options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_rvv.h"

static const char usage[] =
    "usage: gemm-rvv-bench [--shapes FILE | --shape M,N,K ...] [--threads 1,2,4,8] [--repeat R]\n"
    "                      [--csv FILE] [--affinity compact|spread|none] [--max-seconds S]\n"
    "                      [--cold-mib MIB] [--bw-mib MIB]\n"
    "Times gemm_rvv's Linear calls on this machine: for each shape and thread count the kernel\n"
    "on packed weights, on plain [N, K] weights and the scalar fallback, each on cold weights\n"
    "(a set of copies larger than the caches, rotated), after a warm-up; and this machine's\n"
    "streaming read bandwidth, which a GEMV's weight traffic is compared with.\n"
    "  --shapes FILE      the shapes of a shapes file (default: the one the library was built from)\n"
    "  --shape M,N,K      one shape (may be repeated)\n"
    "  --threads LIST     thread counts (default 1, 2, 4, ... and the number of CPUs)\n"
    "  --repeat R         timed calls per measurement (default 15; the median is reported)\n"
    "  --max-seconds S    stop a measurement after S seconds, with at least one call (default 1)\n"
    "  --csv FILE         also write every measurement to FILE\n"
    "  --affinity MODE    pin the worker threads (gemm_rvv_set_affinity; default: GEMM_RVV_AFFINITY)\n"
    "  --cold-mib MIB     the least size of a shape's weight set (default: 8 x the largest cache)\n"
    "  --bw-mib MIB       the bandwidth buffer (default: 16 x the largest cache, at least 64)\n";

static int bad(const char *opt, const char *value, const char *expected)
{
    fprintf(stderr, "gemm-rvv-bench: %s %s: expected %s\n%s", opt, value, expected, usage);
    return 2;
}

/* A positive integer no larger than max, or -1. */
static long positive(const char *s, long max)
{
    char *end;
    long v = strtol(s, &end, 10);
    return end != s && !*end && v > 0 && v <= max ? v : -1;
}

static int parse_threads(const char *list, struct bench_config *c)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    c->thread_counts = 0;
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        long v = positive(tok, 256);
        if (v < 0 || c->thread_counts == MAX_THREAD_COUNTS)
            return -1;
        c->threads[c->thread_counts++] = (int)v;
    }
    return c->thread_counts > 0 ? 0 : -1;
}

int options_parse(int argc, char **argv, struct bench_options *o)
{
    const char *shapes_file = NULL;
    *o = (struct bench_options){{NULL, 0}, {{0}, 0, 15, 1.0, 0}, NULL, NULL, -1, -1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0) {
            fputs(usage, stdout);
            return 1;
        }
        if (strcmp(a, "--version") == 0) {
            printf("gemm-rvv-bench %s\n", gemm_rvv_version());
            return 1;
        }
        if (i + 1 >= argc || strncmp(a, "--", 2) != 0) {
            fprintf(stderr, "gemm-rvv-bench: %s: %s\n%s", a,
                    strncmp(a, "--", 2) == 0 ? "needs a value" : "not an option", usage);
            return 2;
        }
        const char *v = argv[++i];
        if (strcmp(a, "--shapes") == 0)
            shapes_file = v;
        else if (strcmp(a, "--shape") == 0) {
            if (shape_list_add_spec(&o->shapes, v) != 0)
                return 2;
        } else if (strcmp(a, "--threads") == 0) {
            if (parse_threads(v, &o->config) != 0)
                return bad(a, v, "a list of up to 16 thread counts from 1 to 256, e.g. 1,2,4,8");
        } else if (strcmp(a, "--repeat") == 0) {
            if ((o->config.repeat = (int)positive(v, 100000)) < 0)
                return bad(a, v, "a positive number of calls");
        } else if (strcmp(a, "--max-seconds") == 0) {
            char *end;
            o->config.max_seconds = strtod(v, &end);
            if (end == v || *end || !(o->config.max_seconds > 0))
                return bad(a, v, "a positive number of seconds");
        } else if (strcmp(a, "--csv") == 0)
            o->csv = v;
        else if (strcmp(a, "--affinity") == 0) {
            if (strcmp(v, "compact") && strcmp(v, "spread") && strcmp(v, "none"))
                return bad(a, v, "compact, spread or none");
            o->affinity = v;
        } else if (strcmp(a, "--cold-mib") == 0) {
            if ((o->cold_mib = positive(v, 1L << 20)) < 0)
                return bad(a, v, "a positive number of MiB");
        } else if (strcmp(a, "--bw-mib") == 0) {
            if ((o->bw_mib = positive(v, 1L << 20)) < 0)
                return bad(a, v, "a positive number of MiB");
        } else {
            fprintf(stderr, "gemm-rvv-bench: unknown option %s\n%s", a, usage);
            return 2;
        }
    }
    if (shapes_file && o->shapes.count) {
        fprintf(stderr, "gemm-rvv-bench: --shapes and --shape exclude each other\n%s", usage);
        return 2;
    }
    if (shapes_file && shape_list_read(&o->shapes, shapes_file, NULL) != 0)
        return 3;
    return 0;
}
