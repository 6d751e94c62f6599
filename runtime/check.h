/* A call's arguments checked before anything is touched: pointers, sizes, strides, sizes that
 * overflow, and outputs that overlap inputs. */
#ifndef GEMM_RVV_CHECK_H
#define GEMM_RVV_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "gemm_rvv.h"

/* A [rows, cols] matrix with row stride ld of elem-byte elements: GEMM_RVV_OK, or the status
 * for a size below 1, a stride below cols, or an extent that does not fit the address space. */
gemm_rvv_status gr_check_matrix(int64_t rows, int64_t cols, int64_t ld, size_t elem);

/* X [m, k] (ldx, elements of x_elem bytes: BF16 or FP32), Y [m, n] (ldy, y_type) and their
 * pointers, for a weight of [n, k]. */
gemm_rvv_status gr_check_call(const void *x, size_t x_elem, int64_t m, int64_t ldx, int64_t n,
                              int64_t k, const void *y, int64_t ldy, gemm_rvv_type y_type);

/* GEMM_RVV_ERR_ALIAS when Y's extent (first element to last) overlaps X's (x_elem bytes an
 * element), the bias's (N floats) or W's (plain weights; w NULL for a weight object, whose
 * copy gr_check_alias_bytes checks). Arguments already checked by gr_check_call (and
 * gr_check_matrix for W). */
gemm_rvv_status gr_check_alias(const void *x, size_t x_elem, size_t m, size_t ldx,
                               const uint16_t *w, size_t n, size_t k, size_t ldw,
                               const float *bias, const void *y, size_t ldy,
                               gemm_rvv_type y_type);

/* GEMM_RVV_ERR_ALIAS when Y's extent overlaps the `bytes` bytes at mem (a weight object's
 * copy, the caller's memory when made by gemm_rvv_weight_create_in). */
gemm_rvv_status gr_check_alias_bytes(const void *y, size_t m, size_t n, size_t ldy,
                                     gemm_rvv_type y_type, const void *mem, size_t bytes);

#endif
