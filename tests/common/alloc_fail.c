/* The allocation hook of alloc_fail.h, through the linker's --wrap: calls from the objects
 * linked into a test (the generator's, the test's, libyaml's) come here; libc's own internal
 * allocations do not. */
#include "alloc_fail.h"

#include <stdlib.h>
#include <string.h>

void *__real_malloc(size_t size);
void *__real_calloc(size_t count, size_t size);
void *__real_realloc(void *p, size_t size);
char *__real_strdup(const char *s);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t count, size_t size);
void *__wrap_realloc(void *p, size_t size);
char *__wrap_strdup(const char *s);

static long fail_at = -1, counted;
static int fired;

void alloc_fail_at(long n)
{
    fail_at = n;
    counted = 0;
    fired = 0;
}

int alloc_fail_fired(void) { return fired; }

long alloc_fail_count(void) { return counted; }

/* Counts one allocation; says whether it is the one to fail. */
static int should_fail(void)
{
    if (fail_at < 0)
        return 0;
    if (counted++ != fail_at)
        return 0;
    fired = 1;
    return 1;
}

void *__wrap_malloc(size_t size) { return should_fail() ? NULL : __real_malloc(size); }

void *__wrap_calloc(size_t count, size_t size)
{
    return should_fail() ? NULL : __real_calloc(count, size);
}

void *__wrap_realloc(void *p, size_t size) { return should_fail() ? NULL : __real_realloc(p, size); }

char *__wrap_strdup(const char *s) { return should_fail() ? NULL : __real_strdup(s); }
