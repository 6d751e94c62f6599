/* What the generator writes (gen/emit.c): the plans' C data, the tiles of each variant, the
 * contract, the registry and the manifest, byte-identical for the same input, the shapes file's
 * path escaped in comments, Q8_0 plans and --host-tiles; and, in the generator's process, a
 * failed write closes what it opened, and every file and the folder itself reach the disk
 * (fsync) before the folder is renamed into place (linked with -Wl,--wrap=fsync,--wrap=rename
 * to watch the order). */
#define _GNU_SOURCE
#include <dirent.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "emit.h"
#include "gen_input.h"
#include "gen_run.h"

static struct shapes s;
static struct plan p;

/* What the wrappers saw, in order: "fsync PATH" and "rename FROM TO". */
static char log_lines[256][600];
static int log_count;

int __real_fsync(int fd);
int __real_rename(const char *from, const char *to);

int __wrap_fsync(int fd)
{
    char link[64], path[512] = "?";
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    path[n > 0 ? n : 1] = '\0';
    if (log_count < 256)
        snprintf(log_lines[log_count++], sizeof log_lines[0], "fsync %s", path);
    return __real_fsync(fd);
}

int __wrap_rename(const char *from, const char *to)
{
    if (log_count < 256)
        snprintf(log_lines[log_count++], sizeof log_lines[0], "rename %s %s", from, to);
    return __real_rename(from, to);
}

static int emit_to(const char *name)
{
    char out[512];
    snprintf(out, sizeof out, "%s/%s", work, name);
    struct emit_options o = {"shapes.yaml", GEN_TEMPLATES_DIR, out, &s.gate, &s.buckets, 0};
    return emit_plan(&s, &p, &o);
}

static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    assert_non_null(d);
    int n = 0;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

/* The scratch folder with its shapes.yaml (gen_run.h), and a plan of our own for emit_plan. */
static int setup(void **state)
{
    work_setup(state);
    plan_from_text("layers:\n  - {name: q, N: 4096, K: 4096, M: [1, 4]}\n", &s, &p);
    return 0;
}

static int teardown(void **state)
{
    plan_free(&p);
    shapes_free(&s);
    return work_teardown(state);
}

/* A file size limit makes a write fail with EFBIG: the call fails and keeps no file open. */
static void test_failed_write_closes_files(void **state)
{
    (void)state;
    struct rlimit old, small = {2048, 0};
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    small.rlim_max = old.rlim_max;
    signal(SIGXFSZ, SIG_IGN);
    int before = open_fds();
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    int rc = emit_to("limited");
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    assert_int_equal(rc, -1);
    assert_int_equal(open_fds(), before);
}

static int logged_before(const char *line, int end)
{
    for (int i = 0; i < end; i++)
        if (strcmp(log_lines[i], line) == 0)
            return 1;
    return 0;
}

/* Each file of the new folder, and the folder, are synced before it is renamed into place. */
static void test_synced_before_rename(void **state)
{
    (void)state;
    log_count = 0;
    assert_int_equal(emit_to("synced"), 0);
    char out[512], want[700];
    snprintf(out, sizeof out, "%s/synced", work);
    int moved = -1;
    char tmp[512] = "";
    for (int i = 0; i < log_count; i++) {
        char from[512], to[512];
        if (sscanf(log_lines[i], "rename %511s %511s", from, to) == 2 && strcmp(to, out) == 0) {
            moved = i;
            snprintf(tmp, sizeof tmp, "%s", from);
        }
    }
    if (moved < 0)
        fail_msg("no rename into %s", out);
    DIR *d = opendir(out);
    assert_non_null(d);
    struct dirent *e;
    int files = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(want, sizeof want, "fsync %s/%s", tmp, e->d_name);
        if (!logged_before(want, moved))
            fail_msg("%s was not synced before the rename", e->d_name);
        files++;
    }
    closedir(d);
    assert_true(files >= 6); /* the contract, two variants' tiles, plans, registry, manifest */
    snprintf(want, sizeof want, "fsync %s", tmp);
    if (!logged_before(want, moved))
        fail_msg("the folder %s was not synced before the rename", tmp);
}

static void test_generate_and_manifest(void **state)
{
    (void)state;
    char *out;
    assert_int_equal(gen("-o out shapes.yaml", &out), 0);
    assert_string_equal(out, "gemm-rvv-gen: shapes.yaml: 4 shapes read, 3 plans, "
                             "1 shapes left to the fallback -> out\n");
    free(out);
    char *manifest = work_read("out/manifest.json");
    assert_non_null(manifest);
    assert_non_null(strstr(manifest, "{\"name\": \"q_proj\", \"M\": 1, \"N\": 4096, \"K\": 4096, "
                                     "\"weights\": \"bf16\", \"verdict\": \"kernel\", \"bucket\": 1, \"plan\": "
                                     "\"bf16_gemv_m1_n4096_k4096\", \"row_blocks\": 1, "
                                     "\"reason\": null}"));
    /* M above the buckets: the kernel in row blocks, as the runtime runs it. */
    assert_non_null(strstr(manifest, "{\"name\": \"q_proj\", \"M\": 512, \"N\": 4096, \"K\": 4096, "
                                     "\"weights\": \"bf16\", "
                                     "\"verdict\": \"kernel\", \"bucket\": 128, \"plan\": "
                                     "\"bf16_gemm_m128_n4096_k4096\", \"row_blocks\": 4, "
                                     "\"reason\": \"M=512 > 128: 4 row blocks of M <= 128\"}"));
    assert_non_null(strstr(manifest, "{\"name\": \"small\", \"M\": 1, \"N\": 896, \"K\": 896, "
                                     "\"weights\": \"bf16\", \"verdict\": \"fallback\", \"bucket\": null, \"plan\": null, "
                                     "\"row_blocks\": null, \"reason\": \"N=896 < 1024, "));
    assert_non_null(strstr(manifest, "\"model\": \"demo\""));
    assert_non_null(strstr(manifest, "\"target\": {\"vlen\": 256, \"dlen\": 128, "));
    free(manifest);
    char *plan = work_read("out/bf16_gemm_m4_n4096_k4096.c");
    assert_non_null(plan);
    assert_non_null(strstr(plan, " * Serves (layer M): q_proj 4."));
    assert_non_null(strstr(plan, "    .tile_rows = 4,\n    .lmul = 4,\n"));
    assert_non_null(strstr(plan, "        [GR_L2_ALONE] = {.order = GR_ORDER_STRIPS, .k_block = "));
    free(plan);
    char *tiles = work_read("out/bf16_tiles_base.c");
    assert_non_null(tiles);
    assert_non_null(strstr(tiles, "static void gr_bf16_tile_r13_m2_base(const struct gr_tile_args *a)"));
    assert_null(strstr(tiles, "${")); /* every placeholder filled */
    assert_null(strstr(tiles, "\n$"));
    free(tiles);
    /* Each variant's tiles of every plan's shape, and its struct naming them. */
    static const char *const variants[] = {"base", "zvfbfwma"};
    for (int i = 0; i < 2; i++) {
        char path[64], want[128];
        snprintf(path, sizeof path, "out/bf16_tiles_%s.c", variants[i]);
        tiles = work_read(path);
        assert_non_null(tiles);
        snprintf(want, sizeof want, "static void gr_bf16_tile_r13_m2_%s(", variants[i]);
        assert_non_null(strstr(tiles, want));
        snprintf(want, sizeof want, "const struct gr_variant gr_variant_%s = {\n", variants[i]);
        assert_non_null(strstr(tiles, want));
        assert_null(strstr(tiles, "${"));
        free(tiles);
    }
    char *registry = work_read("out/registry.c");
    assert_non_null(strstr(registry, "    &gr_plan_bf16_gemm_m4_n4096_k4096,\n"));
    free(registry);
}

/* --host-tiles writes the host's plain C variants (templates/variants.txt) in both slots, and
 * a contract that says so; a bad descriptor line is reported where it is, nothing written. */
static void test_host_tiles_and_variants(void **state)
{
    (void)state;
    char *out;
    assert_int_equal(gen("--host-tiles -o host shapes.yaml", &out), 0);
    free(out);
    static const char *const names[][2] = {{"host", "base"}, {"host_rows", "zvfbfwma"}};
    for (int i = 0; i < 2; i++) {
        char path[64], want[128];
        snprintf(path, sizeof path, "host/bf16_tiles_%s.c", names[i][0]);
        char *tiles = work_read(path);
        assert_non_null(tiles);
        assert_null(strstr(tiles, "riscv_vector.h"));
        snprintf(want, sizeof want, "const struct gr_variant gr_variant_%s = {\n    .name = \"%s\"",
                 names[i][1], names[i][0]);
        assert_non_null(strstr(tiles, want));
        free(tiles);
    }
    assert_null(work_read("host/bf16_tiles_base.c"));
    char *contract = work_read("host/gr_contract.h");
    assert_non_null(strstr(contract, "#define GR_HOST_TILES 1\n"));
    free(contract);
    contract = work_read("out/gr_contract.h");
    assert_non_null(strstr(contract, "#define GR_HOST_TILES 0\n"));
    free(contract);

    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cp -r '%s' tpl && printf 'extra base rv64gcv pairs f32 base tile_ends.c.in\\n' "
             ">> tpl/variants.txt &&", GEN_TEMPLATES_DIR);
    assert_int_equal(run(cmd, GEN_BIN, "-t tpl -o bad shapes.yaml", &out), 1);
    assert_non_null(strstr(out, "tpl/variants.txt: error: the target variants define "
                                "gr_variant_base 2 times: it needs one"));
    free(out);
    assert_null(work_read("bad/manifest.json"));
    snprintf(cmd, sizeof cmd, "printf 'base base rv64gcv pairs f33 base -\\n' > tpl/variants.txt &&");
    assert_int_equal(run(cmd, GEN_BIN, "-t tpl -o bad shapes.yaml", &out), 1);
    assert_non_null(strstr(out, "tpl/variants.txt:1:25: error: activations must be f32 or bf16, "
                                "got \"f33\""));
    free(out);
}

static void test_deterministic(void **state)
{
    (void)state;
    char *out;
    assert_int_equal(gen("-o one shapes.yaml", &out), 0);
    free(out);
    assert_int_equal(gen("-o two shapes.yaml", &out), 0);
    free(out);
    /* 3 plans, two variants' micro-kernels, the Q8_0 tiles' file (none here), the attention
     * tiles, the contract header, registry, manifest */
    assert_int_equal(same_folders("one", "two"), 10);
}

/* The shapes file's path goes into comments of the C files: a '*' (ending a comment or
 * opening one) and a line break are written as \xNN, and the files still compile. The
 * manifest keeps the path as it is. */
static void test_path_in_comments(void **state)
{
    (void)state;
    char dir[512], cmd[1024], *out;
    snprintf(dir, sizeof dir, "%s/p*\nx", work);
    assert_int_equal(mkdir(dir, 0777), 0);
    work_write("p*\nx/s.yaml", work_shapes);
    assert_int_equal(gen("-o out 'p*'?x/s.yaml", &out), 0); /* ? matches the line break */
    free(out);
    char *registry = work_read("out/registry.c");
    assert_non_null(registry);
    assert_non_null(strstr(registry, " from p\\x2a\\x0ax/s.yaml. Do not edit."));
    free(registry);
    char *manifest = work_read("out/manifest.json");
    assert_non_null(strstr(manifest, "\"source\": \"p*\\u000ax/s.yaml\""));
    free(manifest);
    snprintf(cmd, sizeof cmd, "cd '%s/out' && for f in registry.c bf16_gemv_m1_n4096_k4096.c; do "
             "cc -std=c11 -Wall -Wextra -Werror -fsyntax-only -I. $f || exit 1; done", work);
    assert_int_equal(system(cmd), 0);
}

/* Attention entries: each plan in registry.c, sorted as the contract says, with the entries it
 * serves and why, the declined entry with its reason, the summary line; the file compiles. */
static void test_attention_plans(void **state)
{
    (void)state;
    work_write("attn.yaml", "layers:\n  - {name: q, N: 4096, K: 4096, M: 1}\nattention:\n"
                            "  - {name: qwen3, head_dim: 128, q_heads: 16, kv_heads: 8, "
                            "n_q: [1, 512]}\n"
                            "  - {name: wide, head_dim: 512, q_heads: 4, kv_heads: 4, n_q: 1}\n"
                            "  - {name: small, head_dim: 64, q_heads: 2, kv_heads: 1, kv: bf16, "
                            "n_q: 1}\n");
    char *out;
    assert_int_equal(gen("-o attn attn.yaml", &out), 0);
    assert_string_equal(out, "gemm-rvv-gen: attn.yaml: 1 shapes read, 1 plans, 0 shapes left to "
                             "the fallback; attention: 4 shapes, 3 plans, 1 left to the "
                             "fallback -> attn\n");
    free(out);
    char *registry = work_read("attn/registry.c");
    assert_non_null(registry);
    const char *q1 = strstr(registry,
        "\n/* attn_f16_d128_h16_kv8_q1: head_dim 128, 16 query heads on 8 KV heads,\n"
        " * F16 K and V caches, calls of up to 1 query row.\n"
        " * Serves (attention n_q): qwen3 1.\n"
        " * Why a kernel: head_dim 128 <= 256, the widest the score tile's scratch takes.\n"
        " * 2 pairs a tile: decoding, the group's 2 query heads share each K and V block read. */\n"
        "static const struct gr_attn_plan gr_attn_plan_attn_f16_d128_h16_kv8_q1 = {\n"
        "    .name = \"attn_f16_d128_h16_kv8_q1\",\n    .head_dim = 128,\n    .q_heads = 16,\n"
        "    .kv_heads = 8,\n    .k_type = GR_KV_F16,\n    .v_type = GR_KV_F16,\n"
        "    .n_q = 1,\n    .pairs = 2,\n    .shared = 1,\n};\n");
    assert_non_null(q1);
    assert_non_null(strstr(registry, "    .k_type = GR_KV_BF16,\n    .v_type = GR_KV_BF16,\n"));
    assert_non_null(strstr(registry, "\n/* attention wide, n_q 1: the scalar fallback, for\n"
                                     " * head_dim=512 > 256: the score tile's scratch (head_dim x "
                                     "32 floats) would pass 32 KiB. */\n"));
    assert_non_null(strstr(registry, "const struct gr_attn_plan *const gr_attn_registry[] = {\n"
                                     "    &gr_attn_plan_attn_bf16_d64_h2_kv1_q1,\n"
                                     "    &gr_attn_plan_attn_f16_d128_h16_kv8_q1,\n"
                                     "    &gr_attn_plan_attn_f16_d128_h16_kv8_q512,\n};\n"));
    free(registry);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd '%s/attn' && cc -std=c11 -Wall -Wextra -Werror -fsyntax-only "
             "-I. registry.c", work);
    assert_int_equal(system(cmd), 0);
    /* Without attention entries: the empty registry (the summary as before: above). */
    assert_int_equal(gen("-o no-attn shapes.yaml", &out), 0);
    free(out);
    registry = work_read("no-attn/registry.c");
    assert_non_null(strstr(registry, "const struct gr_attn_plan *const gr_attn_registry[1] = "
                                     "{NULL};\nconst size_t gr_attn_registry_count = 0;\n"));
    free(registry);
}

/* weights: q8_0 for the whole file with one layer of BF16: the plans, their format in the C
 * data and the manifest, the Q8_0 tiles, and --host-tiles's plain C Q8_0 tiles. */
static void test_q8_0_plans(void **state)
{
    (void)state;
    work_write("q8.yaml", "weights: q8_0\nlayers:\n  - {name: q, N: 4096, K: 4096, M: [1, 16]}\n"
                          "  - {name: o, N: 4096, K: 4096, weights: bf16, M: 1}\n");
    char *out;
    assert_int_equal(gen("--explain -o q8 q8.yaml", &out), 0);
    assert_non_null(strstr(out, "q          1    4096    4096 q8_0     kernel    "
                                "q8_0_gemv_m1_n4096_k4096"));
    assert_non_null(strstr(out, "o          1    4096    4096 bf16     kernel    "
                                "bf16_gemv_m1_n4096_k4096"));
    free(out);
    char *manifest = work_read("q8/manifest.json");
    assert_non_null(manifest);
    assert_non_null(strstr(manifest, "{\"name\": \"q8_0_gemm_m16_n4096_k4096\", \"N\": 4096, "
                                     "\"K\": 4096, \"format\": \"q8_0\", \"bucket\": 16, "
                                     "\"rows\": 2, "));
    assert_non_null(strstr(manifest, "\"format\": \"bf16\""));
    /* plain blockings for the BF16 plan only */
    const char *q8_row = strstr(manifest, "\"name\": \"q8_0_gemm_m16_n4096_k4096\"");
    assert_non_null(q8_row);
    const char *next_row = strstr(q8_row + 1, "\"name\": ");
    const char *plain = strstr(q8_row, "\"plain_alone\"");
    assert_true(plain == NULL || (next_row && plain > next_row));
    assert_non_null(strstr(manifest, "\"plain_alone\""));
    free(manifest);
    char *plan = work_read("q8/q8_0_gemv_m1_n4096_k4096.c");
    assert_non_null(plan);
    assert_non_null(strstr(plan, "    .format = GR_FORMAT_Q8_0,\n"));
    assert_non_null(strstr(plan, " * Q8_0 weights (GGUF's blocks, packed with FP16 scales)"));
    assert_non_null(strstr(plan, " *   plain [N, K] weights: none"));
    assert_null(strstr(plan, ".plain = {"));
    free(plan);
    char *tiles = work_read("q8/q8_0_tiles.c");
    assert_non_null(tiles);
    assert_non_null(strstr(tiles, "static void gr_q8_0_tile_r2(const struct gr_tile_args *a)"));
    assert_non_null(strstr(tiles, "gr_q8_0_tiles[2] = {gr_q8_0_tile_r1, gr_q8_0_tile_r2};"));
    assert_null(strstr(tiles, "${"));
    assert_null(strstr(tiles, "\n$"));
    free(tiles);
    assert_int_equal(gen("--host-tiles -o q8-host q8.yaml", &out), 0);
    free(out);
    tiles = work_read("q8-host/q8_0_tiles.c");
    assert_non_null(tiles);
    assert_non_null(strstr(tiles, "(templates/host/q8_*.c.in, plain C for the host's tests)"));
    assert_non_null(strstr(tiles, "static void gr_q8_0_tile_r1(const struct gr_tile_args *a)"));
    assert_null(strstr(tiles, "riscv_vector.h"));
    free(tiles);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generate_and_manifest),
        cmocka_unit_test(test_host_tiles_and_variants),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_path_in_comments),
        cmocka_unit_test(test_q8_0_plans),
        cmocka_unit_test(test_attention_plans),
        cmocka_unit_test(test_failed_write_closes_files),
        cmocka_unit_test(test_synced_before_rename),
    };
    return cmocka_run_group_tests_name("emit", tests, setup, teardown);
}
