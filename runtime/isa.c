/* Finding Zvfbfwma and choosing the kernel variant, once per process. */
#define _DEFAULT_SOURCE /* syscall(2) */

#include "isa.h"

#include <ctype.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cpu.h"

/* From Linux's arch/riscv/include/uapi/asm/hwprobe.h and asm/unistd.h. Spelt out here because
 * a cross sysroot's <asm/...> headers may be missing or older than the key (and <sys/hwprobe.h>
 * then falls back to a stale copy without it). riscv_hwprobe itself came with Linux 6.4; the
 * Zvfbfwma bit of IMA_EXT_0 with Linux 6.15: older kernels leave it 0. Where the headers are
 * new enough, they must agree. */
#define GR_NR_RISCV_HWPROBE 258
#define GR_HWPROBE_KEY_IMA_EXT_0 4
#define GR_HWPROBE_EXT_ZVFBFWMA (1ull << 54)

#if defined(__riscv) && defined(__linux__) && defined(__has_include)
#if __has_include(<asm/hwprobe.h>)
#include <asm/hwprobe.h>
#endif
#endif
#ifdef RISCV_HWPROBE_EXT_ZVFBFWMA
_Static_assert(RISCV_HWPROBE_KEY_IMA_EXT_0 == GR_HWPROBE_KEY_IMA_EXT_0, "uapi hwprobe key");
_Static_assert(RISCV_HWPROBE_EXT_ZVFBFWMA == GR_HWPROBE_EXT_ZVFBFWMA, "uapi Zvfbfwma bit");
#endif

struct gr_hwprobe_pair {
    int64_t key;
    uint64_t value;
};

/* IMA_EXT_0 for all online CPUs (the bits every one of them has), or 0 when the kernel has no
 * riscv_hwprobe (ENOSYS: before 6.4, or QEMU before 8.1) or does not know the key. */
static int hwprobe_ima_ext0(uint64_t *value)
{
#if defined(__riscv) && defined(__linux__)
    struct gr_hwprobe_pair pair = {GR_HWPROBE_KEY_IMA_EXT_0, 0};
    if (syscall(GR_NR_RISCV_HWPROBE, &pair, (size_t)1, (size_t)0, (void *)NULL, 0u) != 0)
        return 0;
    if (pair.key != GR_HWPROBE_KEY_IMA_EXT_0)
        return 0;
    *value = pair.value;
    return 1;
#else
    (void)value;
    return 0;
#endif
}

/* An ISA string ("rv64imafdcv_zicbom_zvfbfwma") lists `ext` among its multi-letter names. */
static int isa_string_lists(const char *isa, size_t len, const char *ext)
{
    const size_t ext_len = strlen(ext);
    const char *end = isa + len;
    const char *name = memchr(isa, '_', len); /* the first part is "rv64" + single letters */
    while (name != NULL && name < end) {
        name++;
        const char *next = memchr(name, '_', (size_t)(end - name));
        const size_t name_len = (size_t)((next ? next : end) - name);
        if (name_len == ext_len && strncasecmp(name, ext, ext_len) == 0)
            return 1;
        name = next;
    }
    return 0;
}

int gr_cpuinfo_lists(FILE *cpuinfo, const char *ext)
{
    char line[4096];
    int isa_lines = 0, listing = 0;
    while (fgets(line, sizeof line, cpuinfo) != NULL) {
        /* "isa\t\t: rv64...": the key must be exactly "isa" ("hart isa" is per hart and
         * newer kernels print it next to "isa"; the "isa" lines suffice). */
        const char *colon = strchr(line, ':');
        if (colon == NULL)
            continue;
        size_t key_len = (size_t)(colon - line);
        while (key_len > 0 && isspace((unsigned char)line[key_len - 1]))
            key_len--;
        if (key_len != 3 || strncmp(line, "isa", 3) != 0)
            continue;
        const char *isa = colon + 1;
        while (*isa == ' ' || *isa == '\t')
            isa++;
        size_t len = 0;
        while (isa[len] != '\0' && !isspace((unsigned char)isa[len]))
            len++;
        isa_lines++;
        listing += isa_string_lists(isa, len, ext);
    }
    if (isa_lines == 0)
        return -1;
    return listing == isa_lines;
}

static int cpuinfo_lists(const char *ext)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL)
        return -1;
    const int lists = gr_cpuinfo_lists(f, ext);
    fclose(f);
    return lists;
}

/* The hwprobe bit is trusted when set. When it is clear the kernel may simply predate the bit
 * (before 6.15), while a vendor kernel may still list the extension in its ISA string: so the
 * ISA string has the last word then. */
static void probe(struct gr_isa_caps *caps)
{
    memset(caps, 0, sizeof *caps);
    caps->vector = gr_cpu_has_vector();
    if (!caps->vector)
        return;
    uint64_t ext0;
    if (hwprobe_ima_ext0(&ext0) && (ext0 & GR_HWPROBE_EXT_ZVFBFWMA)) {
        caps->zvfbfwma = 1;
        caps->zvfbfwma_source = GR_ISA_FROM_HWPROBE;
    } else if (cpuinfo_lists("zvfbfwma") == 1) {
        caps->zvfbfwma = 1;
        caps->zvfbfwma_source = GR_ISA_FROM_CPUINFO;
    }
}

gemm_rvv_status gr_isa_choose(const char *forced, const struct gr_isa_caps *caps,
                              enum gr_isa *out)
{
    const enum gr_isa best = caps->vector && caps->zvfbfwma ? GR_ISA_ZVFBFWMA : GR_ISA_BASE;
    if (forced == NULL || forced[0] == '\0' || strcmp(forced, "auto") == 0) {
        *out = best;
    } else if (strcmp(forced, "base") == 0) {
        *out = GR_ISA_BASE;
    } else if (strcmp(forced, "zvfbfwma") == 0 && best == GR_ISA_ZVFBFWMA) {
        *out = GR_ISA_ZVFBFWMA;
    } else {
        *out = GR_ISA_NONE;
        return GEMM_RVV_ERR_ISA;
    }
    return GEMM_RVV_OK;
}

const char *gr_isa_name(enum gr_isa isa)
{
    switch (isa) {
    case GR_ISA_BASE: return "base";
    case GR_ISA_ZVFBFWMA: return "zvfbfwma";
    case GR_ISA_NONE: return "none";
    }
    return "none";
}

static const char *source_name(enum gr_isa_source source)
{
    switch (source) {
    case GR_ISA_FROM_HWPROBE: return "riscv_hwprobe";
    case GR_ISA_FROM_CPUINFO: return "the isa line of /proc/cpuinfo";
    case GR_ISA_FROM_NOWHERE: break;
    }
    return "neither riscv_hwprobe nor /proc/cpuinfo";
}

static struct {
    struct gr_isa_caps caps;
    enum gr_isa isa;
    gemm_rvv_status status;
    char reason[256];
} chosen;
static pthread_once_t chosen_once = PTHREAD_ONCE_INIT;

/* What the core has in words: "riscv_hwprobe reports Zvfbfwma", "no V extension (AT_HWCAP)". */
static void describe_caps(const struct gr_isa_caps *caps, char *buf, size_t size)
{
    if (!caps->vector)
        snprintf(buf, size, "no V extension (AT_HWCAP)");
    else if (caps->zvfbfwma)
        snprintf(buf, size, "%s reports Zvfbfwma", source_name(caps->zvfbfwma_source));
    else
        snprintf(buf, size, "V, but %s reports Zvfbfwma", source_name(GR_ISA_FROM_NOWHERE));
}

static void choose_once(void)
{
    probe(&chosen.caps);
    const char *forced = getenv("GEMM_RVV_ISA");
    chosen.status = gr_isa_choose(forced, &chosen.caps, &chosen.isa);
    char caps[96];
    describe_caps(&chosen.caps, caps, sizeof caps);
    const char *name = gr_isa_name(chosen.isa);
    if (chosen.status != GEMM_RVV_OK)
        snprintf(chosen.reason, sizeof chosen.reason,
                 "none: GEMM_RVV_ISA=\"%.32s\" cannot be honoured (base, zvfbfwma or auto; "
                 "this core: %s)", forced, caps);
    else if (forced != NULL && forced[0] != '\0' && strcmp(forced, "auto") != 0)
        snprintf(chosen.reason, sizeof chosen.reason, "%s: forced by GEMM_RVV_ISA (%s)", name,
                 caps);
    else
        snprintf(chosen.reason, sizeof chosen.reason, "%s: %s", name, caps);
}

static void choose(void)
{
    pthread_once(&chosen_once, choose_once);
}

const struct gr_isa_caps *gr_isa_caps(void)
{
    choose();
    return &chosen.caps;
}

enum gr_isa gr_isa_selected(void)
{
    choose();
    return chosen.isa;
}

gemm_rvv_status gr_isa_status(void)
{
    choose();
    return chosen.status;
}

const char *gr_isa_reason(void)
{
    choose();
    return chosen.reason;
}

const struct gr_variant *gr_isa_variant(void)
{
    return gr_isa_selected() == GR_ISA_ZVFBFWMA ? &gr_variant_zvfbfwma : &gr_variant_base;
}

const char *gemm_rvv_isa(void)
{
    return gr_isa_name(gr_isa_selected());
}

gemm_rvv_status gemm_rvv_isa_status(void)
{
    return gr_isa_status();
}
