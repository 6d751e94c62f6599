/* A test-only allocation hook: host tests are linked with -Wl,--wrap=malloc,calloc,realloc,
 * strdup (and libyaml statically, so its allocations go through the hook too), and can make
 * one chosen allocation fail to walk every out-of-memory path of a call. */
#ifndef TESTS_ALLOC_FAIL_H
#define TESTS_ALLOC_FAIL_H

#include <stddef.h>

/* From now on, the allocation numbered `n` (0 = the next one) fails, once; a negative n
 * disarms the hook. */
void alloc_fail_at(long n);

/* Whether the chosen allocation was reached (and failed) since alloc_fail_at. */
int alloc_fail_fired(void);

/* Allocations counted since alloc_fail_at. */
long alloc_fail_count(void);

#endif
