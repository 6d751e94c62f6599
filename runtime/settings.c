#include "settings.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_rvv.h"
#include "gr_contract.h"
#include "threads.h"

/* Characters of a refused value a report shows. */
#define SHOWN_CHARS 40
#define STRING_OF(x) #x
#define DIGITS_OF(x) STRING_OF(x)

static struct gr_settings settings = {0, GR_AFFINITY_NONE, 0, -1};
static pthread_once_t settings_once = PTHREAD_ONCE_INIT;

/* The index of `value` in names[0 .. count), or -1. */
static int choice(const char *value, const char *const *names, int count)
{
    for (int i = 0; i < count; i++)
        if (strcmp(value, names[i]) == 0)
            return i;
    return -1;
}

/* A whole number from 1 to most, decimal digits only; -1 for anything else. */
static int count_of(const char *value, int most)
{
    long n = 0;
    if (!*value)
        return -1;
    for (const char *c = value; *c; c++) {
        if (*c < '0' || *c > '9')
            return -1;
        n = n * 10 + (*c - '0');
        if (n > most)
            return -1;
    }
    return n >= 1 ? (int)n : -1;
}

/* One line on stderr: NAME="VALUE" ignored: expected EXPECTED; USING. VALUE is cut to
 * SHOWN_CHARS characters ("..." after it then), and every byte that is not printable ASCII is
 * shown as '?', so that no value can flood or forge a log. */
static void report(const char *name, const char *value, const char *expected, const char *using)
{
    char shown[SHOWN_CHARS + 4];
    size_t i = 0;
    for (; value[i] && i < SHOWN_CHARS; i++)
        shown[i] = value[i] >= 0x20 && value[i] < 0x7f ? value[i] : '?';
    shown[i] = '\0';
    if (value[i])
        strcat(shown, "...");
    fprintf(stderr, "gemm_rvv: %s=\"%s\" ignored: expected %s; %s\n", name, shown, expected,
            using);
}

/* The value of an environment variable, or NULL when it is unset or empty (the default). */
static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static void read_settings(void)
{
    static const char *const affinities[] = {"none", "compact", "spread"};
    static const char *const switches[] = {"0", "1"};
    static const char *const shares[] = {"alone", "shared"};
    const char *v;
    if ((v = env("GEMM_RVV_THREADS")) &&
        (settings.threads = count_of(v, GEMM_RVV_MAX_THREADS)) < 0) {
        settings.threads = 0;
        report("GEMM_RVV_THREADS", v, "a whole number from 1 to " DIGITS_OF(GEMM_RVV_MAX_THREADS),
               "using the number of online CPUs");
    }
    if ((v = env("GEMM_RVV_AFFINITY")) &&
        (settings.affinity = choice(v, affinities, 3)) < 0) {
        settings.affinity = GR_AFFINITY_NONE;
        report("GEMM_RVV_AFFINITY", v, "compact, spread or none", "using none");
    }
    if ((v = env("GEMM_RVV_DISABLE")) && (settings.fallback = choice(v, switches, 2)) < 0) {
        settings.fallback = 0;
        report("GEMM_RVV_DISABLE", v, "1 or 0", "kernels stay enabled");
    }
    int share;
    if ((v = env("GEMM_RVV_BLOCKING")) && (share = choice(v, shares, 2)) >= 0)
        settings.share = share == 0 ? GR_L2_ALONE : GR_L2_SHARED;
    else if (v)
        report("GEMM_RVV_BLOCKING", v, "alone or shared", "chosen by the thread count");
}

const struct gr_settings *gr_settings(void)
{
    pthread_once(&settings_once, read_settings);
    return &settings;
}
