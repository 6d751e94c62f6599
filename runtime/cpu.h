/* What the running core offers, read once. */
#ifndef GEMM_RVV_CPU_H
#define GEMM_RVV_CPU_H

#include <stddef.h>

/* Nonzero when the core runs RVV 1.0 code (HWCAP bit 'V'). */
int gr_cpu_has_vector(void);

/* Columns per panel of packed weights: VLMAX at e32, LMUL 8 (2 * vlenb), the widest strip a
 * kernel uses; every narrower strip divides it. 64 on a core without V (only the fallback
 * reads the packed form there). */
size_t gr_panel_width(void);

#endif
