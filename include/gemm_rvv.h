/* gemm_rvv: BF16 Linear layers (Y = X W^T + bias) for RISC-V Vector 1.0 cores, with kernels
 * generated ahead of time for a model's shapes and a scalar fallback for every other shape.
 *
 * This is the only header an inference engine includes. Link libgemm_rvv.a (pkg-config name
 * gemm_rvv). All sizes and strides count elements, not bytes. BF16 values are passed as their
 * raw 16-bit patterns (uint16_t): the top half of an IEEE binary32.
 *
 * Results: every output is the sum over k = 0 .. K-1, in that order, of X[m, k] * W[n, k],
 * accumulated in FP32 (each product is exact in FP32); the bias, if any, is added after the
 * sum. A generated kernel and the scalar fallback give the same bits.
 */
#ifndef GEMM_RVV_H
#define GEMM_RVV_H

#include <stdint.h>

#include "gemm_rvv_version.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gemm_rvv_status {
    GEMM_RVV_OK = 0,
    GEMM_RVV_ERR_NULL = 1,     /* a required pointer is NULL */
    GEMM_RVV_ERR_SIZE = 2,     /* M, N or K is zero or negative */
    GEMM_RVV_ERR_STRIDE = 3,   /* a row stride is smaller than its row */
    GEMM_RVV_ERR_OVERFLOW = 4, /* a size or stride product does not fit the address space */
    GEMM_RVV_ERR_TYPE = 5,     /* an output type other than GEMM_RVV_F32 or GEMM_RVV_BF16 */
    GEMM_RVV_ERR_NOMEM = 6     /* memory could not be allocated */
} gemm_rvv_status;

typedef enum gemm_rvv_type {
    GEMM_RVV_F32 = 0, /* float */
    GEMM_RVV_BF16 = 1 /* uint16_t, rounded to nearest even; NaN stays NaN */
} gemm_rvv_type;

/* The status in words ("M, N or K is zero or negative"); never NULL. */
const char *gemm_rvv_strerror(gemm_rvv_status status);

/* The library's version, GEMM_RVV_VERSION_STRING of the build that made it. */
const char *gemm_rvv_version(void);

/* ---- Weights ------------------------------------------------------------------------------
 * A weight object holds one Linear layer's [N, K] BF16 weight, packed into the kernels' layout
 * (which depends on the core's vector length: pack on the machine that runs it). It owns the
 * packed copy: the engine may free or reuse its own buffer after create or update. */
typedef struct gemm_rvv_weight gemm_rvv_weight;

/* Packs W (N rows of K, row stride ldw >= K) into a new object stored in *out. On error *out is
 * left untouched. */
gemm_rvv_status gemm_rvv_weight_create(const uint16_t *w, int64_t n, int64_t k, int64_t ldw,
                                       gemm_rvv_weight **out);

/* Re-packs new values of the same shape (after the engine reloaded its weights): calls that
 * start after this returns see only the new values. Do not call it while another thread runs
 * a Linear call on the same object. */
gemm_rvv_status gemm_rvv_weight_update(gemm_rvv_weight *weight, const uint16_t *w, int64_t ldw);

/* Frees the object and its packed copy. NULL is ignored. */
void gemm_rvv_weight_free(gemm_rvv_weight *weight);

/* ---- Linear --------------------------------------------------------------------------------
 * Y[M, N] = X[M, K] W[N, K]^T (+ bias[N]). X is BF16 with row stride ldx >= K; Y has row
 * stride ldy >= N and the element type y_type; bias is N floats or NULL. Any M >= 1 works:
 * M above the largest bucket of the build runs the scalar fallback. On any error nothing is
 * written to Y. Several threads may call at once, on the same weight object too. */
gemm_rvv_status gemm_rvv_linear(const uint16_t *x, int64_t m, int64_t ldx,
                                const gemm_rvv_weight *weight, const float *bias, void *y,
                                int64_t ldy, gemm_rvv_type y_type);

/* The same on weights the engine did not pack: W is PyTorch's [N, K] layout, row stride ldw. */
gemm_rvv_status gemm_rvv_linear_plain(const uint16_t *x, int64_t m, int64_t ldx,
                                      const uint16_t *w, int64_t n, int64_t k, int64_t ldw,
                                      const float *bias, void *y, int64_t ldy,
                                      gemm_rvv_type y_type);

#ifdef __cplusplus
}
#endif

#endif
