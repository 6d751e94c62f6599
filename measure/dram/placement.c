/* See placement.h. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "placement.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define PAGE 4096u

struct placement placement_from_env(const char *program)
{
    struct placement p = {PLACEMENT_ALIGNED, 0};
    const char *s = getenv("DRAM_PLACEMENT");
    if (!s || !*s || strcmp(s, "aligned") == 0)
        return p;
    if (strcmp(s, "malloc") == 0) {
        p.kind = PLACEMENT_MALLOC;
        return p;
    }
    if (strncmp(s, "page+", 5) == 0 && s[5] >= '0' && s[5] <= '9') {
        char *end;
        unsigned long b = strtoul(s + 5, &end, 10);
        if (!*end && b < PAGE && b % 2 == 0) {
            p.kind = PLACEMENT_PAGE;
            p.offset = b;
            return p;
        }
    }
    fprintf(stderr, "%s: DRAM_PLACEMENT must be aligned, malloc or page+B (B even, below %u), got \"%s\"\n",
            program, PAGE, s);
    exit(2);
}

static void *checked(void *p, size_t bytes, const char *program)
{
    if (!p) {
        fprintf(stderr, "%s: cannot allocate %zu bytes\n", program, bytes);
        exit(1);
    }
    return p;
}

void *placement_page(size_t bytes, size_t offset, const char *program)
{
    size_t len = (offset + bytes + PAGE - 1) / PAGE * PAGE + PAGE;
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return checked(p == MAP_FAILED ? NULL : (char *)p + offset, bytes, program);
}

void *placement_alloc(const struct placement *p, size_t bytes, size_t element, const char *program)
{
    switch (p->kind) {
    case PLACEMENT_MALLOC:
        return checked(malloc(bytes ? bytes : 1), bytes, program);
    case PLACEMENT_PAGE:
        return placement_page(bytes, p->offset / element * element, program);
    case PLACEMENT_ALIGNED:
    default: {
        size_t rounded = (bytes + 63) / 64 * 64;
        return checked(aligned_alloc(64, rounded ? rounded : 64), bytes, program);
    }
    }
}

const char *placement_name(const struct placement *p, char *buf, size_t size)
{
    if (p->kind == PLACEMENT_PAGE)
        snprintf(buf, size, "page+%zu", p->offset);
    else
        snprintf(buf, size, "%s", p->kind == PLACEMENT_MALLOC ? "malloc" : "aligned");
    return buf;
}
