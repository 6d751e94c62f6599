#include "gen_run.h"

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "files.h"

char work[256];

const char work_shapes[] =
    "model: demo\n"
    "layers:\n"
    "  - {name: q_proj, N: 4096, K: 4096, M: [1, 4, 512]}\n"
    "  - {name: small,  N: 896,  K: 896,  M: 1}\n";

int work_setup(void **state)
{
    (void)state;
    temp_dir_make(work, sizeof work, "gen");
    work_write("shapes.yaml", work_shapes);
    return 0;
}

int work_teardown(void **state)
{
    (void)state;
    return temp_dir_remove(work);
}

int run(const char *shell, const char *bin, const char *args, char **out)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cd '%s' && %s '%s' %s 2>&1", work, shell, bin, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t cap = 1 << 16, len = 0, n;
    char *buf = malloc(cap);
    assert_non_null(buf);
    while ((n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
        len += n;
        if (len + 1 == cap) {
            buf = realloc(buf, cap *= 2);
            assert_non_null(buf);
        }
    }
    buf[len] = '\0';
    int status = pclose(p);
    *out = buf;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int gen(const char *args, char **out) { return run("", GEN_BIN, args, out); }

void work_write(const char *name, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", work, name);
    file_write(path, text);
}

char *work_read(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", work, name);
    return file_read(path);
}

size_t same_folders(const char *a, const char *b)
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
        char *ta = work_read(fa), *tb = work_read(fb);
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

int exists_in_work(const char *prefix)
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
