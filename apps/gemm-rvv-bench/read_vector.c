#include "read_vector.h"

#include <riscv_vector.h>

uint64_t read_vector(const uint64_t *p, size_t n)
{
    size_t vlmax = __riscv_vsetvlmax_e64m8();
    vuint64m8_t acc = __riscv_vmv_v_x_u64m8(0, vlmax);
    for (size_t i = 0; i < n;) {
        size_t vl = __riscv_vsetvl_e64m8(n - i);
        acc = __riscv_vadd_vv_u64m8_tu(acc, acc, __riscv_vle64_v_u64m8(p + i, vl), vl);
        i += vl;
    }
    vuint64m1_t zero = __riscv_vmv_v_x_u64m1(0, 1);
    return __riscv_vmv_x_s_u64m1_u64(__riscv_vredsum_vs_u64m8_u64m1(acc, zero, vlmax));
}
