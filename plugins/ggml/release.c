/* Giving back the file pages a weight was packed from (see plugin.h). llama.cpp maps the model
 * file (read-only, MAP_SHARED) and copies each weight it places in GEMM_RVV's buffer out of
 * that mapping; the mapping stays, so without this every packed weight would be resident twice. */
#define _DEFAULT_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "plugin.h"

/* Whether [from, to) lies inside one shared mapping of a file that this process cannot write:
 * a shared mapping's pages are the file's own (page cache), read again they are the same bytes.
 * A private one's may be the process's copy-on-write changes, which MADV_DONTNEED would drop;
 * /proc/self/maps cannot tell, so those are never given back. */
static bool read_only_shared_file_mapping(uintptr_t from, uintptr_t to)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    if (!maps)
        return false;
    bool found = false;
    char line[512];
    while (!found && fgets(line, sizeof line, maps)) {
        unsigned long start, end, inode;
        char perms[5];
        if (sscanf(line, "%lx-%lx %4s %*s %*s %lu", &start, &end, perms, &inode) != 4)
            continue;
        if (from >= start && to <= end)
            found = perms[0] == 'r' && perms[1] != 'w' && perms[3] == 's' && inode != 0;
        else if (from >= start && from < end)
            break; /* runs past its mapping */
    }
    fclose(maps);
    return found;
}

void grg_release_source(const void *src, size_t size)
{
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0 || size < (size_t)page)
        return;
    uintptr_t from = ((uintptr_t)src + (uintptr_t)page - 1) / (uintptr_t)page * (uintptr_t)page;
    uintptr_t to = ((uintptr_t)src + size) / (uintptr_t)page * (uintptr_t)page;
    if (to <= from || !read_only_shared_file_mapping((uintptr_t)src, (uintptr_t)src + size))
        return;
    madvise((void *)from, to - from, MADV_DONTNEED);
}
