#include "out_dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* How every manifest.json the generator writes starts (manifest.c). */
static const char manifest_start[] = "{\n  \"generator\": \"gemm-rvv-gen ";

static int fail(const char *what, const char *path)
{
    fprintf(stderr, "gemm-rvv-gen: error: %s %s: %s\n", what, path, strerror(errno));
    return -1;
}

static int holds_manifest(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return 0;
    char head[sizeof manifest_start];
    struct stat st;
    ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, head, sizeof head - 1) : -1;
    close(fd);
    return n == (ssize_t)sizeof head - 1 && memcmp(head, manifest_start, sizeof head - 1) == 0;
}

static int is_empty(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int empty = 1;
    struct dirent *e;
    while (empty && (e = readdir(d)) != NULL)
        empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
    closedir(d);
    return empty;
}

/* Only what the generator made is replaced: nothing, an empty folder, or its own output. */
static int may_replace(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? 0 : fail("cannot look at", path);
    if (!S_ISDIR(st.st_mode)) {
        fprintf(stderr, "gemm-rvv-gen: error: %s is %s, not a folder the generator made: "
                        "refusing to replace it (choose another -o)\n",
                path, S_ISLNK(st.st_mode) ? "a symbolic link" : "a file");
        return -1;
    }
    if (holds_manifest(path) || is_empty(path))
        return 0;
    fprintf(stderr, "gemm-rvv-gen: error: %s holds files but no manifest.json of gemm-rvv-gen: "
                    "refusing to replace a folder the generator did not make (remove it or "
                    "choose another -o)\n", path);
    return -1;
}

/* Makes the missing folders above `path`, noting the first one made. */
static int make_parents(struct out_dir *o, const char *path)
{
    char buf[sizeof o->tmp];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0777) == 0) {
            if (!o->made_parents)
                o->made_parents = (size_t)(p - buf);
        } else if (errno != EEXIST) {
            return -1;
        }
        *p = '/';
    }
    return 0;
}

/* Removes the parent folders make_parents made, deepest first. */
static void remove_parents(struct out_dir *o)
{
    if (!o->made_parents)
        return;
    char buf[sizeof o->tmp];
    snprintf(buf, sizeof buf, "%s", o->tmp);
    for (size_t i = strlen(buf); i-- > o->made_parents;)
        if (buf[i] == '/') {
            buf[i] = '\0';
            rmdir(buf);
        }
    buf[o->made_parents] = '\0';
    rmdir(buf);
    o->made_parents = 0;
}

int out_dir_begin(struct out_dir *o, const char *path)
{
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/')
        len--;
    memset(o, 0, sizeof *o);
    if (len == 0 || len + 32 > sizeof o->path) {
        fprintf(stderr, "gemm-rvv-gen: error: output folder name %s\n",
                len ? "too long" : "empty");
        return -1;
    }
    memcpy(o->path, path, len);
    o->path[len] = '\0';
    if (may_replace(o->path) != 0)
        return -1;
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp-XXXXXX", o->path);
    if (make_parents(o, o->tmp) != 0 || !mkdtemp(o->tmp)) {
        fprintf(stderr, "gemm-rvv-gen: error: cannot create a folder beside %s: %s\n", o->path,
                strerror(errno));
        remove_parents(o);
        o->tmp[0] = '\0';
        return -1;
    }
    chmod(o->tmp, 0755);
    return 0;
}

int out_dir_write(struct out_dir *o, const char *name, const char *data, size_t len)
{
    char path[sizeof o->tmp + 256];
    snprintf(path, sizeof path, "%s/%s", o->tmp, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0666);
    if (fd < 0)
        return fail("cannot write", path);
    for (size_t done = 0; done < len;) {
        ssize_t n = write(fd, data + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = ENOSPC;
            fail("cannot write", path);
            close(fd);
            return -1;
        }
        done += (size_t)n;
    }
    if (fsync(fd) != 0) {
        fail("cannot write", path);
        close(fd);
        return -1;
    }
    return close(fd) == 0 ? 0 : fail("cannot write", path);
}

/* Makes a folder's entries (files made, renamed) durable. Returns 0, or -1 with errno set. */
static int sync_dir(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return -1;
    int rc = fsync(fd) == 0 || errno == EINVAL ? 0 : -1; /* EINVAL: cannot be synced */
    int saved = errno;
    close(fd);
    errno = saved;
    return rc;
}

static void parent_of(const char *path, char *out, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(out, size, ".");
    else if (slash == path)
        snprintf(out, size, "/");
    else
        snprintf(out, size, "%.*s", (int)(slash - path), path);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void remove_tree(const char *path)
{
    nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int out_dir_commit(struct out_dir *o)
{
    if (sync_dir(o->tmp) != 0)
        return fail("cannot sync", o->tmp);
    char old[sizeof o->path + 32], parent[sizeof o->path];
    snprintf(old, sizeof old, "%s.old-%ld", o->path, (long)getpid());
    int had_old = rename(o->path, old) == 0;
    if (rename(o->tmp, o->path) != 0) {
        fprintf(stderr, "gemm-rvv-gen: error: cannot move %s to %s: %s\n", o->tmp, o->path,
                strerror(errno));
        if (had_old)
            rename(old, o->path);
        return -1;
    }
    o->tmp[0] = '\0';
    o->made_parents = 0;
    if (had_old)
        remove_tree(old);
    /* The output is in place; syncing its parent only makes the move durable sooner. */
    parent_of(o->path, parent, sizeof parent);
    sync_dir(parent);
    return 0;
}

void out_dir_abort(struct out_dir *o)
{
    if (o->tmp[0])
        remove_tree(o->tmp);
    remove_parents(o);
    o->tmp[0] = '\0';
}
