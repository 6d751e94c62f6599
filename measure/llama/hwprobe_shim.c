/* An LD_PRELOAD library for counting llama.cpp under Debian 12's QEMU 7.2, which has no
 * riscv_hwprobe system call: ggml scores its CPU variants with it, so without an answer it loads
 * the rv64gc variant. This libc syscall() answers riscv_hwprobe (258) as a core with IMA, F, D,
 * C and V would, saying nothing of other keys, and passes every other call on to libc's.
 *   qemu-riscv64 -cpu rv64,v=true,vlen=256 -E LD_PRELOAD=hwprobe_shim.so -L ROOT llama-bench ... */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

enum { NR_RISCV_HWPROBE = 258, KEY_IMA_EXT_0 = 4 };
enum { IMA_FD = 1, IMA_C = 2, IMA_V = 4 };

struct hwprobe_pair {
    int64_t key;
    uint64_t value;
};

long syscall(long number, ...)
{
    va_list ap;
    va_start(ap, number);
    long a[6];
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    if (number == NR_RISCV_HWPROBE) {
        struct hwprobe_pair *pairs = (struct hwprobe_pair *)a[0];
        size_t count = (size_t)a[1];
        for (size_t i = 0; i < count; i++) {
            if (pairs[i].key == KEY_IMA_EXT_0) {
                pairs[i].value = IMA_FD | IMA_C | IMA_V;
            } else {
                pairs[i].key = -1; /* the kernel's answer for a key it does not know */
                pairs[i].value = 0;
            }
        }
        return 0;
    }
    long (*next)(long, ...) = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
    return next(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}
