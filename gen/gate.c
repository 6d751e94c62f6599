#include "gate.h"

#include <stdio.h>
#include <string.h>

struct gate gate_default(void)
{
    struct gate g = {GATE_DEFAULT_MIN_N, GATE_DEFAULT_MIN_K, GATE_DEFAULT_MAX_M,
                     GATE_DEFAULT_MIN_MNK};
    return g;
}

struct buckets buckets_default(void)
{
    struct buckets b = {{2, 4, 8, 16, 32, 64, 128}, 7};
    return b;
}

uint32_t bucket_for(const struct buckets *b, uint64_t m)
{
    if (m == 1)
        return 1;
    for (size_t i = 0; i < b->count; i++)
        if (m <= b->m[i])
            return b->m[i];
    return 0;
}

/* Appends ", "-separated clauses to a fixed buffer; truncation is harmless (it is only text). */
static void add_reason(struct decision *d, const char *fmt, unsigned long long a,
                       unsigned long long b)
{
    size_t used = strlen(d->reason);
    if (used > 0 && used + 2 < sizeof d->reason) {
        strcat(d->reason, ", ");
        used += 2;
    }
    snprintf(d->reason + used, sizeof d->reason - used, fmt, a, b);
}

struct decision gate_decide(const struct gate *g, const struct buckets *b,
                            uint64_t m, uint64_t n, uint64_t k)
{
    struct decision d = {VERDICT_FALLBACK, 0, 0, ""};
    uint64_t mnk = m * n * k;

    if (n < g->min_n)
        add_reason(&d, "N=%llu < %llu", n, g->min_n);
    if (k < g->min_k)
        add_reason(&d, "K=%llu < %llu", k, g->min_k);
    int shape_fails = d.reason[0] != '\0' || mnk < g->min_mnk;
    if (m > g->max_m)
        add_reason(&d, "M=%llu > %llu", m, g->max_m);
    if (mnk < g->min_mnk)
        add_reason(&d, "M*N*K=%llu < %llu", mnk, g->min_mnk);
    if (shape_fails)
        return d;

    d.bucket = m <= g->max_m ? bucket_for(b, m) : 0;
    if (d.bucket != 0) {
        d.verdict = VERDICT_KERNEL;
        d.row_blocks = 1;
        return d;
    }
    /* M is too big for one block: the largest bucket within max_m, in blocks of rows. */
    uint32_t largest = 0;
    for (size_t i = 0; i < b->count; i++)
        if (b->m[i] <= g->max_m)
            largest = b->m[i];
    if (m > 1 && largest == 0) {
        if (d.reason[0] == '\0')
            add_reason(&d, "M=%llu > largest bucket %llu", m, 1);
        else
            add_reason(&d, "no bucket within M <= %llu", g->max_m, 0);
        return d;
    }
    if (d.reason[0] == '\0')
        add_reason(&d, "M=%llu > largest bucket %llu", m, largest);
    d.verdict = VERDICT_KERNEL;
    d.bucket = largest;
    d.row_blocks = (uint32_t)((m + largest - 1) / largest);
    size_t used = strlen(d.reason);
    snprintf(d.reason + used, sizeof d.reason - used, ": %u row blocks of M <= %u",
             d.row_blocks, largest);
    return d;
}
