/* The machine a plan is made for: vector length, datapath, caches, cores, DRAM. The K1
 * (Banana Pi BPI-F3) by default; a shapes file's `target:` or --target changes any field. */
#ifndef GEN_TARGET_H
#define GEN_TARGET_H

#include <stdint.h>

struct target {
    uint64_t vlen;        /* bits of a vector register */
    uint64_t dlen;        /* bits the vector datapath handles per cycle */
    uint64_t l1d_kib;     /* per core */
    uint64_t l1d_ways;
    uint64_t l2_kib;      /* per cluster */
    uint64_t l2_ways;
    uint64_t l2_cores;    /* cores sharing one L2 */
    uint64_t cores;
    uint64_t line;        /* bytes of a cache line */
    uint64_t mhz;         /* core clock */
    uint64_t dram_mb_s;   /* DRAM bandwidth reached in practice, MB/s (10^6 bytes) */
};

/* The fields, once, in struct order: the YAML keys, the --target names and the manifest's keys
 * come from this list (X(NAME) for each), and gen/target.c checks that it covers the struct. */
#define TARGET_FIELD_LIST(X)                                                              \
    X(vlen) X(dlen) X(l1d_kib) X(l1d_ways) X(l2_kib) X(l2_ways) X(l2_cores) X(cores) X(line) \
    X(mhz) X(dram_mb_s)
#define TARGET_FIELD_ONE_(name) +1
enum { TARGET_FIELDS = 0 TARGET_FIELD_LIST(TARGET_FIELD_ONE_) };
#undef TARGET_FIELD_ONE_
extern const char *const target_field_names[TARGET_FIELDS + 1]; /* NULL-terminated */

/* SpacemiT K1: VLEN 256, DLEN 128, 32 KiB L1D 8-way, 512 KiB L2 16-way per 4 cores, 8 cores,
 * 64-byte lines, 1.6 GHz, and 6 GB/s of DRAM: what one 32-bit LPDDR4X channel gives in practice
 * (9.6 to 10.7 in theory). */
struct target target_default(void);

/* The named targets a shapes file's `target: NAME` or --target NAME picks (docs/generator.md
 * says what each assumes): k1 (the default), k3-x100 (k3 is the same), k3-a100, generic.
 * Sets *t and returns 0, or returns -1 for an unknown name. */
int target_named(const char *name, struct target *t);

/* The known names, for messages: "k1, k3, k3-x100, k3-a100, generic". */
extern const char target_names_list[];

/* The field called name, or NULL. */
uint64_t *target_field(struct target *t, const char *name);

/* Parses "l2_kib=128,vlen=128" into t; an item without "=" names a target, whose fields
 * replace t's ("k3,l2_kib=2048"). Returns 0, or -1 with a message in err. */
int target_parse(struct target *t, const char *spec, char *err, unsigned long errlen);

/* "" when t makes sense, else what is wrong (a power of two where one is needed, ...). */
const char *target_check(const struct target *t);

#endif
