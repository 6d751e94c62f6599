/* What the running core offers, read once. Built for the base ISA: nothing here executes a
 * vector instruction, so it is safe on a core without V. */
#ifndef GEMM_RVV_CPU_H
#define GEMM_RVV_CPU_H

#include <stddef.h>

/* Nonzero when the core runs RVV 1.0 code (HWCAP bit 'V' on riscv64 Linux; 0 elsewhere), or
 * the build's variants are the host's plain C ones (GR_HOST_TILES). */
int gr_cpu_has_vector(void);

/* Columns per panel of packed weights: VLMAX at e32, LMUL 8 (2 * vlenb), the widest strip a
 * tile uses; every narrower strip divides it. Only called where gr_cpu_has_vector(). */
size_t gr_panel_width(void);

#endif
