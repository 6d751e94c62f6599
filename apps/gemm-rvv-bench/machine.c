#define _GNU_SOURCE /* sched_getaffinity, pthread_setaffinity_np */
#include "machine.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>

/* tools/riscv64-run sets GEMM_RVV_EMULATED=1. A plain qemu-riscv64 run is seen by its
 * /proc/cpuinfo: QEMU 7.2 user mode shows the host's, which describes no RISC-V hart (a real
 * riscv64 Linux lists an "isa" line per hart). */
int machine_emulated(const char **why)
{
    const char *env = getenv("GEMM_RVV_EMULATED");
    if (env && *env && strcmp(env, "0") != 0) {
        *why = "GEMM_RVV_EMULATED is set (tools/riscv64-run sets it)";
        return 1;
    }
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) {
        *why = "";
        return 0;
    }
    char line[512];
    int riscv = 0;
    while (!riscv && fgets(line, sizeof line, f))
        riscv = strncmp(line, "isa", 3) == 0 && strstr(line, "rv64") != NULL;
    fclose(f);
    *why = riscv ? "" : "/proc/cpuinfo describes no RISC-V hart (QEMU user mode shows the host's)";
    return !riscv;
}

int machine_has_vector(void)
{
    return (getauxval(AT_HWCAP) & (1ul << ('V' - 'A'))) != 0;
}

/* A sysfs attribute of one cache, or "" when missing. */
static void read_cache_attr(int index, const char *name, char *buf, size_t len)
{
    char path[128];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/%s", index, name);
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    if (!fgets(buf, (int)len, f))
        buf[0] = '\0';
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
}

size_t machine_largest_cache(int *level)
{
    size_t best = 0;
    *level = 0;
    for (int i = 0; i < 16; i++) {
        char type[32], lvl[16], size[32];
        read_cache_attr(i, "type", type, sizeof type);
        if (!type[0])
            break;
        if (strcmp(type, "Instruction") == 0)
            continue;
        read_cache_attr(i, "level", lvl, sizeof lvl);
        read_cache_attr(i, "size", size, sizeof size);
        char *end;
        unsigned long long bytes = strtoull(size, &end, 10);
        bytes *= *end == 'K' ? 1024ull : *end == 'M' ? 1024ull * 1024 : 1ull;
        if (atoi(lvl) > *level || (atoi(lvl) == *level && bytes > best)) {
            *level = atoi(lvl);
            best = (size_t)bytes;
        }
    }
    return best;
}

int machine_cpus(int *cpus, int cap)
{
    cpu_set_t set;
    int count = 0;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int c = 0; c < CPU_SETSIZE && count < cap; c++)
            if (CPU_ISSET(c, &set))
                cpus[count++] = c;
    if (count == 0)
        cpus[count++] = 0;
    return count;
}

int machine_pin_self(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0 ? 0 : -1;
}

double machine_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
