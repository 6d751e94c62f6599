/* The GEMM_RVV ggml plugin driven through ggml's public API only (ggml.h, ggml-backend.h,
 * ggml-alloc.h): what a ggml user such as llama.cpp may expect of a backend. The plugin is
 * loaded as llama.cpp loads it, by ggml_backend_load_all() with GGML_BACKEND_PATH naming it,
 * and compared with ggml's own CPU backend in the same process.
 *
 * Each group of cases runs in a child process of its own (forked before this process touches
 * ggml), so that a crash or a hang in one is reported as that group's failure and the others
 * still run. Each case prints one line, `ok NAME` or `FAIL NAME: what and where`; the last
 * line is `N passed, N failed`, and the exit status is 1 when any case failed.
 *
 * Usage: plugin_api [GROUP...]   (no argument: every group; `plugin_api --list` names them)
 * Environment: GGML_BACKEND_PATH (the plugin); GEMM_RVV_TEST_TIER=full (every product at
 * every M: the quick tier leaves M = 33 out on the four largest shapes, M = 7 on the two
 * largest); PLUGIN_API_VERBOSE=1
 * (ggml's and the plugin's informational log lines too, and timings: by default only
 * warnings and errors reach stderr).
 *
 * Its files: harness.c (the runner, the devices, data, the product check), one test_*.c per
 * file of plugins/ggml/ with that file's groups, and this table of them. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the groups, each in a child process ---- */

static const struct {
    const char *name;
    void (*run)(void);
} groups[] = {
    {"products", group_products}, {"empty", group_empty},   {"select", group_select},
    {"readback", group_readback}, {"memory", group_memory}, {"view", group_view},
    {"memset", group_memset},     {"clear", group_clear},   {"layer", group_layer},
    {"splits", group_splits},     {"threads", group_threads}, {"supports", group_supports},
    {"q8_0", group_q8_0},         {"source", group_source}, {"rows", group_rows},
    {"attention", group_attention}, {"devices", group_devices}, {"kv_cache", group_kv_cache},
};

int main(int argc, char **argv)
{
    const char *v = getenv("PLUGIN_API_VERBOSE");
    pa_verbose = v && *v && strcmp(v, "0") != 0;
    const char *tier = getenv("GEMM_RVV_TEST_TIER");
    pa_full_tier = tier && strcmp(tier, "full") == 0;
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        for (size_t g = 0; g < sizeof groups / sizeof *groups; g++)
            puts(groups[g].name);
        return 0;
    }
    for (int a = 1; a < argc; a++) {
        bool known = false;
        for (size_t g = 0; g < sizeof groups / sizeof *groups; g++)
            known |= strcmp(argv[a], groups[g].name) == 0;
        if (!known) {
            fprintf(stderr, "plugin_api: no group '%s' (--list names them)\n", argv[a]);
            return 2;
        }
    }
    int passed = 0, failed = 0;
    for (size_t g = 0; g < sizeof groups / sizeof *groups; g++) {
        bool wanted = argc == 1;
        for (int a = 1; a < argc; a++)
            wanted |= strcmp(argv[a], groups[g].name) == 0;
        if (wanted)
            pa_run_group(groups[g].name, groups[g].run, &passed, &failed);
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
