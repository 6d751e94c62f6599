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

/* ---- The pure parts, for tests ---- */

/* The index of `value` in names[0 .. count), or -1. */
int gr_setting_choice(const char *value, const char *const *names, int count);

/* A whole number from 1 to most, decimal digits only; -1 for anything else. */
int gr_setting_count(const char *value, int most);

/* The report line for a refused value: "gemm_rvv: NAME="VALUE" ignored: expected EXPECTED;
 * USING\n", with VALUE cut to 40 characters ("..." after it then) and every byte that is not
 * printable ASCII shown as '?'. Returns the length, as snprintf does. */
int gr_setting_report(char *buf, size_t size, const char *name, const char *value,
                      const char *expected, const char *using);

#endif
