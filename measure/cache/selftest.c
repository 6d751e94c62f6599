/* Programs whose DRAM traffic is known by hand, for checking measure/cache/cache_model.c:
 *   cache_selftest CASE
 * Each case touches page-aligned buffers (set up before the marked region, so the region holds
 * nothing else) between cache_model_start and cache_model_stop. selftest.sh holds the expected
 * bytes and why. Scalar cases load through a volatile pointer so that they stay scalar; vector
 * cases use RVV unit-stride and strided loads and stores, which QEMU reports element by element.
 * The mt-* cases run on the main thread and three workers started before the region (vCPUs 0
 * to 3, in the order QEMU creates them), in phases separated by barriers, for the plugin's
 * several-core model (l2_cores=). */
#define _POSIX_C_SOURCE 200809L /* pthread barriers */
#include <pthread.h>
#include <riscv_vector.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache_marker.h"

#define KIB 1024u
#define MIB (1024u * 1024u)

static volatile uint64_t sink;

static void *buffer(size_t bytes)
{
    void *p = aligned_alloc(4096, bytes);
    if (!p) {
        fprintf(stderr, "cache_selftest: out of memory\n");
        exit(1);
    }
    memset(p, 1, bytes); /* the pages exist before the region starts */
    return p;
}

/* Reads bytes from p, passes times, with scalar 8-byte loads. */
static void read_scalar(const void *p, size_t bytes, int passes)
{
    const volatile uint64_t *v = p;
    uint64_t sum = 0;
    for (int pass = 0; pass < passes; pass++)
        for (size_t i = 0; i < bytes / 8; i++)
            sum += v[i];
    sink = sum;
}

/* Reads the first 8 bytes of rows rows, stride bytes apart, passes times. */
static void read_rows(const uint8_t *p, size_t rows, size_t stride, int passes)
{
    uint64_t sum = 0;
    for (int pass = 0; pass < passes; pass++)
        for (size_t r = 0; r < rows; r++)
            sum += *(const volatile uint64_t *)(p + r * stride);
    sink = sum;
}

static void read_vector(const uint32_t *p, size_t words)
{
    size_t vl = __riscv_vsetvlmax_e32m8();
    vuint32m8_t acc = __riscv_vmv_v_x_u32m8(0, vl);
    for (size_t i = 0; i < words; i += vl) {
        vl = __riscv_vsetvl_e32m8(words - i);
        acc = __riscv_vadd_vv_u32m8_tu(acc, acc, __riscv_vle32_v_u32m8(p + i, vl), vl);
    }
    sink = __riscv_vmv_x_s_u32m8_u32(acc);
}

/* One 4-byte element from every stride-byte step (vlse32). */
static void read_strided(const uint8_t *p, size_t bytes, size_t stride)
{
    size_t count = bytes / stride, vl = __riscv_vsetvlmax_e32m1();
    vuint32m1_t acc = __riscv_vmv_v_x_u32m1(0, vl);
    for (size_t i = 0; i < count; i += vl) {
        vl = __riscv_vsetvl_e32m1(count - i);
        vuint32m1_t v = __riscv_vlse32_v_u32m1((const uint32_t *)(p + i * stride),
                                               (ptrdiff_t)stride, vl);
        acc = __riscv_vadd_vv_u32m1_tu(acc, acc, v, vl);
    }
    sink = __riscv_vmv_x_s_u32m1_u32(acc);
}

static void copy_vector(uint32_t *dst, const uint32_t *src, size_t words)
{
    for (size_t i = 0, vl; i < words; i += vl) {
        vl = __riscv_vsetvl_e32m8(words - i);
        __riscv_vse32_v_u32m8(dst + i, __riscv_vle32_v_u32m8(src + i, vl), vl);
    }
}

/* Writes bytes at p with scalar 8-byte stores. */
static void write_scalar(void *p, size_t bytes)
{
    volatile uint64_t *v = p;
    for (size_t i = 0; i < bytes / 8; i++)
        v[i] = i;
}

/* ---- several threads ------------------------------------------------------------------------
 * MT_THREADS participants (participant i is vCPU i: the main thread is 0); each case gives
 * what participant i does in phase 0 and phase 1 to the MT_BYTES buffer, or nothing. */
#define MT_THREADS 4
#define MT_BYTES (64 * KIB)

/* MT_STREAM: meet the other streaming threads (a spin, so that each is running), then read a
 * buffer of its own of MT_STREAM_BYTES twice */
#define MT_STREAM_BYTES (96 * KIB)
enum mt_role { MT_NONE, MT_READ, MT_WRITE, MT_STREAM };
struct mt_case {
    const char *name;
    enum mt_role role[2][MT_THREADS];
};
static const struct mt_case mt_cases[] = {
    /* two cores of cluster 0 read the buffer */
    {"mt-read-1cluster", {{MT_READ, MT_READ, MT_NONE, MT_NONE}, {0}}},
    /* vCPUs 1 and 2: two clusters when l2_cores=2, one when l2_cores=4 */
    {"mt-read-2clusters", {{MT_NONE, MT_READ, MT_READ, MT_NONE}, {0}}},
    /* vCPU 2 writes, then vCPU 1 reads */
    {"mt-write-read",
     {{MT_NONE, MT_NONE, MT_WRITE, MT_NONE}, {MT_NONE, MT_READ, MT_NONE, MT_NONE}}},
    /* vCPU 2 writes, then vCPU 1 writes */
    {"mt-write-write",
     {{MT_NONE, MT_NONE, MT_WRITE, MT_NONE}, {MT_NONE, MT_WRITE, MT_NONE, MT_NONE}}},
    /* vCPUs 0 and 1 each stream their own buffer twice, at the same time */
    {"mt-stream", {{MT_STREAM, MT_STREAM, MT_NONE, MT_NONE}, {0}}},
};
static const struct mt_case *mt;
static pthread_barrier_t mt_barrier;
static void *mt_buffer, *mt_own[MT_THREADS];
static atomic_int mt_streaming;

static void mt_phase(int who, int phase)
{
    if (mt->role[phase][who] == MT_READ)
        read_scalar(mt_buffer, MT_BYTES, 1);
    else if (mt->role[phase][who] == MT_WRITE)
        write_scalar(mt_buffer, MT_BYTES);
    else if (mt->role[phase][who] == MT_STREAM) {
        atomic_fetch_add(&mt_streaming, 1);
        while (atomic_load(&mt_streaming) < 2)
            ;
        read_scalar(mt_own[who], MT_STREAM_BYTES, 2);
    }
}

/* Both phases, each between two barriers; the main thread opens the region before the first. */
static void mt_run(int who)
{
    for (int phase = 0; phase < 2; phase++) {
        pthread_barrier_wait(&mt_barrier);
        mt_phase(who, phase);
    }
    pthread_barrier_wait(&mt_barrier);
}

static void *mt_worker(void *arg)
{
    mt_run((int)(intptr_t)arg);
    return NULL;
}

static int mt_main(const struct mt_case *c)
{
    pthread_t workers[MT_THREADS - 1];
    mt = c;
    mt_buffer = buffer(MT_BYTES);
    for (int i = 0; i < MT_THREADS; i++)
        if (c->role[0][i] == MT_STREAM)
            mt_own[i] = buffer(MT_STREAM_BYTES);
    pthread_barrier_init(&mt_barrier, NULL, MT_THREADS);
    for (int i = 1; i < MT_THREADS; i++)
        if (pthread_create(&workers[i - 1], NULL, mt_worker, (void *)(intptr_t)i) != 0) {
            fprintf(stderr, "cache_selftest: cannot start a thread\n");
            return 1;
        }
    cache_model_start();
    mt_run(0);
    cache_model_stop();
    for (int i = 1; i < MT_THREADS; i++)
        pthread_join(workers[i - 1], NULL);
    return 0;
}

int main(int argc, char **argv)
{
    const char *c = argc == 2 ? argv[1] : "";
    for (size_t i = 0; i < sizeof mt_cases / sizeof mt_cases[0]; i++)
        if (strcmp(c, mt_cases[i].name) == 0)
            return mt_main(&mt_cases[i]);
    void *a = buffer(4 * MIB), *b = buffer(4 * MIB);
    cache_model_start();
    if (strcmp(c, "stream-once") == 0)
        read_scalar(a, 4 * MIB, 1);
    else if (strcmp(c, "stream-twice") == 0)
        read_scalar(a, 4 * MIB, 2);
    else if (strcmp(c, "reuse-16k") == 0)
        read_scalar(a, 16 * KIB, 100);
    else if (strcmp(c, "reuse-256k") == 0)
        read_scalar(a, 256 * KIB, 4);
    else if (strcmp(c, "conflict") == 0)
        read_rows(a, 64, 8 * KIB, 100);
    else if (strcmp(c, "vector-stream") == 0)
        read_vector(a, 4 * MIB / 4);
    else if (strcmp(c, "vector-strided") == 0)
        read_strided(a, 4 * MIB, 64);
    else if (strcmp(c, "vector-copy") == 0)
        copy_vector(b, a, 4 * MIB / 4);
    else {
        fprintf(stderr, "usage: cache_selftest stream-once | stream-twice | reuse-16k | "
                        "reuse-256k | conflict | vector-stream | vector-strided | vector-copy | "
                        "mt-read-1cluster | mt-read-2clusters | mt-write-read | mt-write-write | "
                        "mt-stream\n");
        return 2;
    }
    cache_model_stop();
    return 0;
}
