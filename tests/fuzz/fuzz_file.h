/* For the fuzz targets whose readers take a path: the input written to a file of a private
 * folder (on tmpfs when there is one), rewritten for every input. */
#ifndef FUZZ_FILE_H
#define FUZZ_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The private folder, made on first use. */
static const char *fuzz_dir(void)
{
    static char dir[64];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "%s/gemm-rvv-fuzz-XXXXXX",
                 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
        if (!mkdtemp(dir))
            abort();
    }
    return dir;
}

/* Writes data to NAME in the folder; its path goes to path. */
static void fuzz_write(const char *name, const uint8_t *data, size_t size, char *path, size_t len)
{
    snprintf(path, len, "%s/%s", fuzz_dir(), name);
    FILE *f = fopen(path, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
        abort();
}

#endif
