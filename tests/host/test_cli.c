/* gemm-rvv-gen's command line (gen/main.c) as a user meets it: --help and --version, usage
 * errors and their exit code, the options that change the gate, buckets and target, and out of
 * memory. What it writes is test_emit's, the output folder test_out_dir's. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gen_run.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help_and_version),
        cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_explain_and_overrides),
        cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests_name("gemm-rvv-gen", tests, work_setup, work_teardown);
}
