#include "testdata.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t digest_add(uint64_t h, const void *bytes, size_t count)
{
    const unsigned char *b = bytes;
    for (size_t i = 0; i < count; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

void digest_print(const char *what, uint64_t h)
{
    printf("digest: %s %016llx\n", what, (unsigned long long)h);
    fflush(stdout);
}

uint64_t rng_next(struct rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545F4914F6CDD1Dull;
}

uint16_t rng_bf16(struct rng *r)
{
    uint64_t v = rng_next(r);
    if (v % 17 == 0)
        return (uint16_t)((v >> 8) & 0x8000); /* +-0 */
    uint16_t sign = (uint16_t)((v >> 16) & 0x8000);
    uint16_t exp = (uint16_t)(127 - 4 + (v >> 20) % 8); /* 2^-4 .. 2^3 */
    uint16_t mant = (uint16_t)((v >> 32) & 0x7f);
    return (uint16_t)(sign | exp << 7 | mant);
}

uint16_t rng_bf16_special(struct rng *r)
{
    static const uint16_t specials[] = {
        0x0000, 0x8000,         /* +0, -0 */
        0x0001, 0x807f, 0x0040, /* subnormals */
        0x7f80, 0xff80,         /* +Inf, -Inf */
        0x7fc0, 0xffc1, 0x7f81, /* quiet NaNs, a signalling NaN */
        0x7f7f, 0xff7f,         /* largest finite */
        0x0080, 0x0180,         /* tiny normals: their products fall below FP32's normal range */
        0x5f00, 0xdf7f,         /* huge normals: their products overflow */
    };
    uint64_t v = rng_next(r);
    if (v % 3 == 0)
        return specials[(v >> 8) % (sizeof specials / sizeof specials[0])];
    return rng_bf16(r);
}

void fill_bf16(struct rng *r, uint16_t *v, size_t count, int specials)
{
    for (size_t i = 0; i < count; i++)
        v[i] = specials ? rng_bf16_special(r) : rng_bf16(r);
}

float bf16_value(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

double ref_dot(const uint16_t *x, const uint16_t *w, size_t k, double *abs_sum)
{
    double sum = 0, abs = 0;
    for (size_t j = 0; j < k; j++) {
        double p = (double)bf16_value(x[j]) * bf16_value(w[j]); /* exact: 16 significant bits */
        sum += p;
        abs += fabs(p);
    }
    *abs_sum = abs;
    return sum;
}

double sum_error_bound(size_t k, double abs_sum)
{
    const double u = 0x1p-24;
    double n = (double)(k > 1 ? k - 1 : 1);
    return n * u / (1 - n * u) * abs_sum * 1.01 + 0x1p-149;
}

size_t y_over_copy_refused(int (*call)(void *ctx, void *y, int bf16), void *ctx,
                           unsigned char *mem, size_t bytes, int refused)
{
    const size_t at[3] = {0, bytes / 8 * 4, bytes - 2};
    unsigned char *was = malloc(bytes);
    size_t bad = 0;
    if (!was)
        return 1;
    memcpy(was, mem, bytes);
    for (int p = 0; p < 3 && !bad; p++)
        if (call(ctx, mem + at[p], p == 2) != refused || memcmp(mem, was, bytes) != 0)
            bad = 1 + at[p];
    free(was);
    return bad;
}
