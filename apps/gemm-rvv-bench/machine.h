/* What the bench needs to know about the machine it runs on, and how it places its threads. */
#ifndef BENCH_MACHINE_H
#define BENCH_MACHINE_H

#include <stddef.h>

/* Nonzero when this runs under an emulator; *why says how that was seen. */
int machine_emulated(const char **why);

/* Nonzero when the core has the V extension (AT_HWCAP), as the library checks it. */
int machine_has_vector(void);

/* The largest CPU cache of CPU 0 as sysfs describes it: its size in bytes and level, or 0
 * when sysfs says nothing. */
size_t machine_largest_cache(int *level);

/* The CPUs this process may run on, in increasing order: fills up to cap and returns the count
 * (at least 1: CPU 0 when the system does not say). */
int machine_cpus(int *cpus, int cap);

/* Pins the calling thread to one CPU. 0, or -1 if the system refused. */
int machine_pin_self(int cpu);

/* Monotonic seconds. */
double machine_seconds(void);

#endif
