/* When a call reads X's K blocks from a copy in scratch: the one rule, on plain integers, that
 * the generator's traffic model (gen/blocking.c: blocking_x_copy fills a blocking's x_copy_*
 * fields, x_copy_applies counts the copy) and the driver (runtime/driver.c, on the plan's
 * fields) both evaluate, so that what the model counts is what the driver does. */
#ifndef GEMM_RVV_X_COPY_H
#define GEMM_RVV_X_COPY_H

#include <stdint.h>

/* A row block of `rows` rows over a piece of `cols` columns (the call's columns for a shared
 * copy), X's rows ldx_bytes apart, reads X from a copy when the blocking copies at all
 * (min_rows > 0), rows >= min_rows, cols >= min_cols and ldx_bytes is a multiple of stride. */
static inline int gr_x_copy_applies(uint64_t min_rows, uint64_t min_cols, uint64_t stride,
                                    uint64_t rows, uint64_t cols, uint64_t ldx_bytes)
{
    return min_rows && rows >= min_rows && cols >= min_cols && stride &&
           ldx_bytes % stride == 0;
}

#endif
