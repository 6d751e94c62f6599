/* Writing the output folder, in the generator's process: a failed write closes what it opened,
 * and every file and the folder itself reach the disk (fsync) before the folder is renamed
 * into place. Linked with -Wl,--wrap=fsync,--wrap=rename to watch the order. */
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
#include <unistd.h>

#include <cmocka.h>

#include "emit.h"

static char work[256];
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

static int setup(void **state)
{
    (void)state;
    snprintf(work, sizeof work, "/tmp/gemm-rvv-emit-XXXXXX");
    assert_non_null(mkdtemp(work));
    static const char text[] = "layers:\n  - {name: q, N: 4096, K: 4096, M: [1, 4]}\n";
    struct diag d = {"shapes.yaml", stderr, 0};
    assert_int_equal(shapes_read_buffer(text, strlen(text), &d, &s), 0);
    assert_int_equal(plan_build(&s, &s.gate, &s.buckets, &s.target, &p), 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    plan_free(&p);
    shapes_free(&s);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", work);
    return system(cmd);
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
    assert_int_equal(emit_to("out"), 0);
    char out[512], want[700];
    snprintf(out, sizeof out, "%s/out", work);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_failed_write_closes_files),
        cmocka_unit_test(test_synced_before_rename),
    };
    return cmocka_run_group_tests_name("emit", tests, setup, teardown);
}
