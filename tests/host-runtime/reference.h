/* The result the header promises, computed the simplest way: for the host runtime tests, which
 * compare the library's outputs with it bit for bit. */
#ifndef HOST_RUNTIME_REFERENCE_H
#define HOST_RUNTIME_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

/* Y[m, n] = sum over k = 0 .. K-1, in that order, of X[m, k] * W[n, k] in FP32, one fused
 * multiply-add at a time (each BF16 product is exact in FP32), then + bias[n] when bias is not
 * NULL. X has row stride ldx, W (PyTorch's [N, K]) ldw, Y ldy. */
void ref_linear_f32(const uint16_t *x, size_t m, size_t ldx, const uint16_t *w, size_t n,
                    size_t k, size_t ldw, const float *bias, float *y, size_t ldy);

/* FP32 to BF16, rounded to nearest even; a NaN stays a NaN. */
uint16_t ref_bf16_from_f32(float f);

#endif
