#include "cpu.h"

#include <riscv_vector.h>
#include <sys/auxv.h>

#define HWCAP_ISA_V (1ul << ('V' - 'A'))

int gr_cpu_has_vector(void)
{
    return (getauxval(AT_HWCAP) & HWCAP_ISA_V) != 0;
}

size_t gr_panel_width(void)
{
    return gr_cpu_has_vector() ? __riscv_vsetvlmax_e32m8() : 64;
}
