/* gemm-rvv-gen: reads a shapes file, decides kernel or fallback for every (layer, M), and
 * writes the kernels' C sources with their registry and manifest. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "explain.h"
#include "gemm_rvv_version.h"
#include "plan.h"
#include "shapes.h"
#include "target.h"

#ifndef GEN_TEMPLATES_DIR
#define GEN_TEMPLATES_DIR "templates"
#endif

enum { EXIT_OK = 0, EXIT_BAD_INPUT = 1, EXIT_USAGE = 2 };

static void usage(FILE *out)
{
    fprintf(out,
        "Usage: gemm-rvv-gen [OPTION]... SHAPES.yaml\n"
        "Decides, for every (layer, M) of a shapes file, whether a generated RVV kernel or the\n"
        "scalar fallback serves it, and writes the kernels' C sources, registry.c and\n"
        "manifest.json into the output folder.\n"
        "\n"
        "  -o, --output DIR     output folder (default build/gen); replaced only on success\n"
        "  -t, --templates DIR  kernel templates (default %s)\n"
        "      --explain        print one row per (layer, M): verdict, kernel, reason\n"
        "      --check          read and decide only; write nothing\n"
        "      --min-n N        gate: kernel only when N >= this (default %u)\n"
        "      --min-k K        gate: kernel only when K >= this (default %u)\n"
        "      --max-m M        gate: kernel only when M <= this (default %u)\n"
        "      --min-mnk X      gate: kernel only when M*N*K >= this (default %u)\n"
        "      --buckets LIST   M buckets of the M>=2 kernels (default 2,4,8,16,32,64,128)\n"
        "      --target LIST    the machine plans are made for, e.g. l2_kib=128,vlen=128\n"
        "                       or k3,l2_kib=2048 (names: k1 k3 k3-x100 k3-a100 generic;\n"
        "                       fields: vlen dlen l1d_kib l1d_ways l2_kib l2_ways l2_cores\n"
        "                       cores line mhz dram_mb_s; default: k1, the SpacemiT K1)\n"
        "      --host-tiles     plain C tiles for the host (its runtime tests), not RVV\n"
        "  -h, --help           show this help\n"
        "  -V, --version        show the version\n"
        "\n"
        "Gate and target options override the shapes file's \"gate:\", \"buckets:\" and\n"
        "\"target:\".\n"
        "Exit status: 0 success, 1 bad input (nothing written), 2 bad usage.\n",
        GEN_TEMPLATES_DIR, GATE_DEFAULT_MIN_N, GATE_DEFAULT_MIN_K, GATE_DEFAULT_MAX_M,
        GATE_DEFAULT_MIN_MNK);
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "gemm-rvv-gen: error: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'gemm-rvv-gen --help'.\n");
    return EXIT_USAGE;
}

static int parse_count(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    char *end;
    if (!s[0] || strspn(s, "0123456789") != strlen(s))
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int parse_buckets(const char *s, struct buckets *b)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    b->count = 0;
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        uint64_t v;
        if (b->count == BUCKETS_MAX || parse_count(tok, 2, SHAPE_DIM_MAX, &v) != 0 ||
            (b->count > 0 && v <= b->m[b->count - 1]))
            return -1;
        b->m[b->count++] = (uint32_t)v;
    }
    return b->count ? 0 : -1;
}

int main(int argc, char **argv)
{
    enum { OPT_EXPLAIN = 256, OPT_CHECK, OPT_MIN_N, OPT_MIN_K, OPT_MAX_M, OPT_MIN_MNK,
           OPT_BUCKETS, OPT_TARGET, OPT_HOST_TILES };
    static const struct option options[] = {
        {"output", required_argument, NULL, 'o'},   {"templates", required_argument, NULL, 't'},
        {"explain", no_argument, NULL, OPT_EXPLAIN}, {"check", no_argument, NULL, OPT_CHECK},
        {"min-n", required_argument, NULL, OPT_MIN_N},
        {"min-k", required_argument, NULL, OPT_MIN_K},
        {"max-m", required_argument, NULL, OPT_MAX_M},
        {"min-mnk", required_argument, NULL, OPT_MIN_MNK},
        {"buckets", required_argument, NULL, OPT_BUCKETS},
        {"target", required_argument, NULL, OPT_TARGET},
        {"host-tiles", no_argument, NULL, OPT_HOST_TILES},
        {"help", no_argument, NULL, 'h'},           {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    const char *out_dir = "build/gen", *templates = GEN_TEMPLATES_DIR;
    int explain = 0, check = 0, host_tiles = 0, opt;
    /* Command-line gate settings: [0..3] as in struct gate, set[] says which were given. */
    uint64_t cli_gate[4];
    int cli_set[4] = {0};
    struct buckets cli_buckets;
    int cli_buckets_set = 0;
    const char *cli_target = NULL;

    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":o:t:hV", options, NULL)) != -1) {
        switch (opt) {
        case 'o': out_dir = optarg; break;
        case 't': templates = optarg; break;
        case OPT_EXPLAIN: explain = 1; break;
        case OPT_CHECK: check = 1; break;
        case OPT_HOST_TILES: host_tiles = 1; break;
        case OPT_MIN_N: case OPT_MIN_K: case OPT_MAX_M: case OPT_MIN_MNK: {
            int i = opt - OPT_MIN_N;
            uint64_t hi = opt == OPT_MIN_MNK ? (uint64_t)INT64_MAX : SHAPE_DIM_MAX;
            static const char *const names[] = {"--min-n", "--min-k", "--max-m", "--min-mnk"};
            if (parse_count(optarg, opt == OPT_MAX_M ? 1 : 0, hi, &cli_gate[i]) != 0)
                return usage_error("%s needs a whole number, got \"%s\"", names[i], optarg);
            cli_set[i] = 1;
            break;
        }
        case OPT_BUCKETS:
            if (parse_buckets(optarg, &cli_buckets) != 0)
                return usage_error("--buckets needs increasing whole numbers >= 2 separated by "
                                   "commas, got \"%s\"", optarg);
            cli_buckets_set = 1;
            break;
        case OPT_TARGET: {
            struct target probe = target_default();
            char err[160];
            if (target_parse(&probe, optarg, err, sizeof err) != 0)
                return usage_error("--target: %s", err);
            cli_target = optarg;
            break;
        }
        case 'h': usage(stdout); return EXIT_OK;
        case 'V': printf("gemm-rvv-gen %s\n", GEMM_RVV_VERSION_STRING); return EXIT_OK;
        case ':': return usage_error("option %s needs a value", argv[optind - 1]);
        default: return usage_error("unknown option %s", argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return usage_error("%s", optind == argc ? "no shapes file given"
                                                : "one shapes file expected, got more");
    const char *path = argv[optind];

    struct diag d = {path, stderr, 0};
    struct shapes s;
    if (shapes_read_file(path, &d, &s) != 0)
        return EXIT_BAD_INPUT;

    struct gate g = s.gate;
    uint64_t *field[4] = {&g.min_n, &g.min_k, &g.max_m, &g.min_mnk};
    for (int i = 0; i < 4; i++)
        if (cli_set[i])
            *field[i] = cli_gate[i];
    struct buckets b = cli_buckets_set ? cli_buckets : s.buckets;

    struct target t = s.target;
    if (cli_target) {
        char err[160];
        if (target_parse(&t, cli_target, err, sizeof err) != 0) {
            fprintf(stderr, "gemm-rvv-gen: error: --target with %s's target: %s\n", path, err);
            shapes_free(&s);
            return EXIT_BAD_INPUT;
        }
    }

    struct plan p;
    if (plan_build(&s, &g, &b, &t, &p) != 0) { /* its only failure */
        diag_out_of_memory(&d);
        shapes_free(&s);
        return EXIT_BAD_INPUT;
    }
    if (explain)
        print_explain(stdout, &s, &p);

    int rc = EXIT_OK;
    if (!check) {
        struct emit_options o = {path, templates, out_dir, &g, &b, host_tiles};
        rc = emit_plan(&s, &p, &o) == 0 ? EXIT_OK : EXIT_BAD_INPUT;
    }
    if (rc == EXIT_OK) {
        char attention[160] = ""; /* said only for a file with attention entries */
        if (p.attn.count)
            snprintf(attention, sizeof attention, "; attention: %zu shapes, %zu plans, %zu "
                     "left to the fallback", p.attn.count, p.attn.row_count,
                     p.attn.fallback_count);
        printf("gemm-rvv-gen: %s: %zu shapes read, %zu plans, %zu shapes left to the "
               "fallback%s%s%s\n", path, p.count, p.row_count, p.fallback_count, attention,
               check ? "" : " -> ", check ? "" : out_dir);
    }
    plan_free(&p);
    shapes_free(&s);
    return rc;
}
