/* A QEMU TCG plugin (API version 1, QEMU 7.2) that counts, inside chosen functions only:
 *   insns   every executed instruction,
 *   scalar  those that are not RISC-V vector instructions,
 *   vwork   for every executed vector instruction other than vsetvl/vsetvli/vsetivli, the LMUL
 *           in effect (set by the last vsetvli/vsetivli executed anywhere), doubled for widening
 *           instructions, and for a whole-register load or store (vl<n>r, vs<n>r) its n
 *           registers; kept in eighths so that fractional LMUL stays exact.
 * Arguments: sym=PREFIX (repeatable; a function counts when its symbol starts with one),
 *            all=on (every instruction counts, with a symbol or not),
 *            range=FILE:LO-HI (repeatable; hexadecimal offsets into a mapped file whose path
 *              ends with FILE: its instructions there are counted a second time, apart, as
 *              range_insns, range_scalar, range_vwork_eighths),
 *            bins=FILE (FILE's lines "MAPPED_FILE LO HI NAME", hexadecimal offsets as for
 *              range=: each instruction in [LO, HI) of a file whose path ends with MAPPED_FILE
 *              counts in NAME's bin; a file's lines come together, its functions first (no
 *              two overlapping), then optionally one line 0 ffffffffff for the rest of the
 *              file; written at exit as lines
 *              "bin NAME COUNT", for a breakdown by function),
 *            out=FILE (where the counts go at exit; default stderr).
 *   qemu-riscv64 -plugin build/measure/libinsn_count.so,sym=gr_bf16_,sym=packed_,out=c.txt prog
 * QEMU names only the symbols of the program and its interpreter, not those of the shared
 * libraries the program loads: code in those is found by range, through the host's mappings
 * (/proc/self/maps of QEMU, where each guest file mapping appears with its path and offset). */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MAX_PREFIXES 32
#define MAX_RANGES 64
#define MAX_MAPPINGS 8192

static const char *prefixes[MAX_PREFIXES];
static size_t prefix_count;
static int measure_all;
static const char *out_path;
static uint64_t insns, scalar, vwork_eighths, unknown_vsetvl;

struct range {
    char *file;
    uint64_t lo, hi;
};
static struct range ranges[MAX_RANGES];
static size_t range_count;
static uint64_t range_insns, range_scalar, range_vwork_eighths;

/* bins=: one counter a line of the file, names shared by lines with the same name. */
struct bin {
    char *file, *name;
    uint64_t lo, hi;
    uint64_t *count;
};
static struct bin *bins;
static size_t bin_count;
#define MAX_BIN_NAMES 16384
static char *bin_names[MAX_BIN_NAMES];
static uint64_t bin_counts[MAX_BIN_NAMES];
static size_t bin_name_count;

static int load_bins(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "insn_count: cannot read bins file %s\n", path);
        return -1;
    }
    static char line[16384], file[256], name[16384];
    unsigned long long lo, hi;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%255s %llx %llx %16383s", file, &lo, &hi, name) != 4) {
            fprintf(stderr, "insn_count: %s: not \"FILE LO HI NAME\": %s", path, line);
            fclose(f);
            return -1;
        }
        size_t n = 0;
        while (n < bin_name_count && strcmp(bin_names[n], name) != 0)
            n++;
        if (n == bin_name_count) {
            if (n == MAX_BIN_NAMES) {
                fprintf(stderr, "insn_count: more than %d bin names\n", MAX_BIN_NAMES);
                fclose(f);
                return -1;
            }
            bin_names[bin_name_count++] = strdup(name);
        }
        struct bin *grown = realloc(bins, (bin_count + 1) * sizeof *bins);
        if (!grown) {
            fclose(f);
            return -1;
        }
        bins = grown;
        bins[bin_count++] = (struct bin){strdup(file), bin_names[n], lo, hi, &bin_counts[n]};
    }
    fclose(f);
    return 0;
}

/* The host's mappings as last read: a file mapping's path and offset. */
struct mapping {
    uintptr_t start, end;
    uint64_t offset;
    char path[256];
};
static struct mapping mappings[MAX_MAPPINGS];
static size_t mapping_count;
static uint64_t lmul_eighths = 8; /* LMUL 1 until a vsetvli says otherwise */

enum { OP_V = 0x57, LOAD_FP = 0x07, STORE_FP = 0x27, OPCFG = 7 };

static uint32_t bits(uint32_t w, int hi, int lo) { return (w >> lo) & ((1u << (hi - lo + 1)) - 1); }

/* LMUL in eighths from a vtype's vlmul field; 0 for the reserved encoding. */
static uint64_t vlmul_eighths(uint32_t vlmul)
{
    static const uint64_t table[8] = {8, 16, 32, 64, 0, 1, 2, 4};
    return table[vlmul & 7];
}

static int is_vset(uint32_t w) { return bits(w, 6, 0) == OP_V && bits(w, 14, 12) == OPCFG; }

/* Vector loads and stores share LOAD-FP/STORE-FP with flw/fld, told apart by the width field. */
static int is_vector(uint32_t w)
{
    uint32_t op = bits(w, 6, 0), width = bits(w, 14, 12);
    if (op == OP_V)
        return 1;
    return (op == LOAD_FP || op == STORE_FP) && (width == 0 || width >= 5);
}

/* vw*, vfw* (funct6 0x30..0x3f of OPMVV/OPMVX/OPFVV/OPFVF) and vfwcvt (VFUNARY0, vs1 8..15). */
static int is_widening(uint32_t w)
{
    if (bits(w, 6, 0) != OP_V)
        return 0;
    uint32_t f3 = bits(w, 14, 12), f6 = bits(w, 31, 26);
    int mv_or_fv = f3 == 1 || f3 == 2 || f3 == 5 || f3 == 6;
    if (mv_or_fv && f6 >= 0x30)
        return 1;
    return f3 == 1 && f6 == 0x12 && bits(w, 19, 15) >= 8 && bits(w, 19, 15) <= 15;
}

/* Registers moved by a whole-register load or store (vl<n>r, vs<n>r: unit-stride, lumop or
 * sumop 01000, nf + 1 registers), which ignores vtype; 0 for any other instruction. */
static uint64_t whole_registers(uint32_t w)
{
    uint32_t op = bits(w, 6, 0);
    if ((op != LOAD_FP && op != STORE_FP) || !is_vector(w) || bits(w, 27, 26) != 0 ||
        bits(w, 24, 20) != 8)
        return 0;
    return bits(w, 31, 29) + 1;
}

static void on_vset(unsigned int vcpu, void *lmul)
{
    (void)vcpu;
    lmul_eighths = (uint64_t)(uintptr_t)lmul;
}

static void on_vsetvl(unsigned int vcpu, void *unused)
{
    (void)vcpu;
    (void)unused;
    unknown_vsetvl++; /* vsetvl takes vtype from a register, which API 1 cannot read */
}

static void on_vector(unsigned int vcpu, void *factor)
{
    (void)vcpu;
    vwork_eighths += lmul_eighths * (uint64_t)(uintptr_t)factor;
}

static void on_vector_range(unsigned int vcpu, void *factor)
{
    (void)vcpu;
    range_vwork_eighths += lmul_eighths * (uint64_t)(uintptr_t)factor;
}

static void read_mappings(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    mapping_count = 0;
    if (!f)
        return;
    char line[512];
    while (mapping_count < MAX_MAPPINGS && fgets(line, sizeof line, f)) {
        struct mapping *m = &mappings[mapping_count];
        unsigned long long start, end, offset;
        int path_at = 0;
        if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &start, &end, &offset, &path_at) < 3)
            continue;
        m->start = (uintptr_t)start;
        m->end = (uintptr_t)end;
        m->offset = offset;
        snprintf(m->path, sizeof m->path, "%s", path_at ? line + path_at : "");
        m->path[strcspn(m->path, "\n")] = '\0';
        mapping_count++;
    }
    fclose(f);
}

static const struct mapping *mapping_of(uintptr_t haddr)
{
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < mapping_count; i++)
            if (haddr >= mappings[i].start && haddr < mappings[i].end) {
                if (mappings[i].path[0] || pass == 1)
                    return &mappings[i];
                break; /* anonymous when last read: a file may be mapped over it since */
            }
        read_mappings(); /* a library mapped since the last look */
    }
    return NULL;
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && strcmp(s + n - t, tail) == 0;
}

/* Whether the instruction at host address haddr lies in one of the ranges. */
static int in_range(const void *haddr)
{
    if (range_count == 0 || !haddr)
        return 0;
    const struct mapping *m = mapping_of((uintptr_t)haddr);
    if (!m || !m->path[0])
        return 0;
    uint64_t offset = (uintptr_t)haddr - m->start + m->offset;
    for (size_t i = 0; i < range_count; i++)
        if (offset >= ranges[i].lo && offset < ranges[i].hi && ends_with(m->path, ranges[i].file))
            return 1;
    return 0;
}

/* The bins of one file in the order of their lines: those before the first catch-all (a bin
 * whose range holds every other), sorted by LO for a binary search, then the catch-all. */
static int bin_lo_order(const void *a, const void *b)
{
    const struct bin *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int catch_all(const struct bin *b) { return b->lo == 0 && b->hi >= 0xffffffffffull; }

/* A file's group of bins: [from, end) its functions sorted, [end, to) its catch-all. */
#define MAX_GROUPS 64
static struct { size_t from, end, to; } groups[MAX_GROUPS];
static size_t group_count;
static int bins_sorted;

static void sort_bins(void)
{
    for (size_t from = 0; from < bin_count && group_count < MAX_GROUPS;) {
        size_t to = from;
        while (to < bin_count && strcmp(bins[to].file, bins[from].file) == 0 && !catch_all(&bins[to]))
            to++;
        qsort(bins + from, to - from, sizeof *bins, bin_lo_order);
        groups[group_count].from = from;
        groups[group_count].end = to;
        while (to < bin_count && strcmp(bins[to].file, bins[from].file) == 0)
            to++; /* the catch-all(s) */
        groups[group_count++].to = to;
        from = to;
    }
    bins_sorted = 1;
}

/* The counter of the bin that holds the instruction at host address haddr, or NULL. Bins are
 * given file by file (one group a file), each file's functions then its catch-all. */
static uint64_t *bin_of(const void *haddr)
{
    if (bin_count == 0 || !haddr)
        return NULL;
    if (!bins_sorted)
        sort_bins();
    const struct mapping *m = mapping_of((uintptr_t)haddr);
    if (!m || !m->path[0])
        return NULL;
    uint64_t offset = (uintptr_t)haddr - m->start + m->offset;
    for (size_t g = 0; g < group_count; g++) {
        size_t from = groups[g].from, end = groups[g].end, to = groups[g].to;
        if (ends_with(m->path, bins[from].file)) {
            size_t lo = from, hi = end; /* the first bin with lo > offset */
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (bins[mid].lo <= offset)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            for (size_t i = lo; i > from && i + 8 > lo; i--) /* a few overlapping ones */
                if (offset >= bins[i - 1].lo && offset < bins[i - 1].hi)
                    return bins[i - 1].count;
            return end < to ? bins[end].count : NULL;
        }
    }
    return NULL;
}

static int measured(const char *sym)
{
    if (measure_all)
        return 1;
    if (!sym)
        return 0;
    for (size_t i = 0; i < prefix_count; i++)
        if (strncmp(sym, prefixes[i], strlen(prefixes[i])) == 0)
            return 1;
    return 0;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    size_t n = qemu_plugin_tb_n_insns(tb);
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        size_t size = qemu_plugin_insn_size(insn);
        uint32_t w = 0;
        memcpy(&w, qemu_plugin_insn_data(insn), size < 4 ? size : 4);
        int vector = size == 4 && is_vector(w), vset = size == 4 && is_vset(w);
        if (vset) {
            if (bits(w, 31, 31) == 0) /* vsetvli: vtype in bits 30:20 */
                qemu_plugin_register_vcpu_insn_exec_cb(
                    insn, on_vset, QEMU_PLUGIN_CB_NO_REGS,
                    (void *)(uintptr_t)vlmul_eighths(bits(w, 22, 20)));
            else if (bits(w, 30, 30) == 1) /* vsetivli: vtype in bits 29:20 */
                qemu_plugin_register_vcpu_insn_exec_cb(
                    insn, on_vset, QEMU_PLUGIN_CB_NO_REGS,
                    (void *)(uintptr_t)vlmul_eighths(bits(w, 22, 20)));
            else
                qemu_plugin_register_vcpu_insn_exec_cb(insn, on_vsetvl, QEMU_PLUGIN_CB_NO_REGS,
                                                       NULL);
        }
        if (in_range(qemu_plugin_insn_haddr(insn))) {
            qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64,
                                                       &range_insns, 1);
            if (!vector)
                qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64,
                                                           &range_scalar, 1);
            else if (whole_registers(w))
                qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64,
                                                           &range_vwork_eighths,
                                                           8 * whole_registers(w));
            else if (!vset)
                qemu_plugin_register_vcpu_insn_exec_cb(
                    insn, on_vector_range, QEMU_PLUGIN_CB_NO_REGS,
                    (void *)(uintptr_t)(is_widening(w) ? 2 : 1));
        }
        uint64_t *bin = bin_of(qemu_plugin_insn_haddr(insn));
        if (bin)
            qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, bin, 1);
        if (!measured(qemu_plugin_insn_symbol(insn)))
            continue;
        qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &insns, 1);
        if (!vector)
            qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &scalar,
                                                       1);
        else if (whole_registers(w)) /* its registers, whatever vtype says */
            qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64,
                                                       &vwork_eighths, 8 * whole_registers(w));
        else if (!vset)
            qemu_plugin_register_vcpu_insn_exec_cb(insn, on_vector, QEMU_PLUGIN_CB_NO_REGS,
                                                   (void *)(uintptr_t)(is_widening(w) ? 2 : 1));
    }
}

static void at_exit(qemu_plugin_id_t id, void *unused)
{
    (void)id;
    (void)unused;
    FILE *f = out_path ? fopen(out_path, "w") : stderr;
    if (!f)
        f = stderr;
    fprintf(f, "insns=%" PRIu64 " scalar=%" PRIu64 " vwork_eighths=%" PRIu64
               " unknown_vsetvl=%" PRIu64 "\n",
            insns, scalar, vwork_eighths, unknown_vsetvl);
    if (range_count)
        fprintf(f, "range_insns=%" PRIu64 " range_scalar=%" PRIu64
                   " range_vwork_eighths=%" PRIu64 "\n",
                range_insns, range_scalar, range_vwork_eighths);
    for (size_t i = 0; i < bin_name_count; i++)
        if (bin_counts[i])
            fprintf(f, "bin %s %" PRIu64 "\n", bin_names[i], bin_counts[i]);
    if (f != stderr)
        fclose(f);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                           int argc, char **argv)
{
    (void)info;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "arg=", 4) == 0) /* the older "-plugin FILE,arg=..." spelling */
            a += 4;
        if (strncmp(a, "sym=", 4) == 0) {
            if (prefix_count == MAX_PREFIXES) {
                fprintf(stderr, "insn_count: more than %d sym= prefixes\n", MAX_PREFIXES);
                return -1;
            }
            prefixes[prefix_count++] = strdup(a + 4);
        }
        else if (strcmp(a, "all=on") == 0)
            measure_all = 1;
        else if (strncmp(a, "range=", 6) == 0 && range_count < MAX_RANGES) {
            const char *colon = strrchr(a + 6, ':');
            unsigned long long lo, hi;
            if (!colon || colon == a + 6 || sscanf(colon + 1, "%llx-%llx", &lo, &hi) != 2 ||
                lo >= hi) {
                fprintf(stderr, "insn_count: \"%s\": expected range=FILE:LO-HI (hexadecimal)\n", a);
                return -1;
            }
            ranges[range_count].file = strndup(a + 6, (size_t)(colon - (a + 6)));
            ranges[range_count].lo = lo;
            ranges[range_count].hi = hi;
            range_count++;
        } else if (strncmp(a, "bins=", 5) == 0) {
            if (load_bins(a + 5) != 0)
                return -1;
        } else if (strncmp(a, "out=", 4) == 0)
            out_path = strdup(a + 4);
        else {
            fprintf(stderr, "insn_count: unknown argument \"%s\" (sym=PREFIX, all=on, "
                            "range=FILE:LO-HI, bins=FILE, out=FILE)\n", a);
            return -1;
        }
    }
    if (prefix_count == 0 && !measure_all) {
        fprintf(stderr, "insn_count: name the measured functions with sym=PREFIX, or all=on\n");
        return -1;
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
