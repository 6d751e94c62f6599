/* An application built with the project's toolchain can include the system headers an inference
 * engine uses next to gemm_rvv.h: libc (<errno.h>, <sys/mman.h>, threads, affinity, the aux
 * vector) and the kernel's (<linux/perf_event.h>, <asm/hwcap.h>, <asm/hwprobe.h> through
 * glibc's <sys/hwprobe.h>). `make test-sysheaders` compiles it with -Werror, checks that every
 * header came from the toolchain (none from the host's /usr/include), and runs it.
 *
 * Run: engine_headers [--expect-v]. It maps and unmaps a page, reads the V bit of AT_HWCAP
 * (with --expect-v, e.g. under qemu-riscv64 -cpu rv64,v=true, it must be set), asks
 * riscv_hwprobe for Zvfbfwma (a kernel or QEMU without the call says ENOSYS) and opens a perf
 * counter (which may be refused). Exit status 0 when each answer is one the kernel may give. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <asm/hwcap.h>
#include <linux/perf_event.h>

#include "gemm_rvv.h"

#if __has_include(<sys/hwprobe.h>)
#include <sys/hwprobe.h>
#define HAVE_HWPROBE 1
#elif __has_include(<asm/hwprobe.h>)
#include <asm/hwprobe.h>
#define HAVE_HWPROBE 1
#endif

#if defined(REQUIRE_HWPROBE) && !defined(RISCV_HWPROBE_EXT_ZVFBFWMA)
#error "the toolchain's <asm/hwprobe.h> has no RISCV_HWPROBE_EXT_ZVFBFWMA"
#endif

/* 1 or 0 for Zvfbfwma as riscv_hwprobe reports it, or -1 with errno set. */
static int probe_zvfbfwma(void)
{
#ifdef RISCV_HWPROBE_EXT_ZVFBFWMA
    struct riscv_hwprobe pair = {.key = RISCV_HWPROBE_KEY_IMA_EXT_0, .value = 0};
    if (syscall(__NR_riscv_hwprobe, &pair, 1, 0, NULL, 0) != 0)
        return -1;
    return (pair.value & RISCV_HWPROBE_EXT_ZVFBFWMA) != 0;
#else
    errno = ENOSYS;
    return -1;
#endif
}

/* A file descriptor counting this thread's instructions, or -1 with errno set. */
static int open_instruction_counter(void)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.type = PERF_TYPE_HARDWARE;
    attr.size = sizeof attr;
    attr.config = PERF_COUNT_HW_INSTRUCTIONS;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    return (int)syscall(__NR_perf_event_open, &attr, 0, -1, -1, 0);
}

int main(int argc, char **argv)
{
    int expect_v = argc > 1 && strcmp(argv[1], "--expect-v") == 0;
    int failures = 0;

    long page = sysconf(_SC_PAGESIZE);
    void *p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED || munmap(p, (size_t)page) != 0) {
        printf("FAIL: mmap/munmap of one page: %s\n", strerror(errno));
        failures++;
    }

    int has_v = (getauxval(AT_HWCAP) & COMPAT_HWCAP_ISA_V) != 0;
    printf("AT_HWCAP: V %s\n", has_v ? "yes" : "no");
    if (expect_v && !has_v) {
        printf("FAIL: the V bit of AT_HWCAP is not set on a core with V\n");
        failures++;
    }

    int zvfbfwma = probe_zvfbfwma();
    if (zvfbfwma >= 0)
        printf("riscv_hwprobe: Zvfbfwma %s\n", zvfbfwma ? "yes" : "no");
    else if (errno == ENOSYS)
        printf("riscv_hwprobe: not in this kernel (ENOSYS)\n");
    else {
        printf("FAIL: riscv_hwprobe: %s\n", strerror(errno));
        failures++;
    }

    int fd = open_instruction_counter();
    if (fd >= 0)
        close(fd);
    printf("perf_event_open: %s\n", fd >= 0 ? "a counter" : strerror(errno));

    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    if (sched_getaffinity(0, sizeof cpus, &cpus) == 0)
        printf("CPUs for this process: %d\n", CPU_COUNT(&cpus));
    printf("pthread_self: %s, gemm_rvv %s\n", pthread_self() ? "set" : "zero", GEMM_RVV_VERSION_STRING);
    return failures ? 1 : 0;
}
