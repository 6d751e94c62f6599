/* The profitability gate and the M buckets: pure functions of one (M, N, K). */
#ifndef GEN_GATE_H
#define GEN_GATE_H

#include <stddef.h>
#include <stdint.h>

/* A layer gets a generated kernel only when all four hold; otherwise the scalar fallback. */
struct gate {
    uint64_t min_n;   /* N >= min_n */
    uint64_t min_k;   /* K >= min_k */
    uint64_t max_m;   /* M <= max_m */
    uint64_t min_mnk; /* M*N*K >= min_mnk */
};

#define GATE_DEFAULT_MIN_N 1024u
#define GATE_DEFAULT_MIN_K 1024u
#define GATE_DEFAULT_MAX_M 128u
#define GATE_DEFAULT_MIN_MNK 1000000u

/* The M buckets of the M>=2 GEMM kernels, strictly increasing, each >= 2. M=1 is always the
 * GEMV kernel and is not listed here. */
#define BUCKETS_MAX 16
struct buckets {
    uint32_t m[BUCKETS_MAX];
    size_t count;
};

/* Largest accepted M, N or K: every index and byte count then fits a 64-bit size. */
#define SHAPE_DIM_MAX 2147483647u

struct gate gate_default(void);
struct buckets buckets_default(void);

/* The bucket that serves M: 1 for M=1, else the smallest bucket >= M, else 0 (none holds it). */
uint32_t bucket_for(const struct buckets *b, uint64_t m);

enum verdict { VERDICT_KERNEL, VERDICT_FALLBACK };

struct decision {
    enum verdict verdict;
    uint32_t bucket;     /* the M bucket of the kernel; 0 for the fallback */
    uint32_t row_blocks; /* blocks of `bucket` rows a call runs as: 1 unless M > bucket */
    char reason[160];    /* why the fallback, in words ("N=896 < 1024"); for a kernel in row
                          * blocks, why ("M=512 > 128: 4 row blocks of M <= 128") */
};

/* Decides one (M, N, K). M*N*K must not overflow 64 bits (the shape reader checks it).
 * M above max_m or above every bucket, where N, K and M*N*K pass, is a kernel run in row
 * blocks of the largest bucket within max_m: that is what the runtime does with such M. */
struct decision gate_decide(const struct gate *g, const struct buckets *b,
                            uint64_t m, uint64_t n, uint64_t k);

#endif
