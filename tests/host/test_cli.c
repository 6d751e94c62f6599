/* The gemm-rvv-gen program as a user meets it: exit codes, messages, the output folder left
 * intact by bad input, byte-identical output for the same input, and the manifest. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static char work[256]; /* a fresh temporary folder per run of this program */

/* Runs `shell` (a fragment, then the generator `bin` with `args`) in the work folder; returns
 * its exit status and its stdout and stderr together in *out (caller frees). */
static int run(const char *shell, const char *bin, const char *args, char **out)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cd '%s' && %s '%s' %s 2>&1", work, shell, bin, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t cap = 1 << 16, len = 0, n;
    char *buf = malloc(cap);
    while ((n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
        len += n;
        if (len + 1 == cap)
            buf = realloc(buf, cap *= 2);
    }
    buf[len] = '\0';
    int status = pclose(p);
    *out = buf;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The generator as built for tests (with sanitizers). */
static int gen(const char *args, char **out) { return run("", GEN_BIN, args, out); }

static void write_file(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", work, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static char *read_file(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", work, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)size + 1);
    assert_int_equal(fread(buf, 1, (size_t)size, f), (size_t)size);
    buf[size] = '\0';
    fclose(f);
    return buf;
}

/* Every file of two folders, compared byte for byte; returns how many there were. */
static size_t same_folders(const char *a, const char *b)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", work, a);
    DIR *dir = opendir(path);
    assert_non_null(dir);
    size_t files = 0;
    struct dirent *ent;
    while ((ent = readdir(dir)) != NULL) {
        if (ent->d_name[0] == '.')
            continue;
        char fa[512], fb[512];
        snprintf(fa, sizeof fa, "%s/%s", a, ent->d_name);
        snprintf(fb, sizeof fb, "%s/%s", b, ent->d_name);
        char *ta = read_file(fa), *tb = read_file(fb);
        assert_non_null(ta);
        if (!tb || strcmp(ta, tb) != 0)
            fail_msg("%s and %s differ", fa, fb);
        free(ta);
        free(tb);
        files++;
    }
    closedir(dir);
    return files;
}

static const char *const shapes =
    "model: demo\n"
    "layers:\n"
    "  - {name: q_proj, N: 4096, K: 4096, M: [1, 4, 512]}\n"
    "  - {name: small,  N: 896,  K: 896,  M: 1}\n";

static int setup(void **state)
{
    (void)state;
    snprintf(work, sizeof work, "/tmp/gemm-rvv-cli-XXXXXX");
    assert_non_null(mkdtemp(work));
    write_file("shapes.yaml", shapes);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", work);
    return system(cmd);
}

static void test_help_and_version(void **state)
{
    (void)state;
    char *out;
    assert_int_equal(gen("--version", &out), 0);
    assert_string_equal(out, "gemm-rvv-gen 0.1.0\n");
    free(out);
    assert_int_equal(gen("--help", &out), 0);
    assert_non_null(strstr(out, "Usage: gemm-rvv-gen [OPTION]... SHAPES.yaml"));
    assert_non_null(strstr(out, "Exit status: 0 success, 1 bad input"));
    free(out);
}

static void test_usage_errors(void **state)
{
    (void)state;
    static const struct { const char *args, *message; } cases[] = {
        {"", "gemm-rvv-gen: error: no shapes file given\n"},
        {"a.yaml b.yaml", "gemm-rvv-gen: error: one shapes file expected, got more\n"},
        {"--frobnicate shapes.yaml", "gemm-rvv-gen: error: unknown option --frobnicate\n"},
        {"--min-n 12x shapes.yaml", "gemm-rvv-gen: error: --min-n needs a whole number, got \"12x\"\n"},
        {"--buckets 4,2 shapes.yaml", "gemm-rvv-gen: error: --buckets needs increasing whole "
                                      "numbers >= 2 separated by commas, got \"4,2\"\n"},
        {"shapes.yaml -o", "gemm-rvv-gen: error: option -o needs a value\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out;
        int rc = gen(cases[i].args, &out);
        if (rc != 2 || strncmp(out, cases[i].message, strlen(cases[i].message)) != 0)
            fail_msg("'%s': exit %d, said: %s", cases[i].args, rc, out);
        assert_non_null(strstr(out, "Try 'gemm-rvv-gen --help'."));
        free(out);
    }
}

static void test_generate_and_manifest(void **state)
{
    (void)state;
    char *out;
    assert_int_equal(gen("-o out shapes.yaml", &out), 0);
    assert_string_equal(out, "gemm-rvv-gen: shapes.yaml: 4 shapes read, 3 plans, "
                             "1 shapes left to the fallback -> out\n");
    free(out);
    char *manifest = read_file("out/manifest.json");
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
    char *plan = read_file("out/bf16_gemm_m4_n4096_k4096.c");
    assert_non_null(plan);
    assert_non_null(strstr(plan, " * Serves (layer M): q_proj 4."));
    assert_non_null(strstr(plan, "    .tile_rows = 4,\n    .lmul = 4,\n"));
    assert_non_null(strstr(plan, "        [GR_L2_ALONE] = {.order = GR_ORDER_STRIPS, .k_block = "));
    free(plan);
    char *tiles = read_file("out/bf16_tiles_base.c");
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
        tiles = read_file(path);
        assert_non_null(tiles);
        snprintf(want, sizeof want, "static void gr_bf16_tile_r13_m2_%s(", variants[i]);
        assert_non_null(strstr(tiles, want));
        snprintf(want, sizeof want, "const struct gr_variant gr_variant_%s = {\n", variants[i]);
        assert_non_null(strstr(tiles, want));
        assert_null(strstr(tiles, "${"));
        free(tiles);
    }
    char *registry = read_file("out/registry.c");
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
        char *tiles = read_file(path);
        assert_non_null(tiles);
        assert_null(strstr(tiles, "riscv_vector.h"));
        snprintf(want, sizeof want, "const struct gr_variant gr_variant_%s = {\n    .name = \"%s\"",
                 names[i][1], names[i][0]);
        assert_non_null(strstr(tiles, want));
        free(tiles);
    }
    assert_null(read_file("host/bf16_tiles_base.c"));
    char *contract = read_file("host/gr_contract.h");
    assert_non_null(strstr(contract, "#define GR_HOST_TILES 1\n"));
    free(contract);
    contract = read_file("out/gr_contract.h");
    assert_non_null(strstr(contract, "#define GR_HOST_TILES 0\n"));
    free(contract);

    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cp -r '%s' tpl && printf 'extra base rv64gcv pairs f32 base tile_ends.c.in\\n' "
             ">> tpl/variants.txt &&", GEN_TEMPLATES_DIR);
    assert_int_equal(run(cmd, GEN_BIN, "-t tpl -o bad shapes.yaml", &out), 1);
    assert_non_null(strstr(out, "tpl/variants.txt: error: the target variants define "
                                "gr_variant_base 2 times: it needs one"));
    free(out);
    assert_null(read_file("bad/manifest.json"));
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
    /* 3 plans, two variants' micro-kernels, the Q8_0 tiles' file (none here), the contract
     * header, registry, manifest */
    assert_int_equal(same_folders("one", "two"), 9);
}

/* Bad input exits 1, writes nothing and leaves an earlier output as it was. */
static void test_bad_input_keeps_output(void **state)
{
    (void)state;
    char *out;
    assert_int_equal(gen("-o keep shapes.yaml", &out), 0);
    free(out);
    assert_int_equal(gen("-o keep-copy shapes.yaml", &out), 0);
    free(out);
    write_file("bad.yaml", "layers:\n  - {name: q, N: 4096x, K: 1, M: 1}\n");
    assert_int_equal(gen("-o keep bad.yaml", &out), 1);
    assert_string_equal(out, "bad.yaml:2:18: error: N must be a positive integer, got \"4096x\"\n");
    free(out);
    assert_int_equal(gen("-o keep missing.yaml", &out), 1);
    assert_string_equal(out, "missing.yaml: error: cannot open: No such file or directory\n");
    free(out);
    same_folders("keep", "keep-copy");
    assert_int_equal(gen("-o fresh bad.yaml", &out), 1);
    free(out);
    assert_null(read_file("fresh/manifest.json"));
    /* No temporary or old folder is left behind. */
    DIR *dir = opendir(work);
    assert_non_null(dir);
    struct dirent *ent;
    while ((ent = readdir(dir)) != NULL)
        if (strstr(ent->d_name, ".tmp-") || strstr(ent->d_name, ".old-"))
            fail_msg("left behind: %s", ent->d_name);
    closedir(dir);
}

static void test_explain_and_overrides(void **state)
{
    (void)state;
    char *out;
    assert_int_equal(gen("--check --explain shapes.yaml", &out), 0);
    assert_non_null(strstr(out, "q_proj    512    4096    4096 bf16     kernel    bf16_gemm_m128_n4096_k4096"));
    assert_non_null(strstr(out, "M=512 > 128: 4 row blocks of M <= 128"));
    assert_non_null(strstr(out, "small       1     896     896 bf16     fallback  -"));
    assert_non_null(strstr(out, "N=896 < 1024, K=896 < 1024, M*N*K=802816 < 1000000"));
    assert_non_null(strstr(out, "3 plans, 1 shapes left to the fallback\n"));
    assert_non_null(strstr(out, "\nplans for VLEN 256, L2 512 KiB: a core alone / its 4 cores at once"));
    free(out);
    /* A target from the command line changes the plans' machine. */
    assert_int_equal(gen("--check --explain --target l2_kib=1024,vlen=128 shapes.yaml", &out), 0);
    assert_non_null(strstr(out, "plans for VLEN 128, L2 1024 KiB: a core alone / its 4 cores at once"));
    free(out);
    assert_int_equal(gen("--check --target l2_kib=12x shapes.yaml", &out), 2);
    assert_non_null(strstr(out, "--target: l2_kib needs a whole number below 10^9, got \"12x\""));
    free(out);
    assert_int_equal(gen("--check --min-n 1 --min-k 1 --min-mnk 0 --max-m 512 --buckets 8,512 "
                         "shapes.yaml", &out), 0);
    assert_non_null(strstr(out, "4 shapes read, 4 plans, 0 shapes left"));
    free(out);
}

/* Out of memory (a 32 MiB address space for a file that needs more) exits 1 with the one
 * message and writes nothing. The generator users get runs here: ASan's own mappings would not
 * fit the limit. */
static void test_out_of_memory(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/big.yaml", work);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("layers:\n", f);
    for (int i = 0; i < 20000; i++)
        fprintf(f, "  - {name: layer%d, N: %d, K: 4096, M: [1, 16]}\n", i, 1024 + i % 64);
    fclose(f);
    char *out;
    assert_int_equal(run("", GEN_PLAIN_BIN, "--check big.yaml", &out), 0);
    free(out);
    assert_int_equal(run("ulimit -v 32768 &&", GEN_PLAIN_BIN, "-o big-out big.yaml", &out), 1);
    assert_string_equal(out, "big.yaml: error: out of memory\n");
    free(out);
    DIR *dir = opendir(work);
    assert_non_null(dir);
    struct dirent *ent;
    while ((ent = readdir(dir)) != NULL)
        if (strncmp(ent->d_name, "big-out", 7) == 0)
            fail_msg("written: %s", ent->d_name);
    closedir(dir);
}

/* Whether the work folder holds an entry whose name starts with `prefix`. */
static int exists_in_work(const char *prefix)
{
    DIR *dir = opendir(work);
    assert_non_null(dir);
    struct dirent *ent;
    int found = 0;
    while ((ent = readdir(dir)) != NULL)
        found |= strncmp(ent->d_name, prefix, strlen(prefix)) == 0;
    closedir(dir);
    return found;
}

/* -o replaces only what the generator made: no folder, an empty one, or one holding its
 * manifest; anything else is refused and left as it was. A trailing slash names the same. */
static void test_output_folder_guarded(void **state)
{
    (void)state;
    char *out, cmd[1024];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/victim/sub' '%s/empty' '%s/fake'", work, work, work);
    assert_int_equal(system(cmd), 0);
    write_file("victim/sub/data.txt", "x\n");
    write_file("fake/manifest.json", "{\"not\": \"ours\"}\n");
    write_file("plain-file", "y\n");
    static const char *const refused[][2] = {
        {"victim", "gemm-rvv-gen: error: victim holds files but no manifest.json of gemm-rvv-gen: "
                   "refusing to replace a folder the generator did not make (remove it or "
                   "choose another -o)\n"},
        {"victim/", "gemm-rvv-gen: error: victim holds files but no manifest.json"},
        {"fake", "gemm-rvv-gen: error: fake holds files but no manifest.json"},
        {"plain-file", "gemm-rvv-gen: error: plain-file is a file, not a folder the generator "
                       "made: refusing to replace it (choose another -o)\n"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        char args[128];
        snprintf(args, sizeof args, "-o %s shapes.yaml", refused[i][0]);
        int rc = gen(args, &out);
        if (rc != 1 || strncmp(out, refused[i][1], strlen(refused[i][1])) != 0)
            fail_msg("-o %s: exit %d, said: %s", refused[i][0], rc, out);
        free(out);
    }
    char *kept = read_file("victim/sub/data.txt");
    assert_non_null(kept);
    assert_string_equal(kept, "x\n");
    free(kept);
    kept = read_file("plain-file");
    assert_string_equal(kept, "y\n");
    free(kept);
    /* An empty folder, then the generator's own, with and without a trailing slash. */
    assert_int_equal(gen("-o empty/ shapes.yaml", &out), 0);
    assert_non_null(strstr(out, "-> empty/\n"));
    free(out);
    assert_int_equal(gen("-o empty shapes.yaml", &out), 0);
    free(out);
    assert_int_equal(gen("-o fresh/// shapes.yaml", &out), 0);
    free(out);
    assert_int_equal(same_folders("empty", "fresh"), 9);
    assert_false(exists_in_work("empty."));
    assert_false(exists_in_work("fresh."));
}

/* A write that fails (here: a file size limit) exits 1, leaks nothing (ASan's leak check runs
 * at exit) and leaves nothing behind: no folder, not even the parents made for it, and an
 * earlier output as it was. */
static void test_write_failure_leaves_nothing(void **state)
{
    (void)state;
    char *out;
    const char *limit = "trap '' XFSZ; ulimit -f 4 &&"; /* 2 KiB, no signal: write says EFBIG */
    assert_int_equal(run(limit, GEN_BIN, "-o new/deep/out shapes.yaml", &out), 1);
    assert_non_null(strstr(out, "gemm-rvv-gen: error: cannot write new/deep/out.tmp-"));
    assert_non_null(strstr(out, "/gr_contract.h: File too large\n"));
    assert_null(strstr(out, "LeakSanitizer"));
    free(out);
    assert_false(exists_in_work("new"));
    assert_int_equal(gen("-o kept shapes.yaml", &out), 0);
    free(out);
    assert_int_equal(gen("-o kept-copy shapes.yaml", &out), 0);
    free(out);
    assert_int_equal(run(limit, GEN_BIN, "-o kept shapes.yaml", &out), 1);
    assert_null(strstr(out, "LeakSanitizer"));
    free(out);
    assert_int_equal(same_folders("kept", "kept-copy"), 9);
    assert_false(exists_in_work("kept."));
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
    write_file("p*\nx/s.yaml", shapes);
    assert_int_equal(gen("-o out 'p*'?x/s.yaml", &out), 0); /* ? matches the line break */
    free(out);
    char *registry = read_file("out/registry.c");
    assert_non_null(registry);
    assert_non_null(strstr(registry, " from p\\x2a\\x0ax/s.yaml. Do not edit."));
    free(registry);
    char *manifest = read_file("out/manifest.json");
    assert_non_null(strstr(manifest, "\"source\": \"p*\\u000ax/s.yaml\""));
    free(manifest);
    snprintf(cmd, sizeof cmd, "cd '%s/out' && for f in registry.c bf16_gemv_m1_n4096_k4096.c; do "
             "cc -std=c11 -Wall -Wextra -Werror -fsyntax-only -I. $f || exit 1; done", work);
    assert_int_equal(system(cmd), 0);
}

/* weights: q8_0 for the whole file with one layer of BF16: the plans, their format in the C
 * data and the manifest, the Q8_0 tiles, and --host-tiles's plain C Q8_0 tiles. */
static void test_q8_0_plans(void **state)
{
    (void)state;
    write_file("q8.yaml", "weights: q8_0\nlayers:\n  - {name: q, N: 4096, K: 4096, M: [1, 16]}\n"
                          "  - {name: o, N: 4096, K: 4096, weights: bf16, M: 1}\n");
    char *out;
    assert_int_equal(gen("--explain -o q8 q8.yaml", &out), 0);
    assert_non_null(strstr(out, "q          1    4096    4096 q8_0     kernel    "
                                "q8_0_gemv_m1_n4096_k4096"));
    assert_non_null(strstr(out, "o          1    4096    4096 bf16     kernel    "
                                "bf16_gemv_m1_n4096_k4096"));
    free(out);
    char *manifest = read_file("q8/manifest.json");
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
    char *plan = read_file("q8/q8_0_gemv_m1_n4096_k4096.c");
    assert_non_null(plan);
    assert_non_null(strstr(plan, "    .format = GR_FORMAT_Q8_0,\n"));
    assert_non_null(strstr(plan, " * Q8_0 weights (GGUF's blocks, packed with FP16 scales)"));
    assert_non_null(strstr(plan, " *   plain [N, K] weights: none"));
    assert_null(strstr(plan, ".plain = {"));
    free(plan);
    char *tiles = read_file("q8/q8_0_tiles.c");
    assert_non_null(tiles);
    assert_non_null(strstr(tiles, "static void gr_q8_0_tile_r2(const struct gr_tile_args *a)"));
    assert_non_null(strstr(tiles, "gr_q8_0_tiles[2] = {gr_q8_0_tile_r1, gr_q8_0_tile_r2};"));
    assert_null(strstr(tiles, "${"));
    assert_null(strstr(tiles, "\n$"));
    free(tiles);
    assert_int_equal(gen("--host-tiles -o q8-host q8.yaml", &out), 0);
    free(out);
    tiles = read_file("q8-host/q8_0_tiles.c");
    assert_non_null(tiles);
    assert_non_null(strstr(tiles, "(templates/host/q8_*.c.in, plain C for the host's tests)"));
    assert_non_null(strstr(tiles, "static void gr_q8_0_tile_r1(const struct gr_tile_args *a)"));
    assert_null(strstr(tiles, "riscv_vector.h"));
    free(tiles);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help_and_version),
        cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_generate_and_manifest),
        cmocka_unit_test(test_host_tiles_and_variants),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_bad_input_keeps_output),
        cmocka_unit_test(test_explain_and_overrides),
        cmocka_unit_test(test_out_of_memory),
        cmocka_unit_test(test_output_folder_guarded),
        cmocka_unit_test(test_write_failure_leaves_nothing),
        cmocka_unit_test(test_path_in_comments),
        cmocka_unit_test(test_q8_0_plans),
    };
    return cmocka_run_group_tests_name("gemm-rvv-gen", tests, setup, teardown);
}
