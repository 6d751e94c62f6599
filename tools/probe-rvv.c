/* Compiled (never run) before any kernel: does the target compiler take the RVV 1.0
 * intrinsics the generated kernels use? A compiler without them fails here, with the
 * build saying which compiler and what it lacks. */
#include <riscv_vector.h>
#include <stddef.h>
#include <stdint.h>

#if !defined(__riscv_v_intrinsic) || __riscv_v_intrinsic < 11000
#error "the RVV intrinsics with the __riscv_ prefix (v0.11 or later) are not available"
#endif

void probe(const uint32_t *w, const uint16_t *h, const float *x, uint16_t *out, size_t n);

void probe(const uint32_t *w, const uint16_t *h, const float *x, uint16_t *out, size_t n)
{
    size_t vl = __riscv_vsetvl_e32m2(n);
    vuint32m2_t pair = __riscv_vle32_v_u32m2(w, vl);
    vfloat32m2_t even = __riscv_vreinterpret_v_u32m2_f32m2(__riscv_vsll_vx_u32m2(pair, 16, vl));
    vfloat32m2_t acc = __riscv_vfmul_vf_f32m2(even, x[0], vl);
    vuint16m1_t col = __riscv_vlse16_v_u16m1(h, 2 * (ptrdiff_t)n, vl);
    vfloat32m2_t wide = __riscv_vreinterpret_v_u32m2_f32m2(__riscv_vzext_vf2_u32m2(col, vl));
    acc = __riscv_vfmacc_vf_f32m2(acc, x[1], wide, vl);
    vuint32m2_t bits = __riscv_vreinterpret_v_f32m2_u32m2(acc);
    bits = __riscv_vadd_vx_u32m2(bits, 0x7fff, vl);
    __riscv_vse16_v_u16m1(out, __riscv_vnsrl_wx_u16m1(bits, 16, vl), vl);
}
