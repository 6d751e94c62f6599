/* Test inputs and checks shared by the target tests: seeded BF16 data, special values, the
 * FP64 reference and its error bound. */
#ifndef TESTDATA_H
#define TESTDATA_H

#include <stddef.h>
#include <stdint.h>

/* A small deterministic generator (xorshift64*), so a failure can be replayed. */
struct rng {
    uint64_t s;
};
uint64_t rng_next(struct rng *r);

/* BF16 values of moderate size (|v| in [2^-4, 2^4) or 0), both signs. */
uint16_t rng_bf16(struct rng *r);

/* One of: +-0, a subnormal, +-Inf, a quiet or signalling NaN, the largest finite, a tiny or a
 * huge normal, or an ordinary value. */
uint16_t rng_bf16_special(struct rng *r);

void fill_bf16(struct rng *r, uint16_t *v, size_t count, int specials);

/* The FP32 value of BF16 bits, worked out here apart from the library's own conversions. */
float bf16_value(uint16_t h);

/* The exact-in-FP64 reference sum of row m of X times row n of W, and the sum of |products|. */
double ref_dot(const uint16_t *x, const uint16_t *w, size_t k, double *abs_sum);

/* Largest error a K-term FP32 sum in order may have against the FP64 value (Higham's
 * gamma_{K-1} bound), with a margin for the reference's own rounding. */
double sum_error_bound(size_t k, double abs_sum);

/* A digest of output bits (FNV-1a), printed as "digest: WHAT HEX": tools/run-target-tests.sh
 * checks that every run of a program, in every configuration, prints the same digest lines. */
#define DIGEST_INIT 14695981039346656037ull
uint64_t digest_add(uint64_t h, const void *bytes, size_t count);
void digest_print(const char *what, uint64_t h);

/* Y over a weight object's copy in the caller's memory (`bytes` at mem, gemm_rvv_weight_create_in):
 * at its first byte, at its middle and, BF16, from its last two bytes on. call(ctx, y, bf16)
 * makes the call with that Y and returns its status. 0 when each returned `refused` and left
 * mem as it was, else 1 + the offset of Y in the copy of the first that did not. */
size_t y_over_copy_refused(int (*call)(void *ctx, void *y, int bf16), void *ctx,
                           unsigned char *mem, size_t bytes, int refused);

#endif
