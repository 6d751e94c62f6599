/* The output folder (gen/out_dir.c), through gemm-rvv-gen -o and called directly: bad input and
 * failed writes leave nothing behind and an earlier output as it was; only a folder the
 * generator made, an empty one or none is replaced; an abort removes the parents it made, a
 * commit swaps the new folder in. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "gen_run.h"
#include "out_dir.h"

/* Bad input exits 1, writes nothing and leaves an earlier output as it was. */
static void test_bad_input_keeps_output(void **state)
{
    (void)state;
    char *out;
    assert_int_equal(gen("-o keep shapes.yaml", &out), 0);
    free(out);
    assert_int_equal(gen("-o keep-copy shapes.yaml", &out), 0);
    free(out);
    work_write("bad.yaml", "layers:\n  - {name: q, N: 4096x, K: 1, M: 1}\n");
    assert_int_equal(gen("-o keep bad.yaml", &out), 1);
    assert_string_equal(out, "bad.yaml:2:18: error: N must be a positive integer, got \"4096x\"\n");
    free(out);
    assert_int_equal(gen("-o keep missing.yaml", &out), 1);
    assert_string_equal(out, "missing.yaml: error: cannot open: No such file or directory\n");
    free(out);
    same_folders("keep", "keep-copy");
    assert_int_equal(gen("-o fresh bad.yaml", &out), 1);
    free(out);
    assert_null(work_read("fresh/manifest.json"));
    /* No temporary or old folder is left behind. */
    DIR *dir = opendir(work);
    assert_non_null(dir);
    struct dirent *ent;
    while ((ent = readdir(dir)) != NULL)
        if (strstr(ent->d_name, ".tmp-") || strstr(ent->d_name, ".old-"))
            fail_msg("left behind: %s", ent->d_name);
    closedir(dir);
}

/* -o replaces only what the generator made: no folder, an empty one, or one holding its
 * manifest; anything else is refused and left as it was. A trailing slash names the same. */
static void test_output_folder_guarded(void **state)
{
    (void)state;
    char *out, cmd[1024];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/victim/sub' '%s/empty' '%s/fake'", work, work, work);
    assert_int_equal(system(cmd), 0);
    work_write("victim/sub/data.txt", "x\n");
    work_write("fake/manifest.json", "{\"not\": \"ours\"}\n");
    work_write("plain-file", "y\n");
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
    char *kept = work_read("victim/sub/data.txt");
    assert_non_null(kept);
    assert_string_equal(kept, "x\n");
    free(kept);
    kept = work_read("plain-file");
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
    assert_int_equal(same_folders("empty", "fresh"), 10);
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
    assert_int_equal(same_folders("kept", "kept-copy"), 10);
    assert_false(exists_in_work("kept."));
}

/* A symbolic link is never replaced, nor a folder whose manifest.json is one (opened without
 * following links), nor an empty name. */
static void test_links_and_empty_name_refused(void **state)
{
    (void)state;
    char *out, cmd[1024];
    assert_int_equal(gen("-o real shapes.yaml", &out), 0);
    free(out);
    snprintf(cmd, sizeof cmd, "cd '%s' && ln -s real link && mkdir linked && "
             "ln -s ../real/manifest.json linked/manifest.json", work);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(gen("-o link shapes.yaml", &out), 1);
    assert_string_equal(out, "gemm-rvv-gen: error: link is a symbolic link, not a folder the "
                             "generator made: refusing to replace it (choose another -o)\n");
    free(out);
    assert_int_equal(gen("-o linked shapes.yaml", &out), 1);
    assert_non_null(strstr(out, "gemm-rvv-gen: error: linked holds files but no manifest.json"));
    free(out);
    assert_int_equal(gen("-o '' shapes.yaml", &out), 1);
    assert_string_equal(out, "gemm-rvv-gen: error: output folder name empty\n");
    free(out);
    char *manifest = work_read("linked/manifest.json");
    assert_non_null(manifest); /* through the link: the real output is still there */
    free(manifest);
}

/* out_dir_abort removes the fresh folder and the parents out_dir_begin made for it, and no
 * parent that was there before. */
static void test_abort_removes_what_begin_made(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/made/deeper/out", work);
    struct out_dir o;
    assert_int_equal(out_dir_begin(&o, path), 0);
    assert_int_equal(o.made_parents, strlen(work) + strlen("/made"));
    assert_int_equal(out_dir_write(&o, "a.c", "int a;\n", 7), 0);
    assert_true(exists_in_work("made"));
    out_dir_abort(&o);
    assert_false(exists_in_work("made"));
    /* Under a folder that exists, only the fresh folder goes. */
    snprintf(path, sizeof path, "%s/kept-parent", work);
    assert_int_equal(mkdir(path, 0777), 0);
    snprintf(path, sizeof path, "%s/kept-parent/out", work);
    assert_int_equal(out_dir_begin(&o, path), 0);
    assert_int_equal(o.made_parents, 0);
    out_dir_abort(&o);
    snprintf(path, sizeof path, "%s/kept-parent", work);
    DIR *dir = opendir(path);
    assert_non_null(dir);
    struct dirent *ent;
    while ((ent = readdir(dir)) != NULL)
        if (ent->d_name[0] != '.' || strlen(ent->d_name) > 2)
            fail_msg("left in kept-parent: %s", ent->d_name);
    closedir(dir);
}

/* out_dir_commit puts the new files in place of the generator's earlier output: its files are
 * gone, and so are the fresh folder's and the old one's names. */
static void test_commit_replaces_earlier_output(void **state)
{
    (void)state;
    char *out;
    assert_int_equal(gen("-o swap shapes.yaml", &out), 0);
    free(out);
    char path[512];
    snprintf(path, sizeof path, "%s/swap", work);
    struct out_dir o;
    assert_int_equal(out_dir_begin(&o, path), 0);
    static const char manifest[] = "{\n  \"generator\": \"gemm-rvv-gen test\"}\n";
    assert_int_equal(out_dir_write(&o, "manifest.json", manifest, sizeof manifest - 1), 0);
    assert_int_equal(out_dir_write(&o, "new.c", "int n;\n", 7), 0);
    assert_int_equal(out_dir_commit(&o), 0);
    assert_null(work_read("swap/registry.c"));
    char *text = work_read("swap/new.c");
    assert_non_null(text);
    assert_string_equal(text, "int n;\n");
    free(text);
    assert_false(exists_in_work("swap."));
    /* The new folder holds the generator's manifest: the next run may replace it. */
    assert_int_equal(gen("-o swap shapes.yaml", &out), 0);
    free(out);
    assert_null(work_read("swap/new.c"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_input_keeps_output),
        cmocka_unit_test(test_output_folder_guarded),
        cmocka_unit_test(test_write_failure_leaves_nothing),
        cmocka_unit_test(test_links_and_empty_name_refused),
        cmocka_unit_test(test_abort_removes_what_begin_made),
        cmocka_unit_test(test_commit_replaces_earlier_output),
    };
    return cmocka_run_group_tests_name("out_dir", tests, work_setup, work_teardown);
}
