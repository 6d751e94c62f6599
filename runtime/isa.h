/* Which kernel variant serves calls: the base RVV 1.0 kernels or the Zvfbfwma ones. What the
 * core offers is found once (V from AT_HWCAP; Zvfbfwma from riscv_hwprobe, else the ISA string
 * of /proc/cpuinfo) and the variant is chosen once from it and GEMM_RVV_ISA (see gemm_rvv.h).
 * Built for the base ISA: nothing here may need V. */
#ifndef GEMM_RVV_ISA_H
#define GEMM_RVV_ISA_H

#include <stdio.h>

#include "gemm_rvv.h"
#include "gr_contract.h"

enum gr_isa {
    GR_ISA_BASE = 0,     /* RVV 1.0: BF16 widened with integer ops, multiplied in FP32 */
    GR_ISA_ZVFBFWMA = 1, /* BF16 multiplied by vfwmaccbf16 */
    GR_ISA_NONE = 2      /* GEMM_RVV_ISA asked for what this core lacks: every call fails */
};

/* Where the answer about Zvfbfwma came from. */
enum gr_isa_source {
    GR_ISA_FROM_NOWHERE = 0, /* not asked (no V), or neither source lists it: taken as absent */
    GR_ISA_FROM_HWPROBE = 1,
    GR_ISA_FROM_CPUINFO = 2
};

struct gr_isa_caps {
    int vector;   /* V (RVV 1.0) */
    int zvfbfwma; /* Zvfbfwma, with V; by the ISA manual it brings Zvfbfmin and Zfbfmin along */
    enum gr_isa_source zvfbfwma_source;
};

/* The core's features, probed on the first call from any thread; the same ever after. */
const struct gr_isa_caps *gr_isa_caps(void);

/* The variant chosen for this process (GR_ISA_NONE when GEMM_RVV_ISA cannot be honoured),
 * and GEMM_RVV_OK or GEMM_RVV_ERR_ISA to go with it. */
enum gr_isa gr_isa_selected(void);
gemm_rvv_status gr_isa_status(void);

/* The micro-kernels of the selected variant: the Zvfbfwma ones when it is GR_ISA_ZVFBFWMA,
 * else the base ones (which only run where the core has V). Weights are packed in its layout. */
const struct gr_variant *gr_isa_variant(void);

/* One line in words for logs: the variant, and why ("zvfbfwma: riscv_hwprobe reports
 * Zvfbfwma", "none: GEMM_RVV_ISA=zvfbfwma, but this core lacks Zvfbfwma (...)"). */
const char *gr_isa_reason(void);

/* "base", "zvfbfwma", "none". */
const char *gr_isa_name(enum gr_isa isa);

/* ---- The pure parts, for tests ---- */

/* The variant for `forced` (GEMM_RVV_ISA's value; NULL when unset) on a core with `caps`:
 * GEMM_RVV_OK and the variant, or GEMM_RVV_ERR_ISA and GR_ISA_NONE. */
gemm_rvv_status gr_isa_choose(const char *forced, const struct gr_isa_caps *caps,
                              enum gr_isa *out);

/* Whether every "isa" line of a /proc/cpuinfo text lists the multi-letter extension `ext`
 * ("zvfbfwma") as one of its '_'-separated names: 1 yes, 0 some line does not, -1 the text has
 * no "isa" line (not a RISC-V kernel's cpuinfo, or an emulator's host one). */
int gr_cpuinfo_lists(FILE *cpuinfo, const char *ext);

#endif
