#include "cpu.h"

#include "gr_contract.h"

#if defined(__riscv) && defined(__linux__)
#include <sys/auxv.h>
#define HWCAP_ISA_V (1ul << ('V' - 'A'))
#endif

int gr_cpu_has_vector(void)
{
#if GR_HOST_TILES /* the host test build's variants are plain C: they run wherever it runs */
    return 1;
#elif defined(__riscv) && defined(__linux__)
    return (getauxval(AT_HWCAP) & HWCAP_ISA_V) != 0;
#else
    return 0;
#endif
}

size_t gr_panel_width(void)
{
    /* vlenb lives in a generated (vector) object: the runtime itself has no V code. */
    return 2 * gr_variant_base.vlenb();
}
