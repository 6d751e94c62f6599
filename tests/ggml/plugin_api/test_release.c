/* plugin_api's groups for plugins/ggml/release.c: the memory a weight is set from, given back or
 * left alone. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- group source: the memory a weight is set from ---- */

/* Resident KiB of this process (statm; under QEMU the emulator's, whose resident pages include
 * the guest's), or -1. */
static long resident_kib(void)
{
    long size, pages = -1;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &size, &pages) != 2)
            pages = -1;
        fclose(f);
    }
    return pages < 0 ? -1 : pages * (sysconf(_SC_PAGESIZE) / 1024);
}

/* A new unlinked file holding `size` bytes of `bytes`, mapped with `flags`: MAP_PRIVATE
 * read-write (an engine's copy it may change) or MAP_SHARED read-only (llama.cpp's). */
static uint8_t *map_file(const uint8_t *bytes, size_t size, int flags)
{
    char path[] = "/tmp/plugin_api_source_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) {
        pa_fail("mkstemp: %s", strerror(errno));
        return NULL;
    }
    unlink(path);
    void *p = MAP_FAILED;
    if (write(fd, bytes, size) == (ssize_t)size)
        p = mmap(NULL, size, flags == MAP_SHARED ? PROT_READ : PROT_READ | PROT_WRITE, flags, fd, 0);
    else
        pa_fail("writing %zu bytes to %s failed", size, path);
    close(fd);
    if (p == MAP_FAILED) {
        pa_fail("mmap of %zu bytes failed", size);
        return NULL;
    }
    return p;
}

/* Issue 43's defect 1: a weight set from a private mapping of a file that the engine changed
 * (copy-on-write pages) and then made read-only. Its changes must stay, in its memory and in
 * the weight; the plugin used to give those pages back, and they read as the file's again. */
static void source_private_body(struct weight *w, uint8_t *file_bytes, uint8_t *changed,
                                size_t size, const char *format)
{
    uint8_t *map = map_file(file_bytes, size, MAP_PRIVATE);
    if (!map)
        return;
    memcpy(map, changed, size);
    if (mprotect(map, size, PROT_READ) != 0)
        pa_fail("mprotect: %s", strerror(errno));
    ggml_backend_tensor_set(w->t, map, 0, size);
    size_t reverted = 0, first = size;
    for (size_t i = 0; i < size; i++)
        if (map[i] != changed[i]) {
            reverted++;
            first = first < i ? first : i;
        }
    if (reverted)
        pa_fail("%s: %zu of the %zu bytes the engine wrote into its private mapping read as the "
                "file's again after set_tensor from it (the first at byte %zu)", format, reverted,
             size, first);
    if (strcmp(format, "BF16") == 0)
        pa_expect_bits("BF16 weight set from the changed mapping", w->t, (const uint16_t *)changed,
                       0, size / 2);
    else
        pa_expect_bytes("Q8_0 weight set from the changed mapping", w->t, changed, 0, size);
    munmap(map, size);
}

/* llama.cpp's mapping of the model (shared, read-only): the pages a packed weight was copied
 * out of are given back, so that it is not resident twice. */
static void source_shared_body(struct weight *w, uint8_t *file_bytes, size_t size)
{
    uint8_t *map = map_file(file_bytes, size, MAP_SHARED);
    if (!map)
        return;
    /* The weight's own pages resident first, then the mapping's: only the latter may go. */
    ggml_backend_tensor_set(w->t, file_bytes, 0, size);
    volatile uint8_t sum = 0;
    for (size_t i = 0; i < size; i += 4096)
        sum += map[i];
    (void)sum;
    long before = resident_kib();
    ggml_backend_tensor_set(w->t, map, 0, size);
    long after = resident_kib();
    if (before < 0 || after < 0)
        pa_fail("no resident size from /proc/self/statm");
    else if (after > before - (long)(size / 1024) / 2)
        pa_fail("set_tensor from a read-only shared file mapping of %zu KiB: resident %ld KiB "
                "before, %ld KiB after: the mapping's pages were not given back", size / 1024,
             before, after);
    pa_expect_bits("BF16 weight set from the shared mapping", w->t, (const uint16_t *)file_bytes, 0,
                   size / 2);
    munmap(map, size);
}

void group_source(void)
{
    /* BF16 4864 x 896 (8.7 MB) and Q8_0 384 x 1152 (470 KB): shapes with plans. */
    const int64_t n = 4864, k = 896, qn = 384, qk = 1152;
    size_t size = (size_t)(n * k) * 2, qsize = (size_t)(qn * qk / 32) * PA_Q8_BLOCK_BYTES;
    uint8_t *file_bytes = pa_xmalloc(size), *changed = pa_xmalloc(size);
    pa_fill_bf16((uint16_t *)file_bytes, (size_t)(n * k), 0.05f);
    pa_fill_bf16((uint16_t *)changed, (size_t)(n * k), 0.05f);
    struct weight w;

    pa_case_begin();
    if (pa_weight_new(&w, n, k, "w"))
        source_private_body(&w, file_bytes, changed, size, "BF16");
    pa_weight_free(&w);
    pa_case_end("a BF16 weight set from a changed private file mapping: the engine's bytes stay");

    pa_case_begin();
    pa_fill_q8_0(file_bytes, qsize / PA_Q8_BLOCK_BYTES, false);
    pa_fill_q8_0(changed, qsize / PA_Q8_BLOCK_BYTES, false);
    if (pa_q8_weight_new(&w, qn, qk, "w_q8"))
        source_private_body(&w, file_bytes, changed, qsize, "Q8_0");
    pa_weight_free(&w);
    pa_case_end("a Q8_0 weight set from a changed private file mapping: the engine's bytes stay");

    pa_case_begin();
    pa_fill_bf16((uint16_t *)file_bytes, (size_t)(n * k), 0.05f);
    if (pa_weight_new(&w, n, k, "w"))
        source_shared_body(&w, file_bytes, size);
    pa_weight_free(&w);
    pa_case_end("a weight set from a read-only shared file mapping: its pages are given back");
    free(file_bytes);
    free(changed);
}
