/* The environment variables the library reads (gemm_rvv.h lists their values): each read once,
 * at the first call that needs one; a value outside its documented set is reported once on
 * stderr and leaves that setting at its default. */
#ifndef GEMM_RVV_SETTINGS_H
#define GEMM_RVV_SETTINGS_H

#include <stddef.h>

struct gr_settings {
    int threads;   /* GEMM_RVV_THREADS, or 0 when unset or refused: the online CPUs */
    int affinity;  /* GEMM_RVV_AFFINITY as a gr_affinity (threads.h); none by default */
    int fallback;  /* GEMM_RVV_DISABLE=1 */
    int share;     /* GEMM_RVV_BLOCKING as GR_L2_ALONE or GR_L2_SHARED, or -1: by thread count */
};

const struct gr_settings *gr_settings(void);

#endif
