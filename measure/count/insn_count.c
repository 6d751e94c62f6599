/* A QEMU TCG plugin (API version 1, QEMU 7.2) that counts, inside chosen functions only:
 *   insns   every executed instruction,
 *   scalar  those that are not RISC-V vector instructions,
 *   vwork   for every executed vector instruction other than vsetvl/vsetvli/vsetivli, the LMUL
 *           in effect (set by the last vsetvli/vsetivli executed anywhere), doubled for widening
 *           instructions; kept in eighths so that fractional LMUL stays exact.
 * Arguments: sym=PREFIX (repeatable; a function counts when its symbol starts with one),
 *            out=FILE (where the counts go at exit; default stderr).
 *   qemu-riscv64 -plugin build/measure/libinsn_count.so,sym=gr_bf16_,sym=packed_,out=c.txt prog */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MAX_PREFIXES 16

static const char *prefixes[MAX_PREFIXES];
static size_t prefix_count;
static const char *out_path;
static uint64_t insns, scalar, vwork_eighths, unknown_vsetvl;
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

static int measured(const char *sym)
{
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
        if (!measured(qemu_plugin_insn_symbol(insn)))
            continue;
        qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &insns, 1);
        if (!vector)
            qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &scalar,
                                                       1);
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
        if (strncmp(a, "sym=", 4) == 0 && prefix_count < MAX_PREFIXES)
            prefixes[prefix_count++] = strdup(a + 4);
        else if (strncmp(a, "out=", 4) == 0)
            out_path = strdup(a + 4);
        else {
            fprintf(stderr, "insn_count: unknown argument \"%s\" (sym=PREFIX, out=FILE)\n", a);
            return -1;
        }
    }
    if (prefix_count == 0) {
        fprintf(stderr, "insn_count: name the measured functions with sym=PREFIX\n");
        return -1;
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
