#include "target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIELD_NAME(name) #name,
const char *const target_field_names[TARGET_FIELDS + 1] = {TARGET_FIELD_LIST(FIELD_NAME) NULL};
#undef FIELD_NAME
_Static_assert(sizeof(struct target) == TARGET_FIELDS * sizeof(uint64_t),
               "TARGET_FIELD_LIST names every field of struct target");

struct target target_default(void)
{
    struct target t = {256, 128, 32, 8, 512, 16, 4, 8, 64, 1600, 6000};
    return t;
}

/* Fields in struct order: vlen, dlen, l1d_kib, l1d_ways, l2_kib, l2_ways, l2_cores, cores,
 * line, mhz, dram_mb_s. What is known and what is assumed: docs/generator.md, "Targets". */
static const struct {
    const char *name;
    struct target t;
} named[] = {
    {"k1", {256, 128, 32, 8, 512, 16, 4, 8, 64, 1600, 6000}},
    /* K3's X100 cores: VLEN 256, 2.4 GHz, Zvfbfwma known; DLEN, caches, cores, DRAM assumed. */
    {"k3", {256, 128, 64, 8, 1024, 16, 4, 8, 64, 2400, 12000}},
    {"k3-x100", {256, 128, 64, 8, 1024, 16, 4, 8, 64, 2400, 12000}},
    /* K3's A100 cores: VLEN 1024, 2.0 GHz known; the rest assumed. */
    {"k3-a100", {1024, 256, 64, 8, 1024, 16, 4, 8, 64, 2000, 12000}},
    /* Any RVV 1.0 core: the smallest VLEN V allows, 256 KiB of L2 a core (512 KiB for 2). */
    {"generic", {128, 128, 32, 8, 512, 8, 2, 4, 64, 1500, 4000}},
};

const char target_names_list[] = "k1, k3, k3-x100, k3-a100, generic";

int target_named(const char *name, struct target *t)
{
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        if (strcmp(named[i].name, name) == 0) {
            *t = named[i].t;
            return 0;
        }
    return -1;
}

uint64_t *target_field(struct target *t, const char *name)
{
#define FIELD_POINTER(name) &t->name,
    uint64_t *fields[TARGET_FIELDS] = {TARGET_FIELD_LIST(FIELD_POINTER)};
#undef FIELD_POINTER
    for (int i = 0; i < TARGET_FIELDS; i++)
        if (strcmp(target_field_names[i], name) == 0)
            return fields[i];
    return NULL;
}

int target_parse(struct target *t, const char *spec, char *err, unsigned long errlen)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *item = strtok(buf, ","); item; item = strtok(NULL, ",")) {
        char *eq = strchr(item, '=');
        if (!eq) {
            if (target_named(item, t) == 0)
                continue;
            snprintf(err, errlen, "unknown target \"%s\" (known: %s; or FIELD=VALUE)", item,
                     target_names_list);
            return -1;
        }
        *eq = '\0';
        uint64_t *f = target_field(t, item);
        if (!f) {
            snprintf(err, errlen, "unknown target field \"%s\"", item);
            return -1;
        }
        const char *v = eq + 1;
        if (!v[0] || strspn(v, "0123456789") != strlen(v) || strlen(v) > 9) {
            snprintf(err, errlen, "%s needs a whole number below 10^9, got \"%s\"", item, v);
            return -1;
        }
        *f = strtoull(v, NULL, 10);
    }
    const char *bad = target_check(t);
    if (bad[0]) {
        snprintf(err, errlen, "%s", bad);
        return -1;
    }
    return 0;
}

static int power_of_two(uint64_t v) { return v && !(v & (v - 1)); }

const char *target_check(const struct target *t)
{
    if (!power_of_two(t->vlen) || t->vlen < 128 || t->vlen > 65536)
        return "vlen must be a power of two from 128 to 65536";
    if (!power_of_two(t->dlen) || t->dlen < 32 || t->dlen > t->vlen)
        return "dlen must be a power of two from 32 to vlen";
    if (!power_of_two(t->line) || t->line < 16 || t->line > 1024)
        return "line must be a power of two from 16 to 1024";
    if (t->l1d_kib == 0 || t->l2_kib == 0 || t->l1d_ways == 0 || t->l2_ways == 0)
        return "cache sizes and ways must be positive";
    if (t->l2_cores == 0 || t->cores == 0 || t->mhz == 0 || t->dram_mb_s == 0)
        return "l2_cores, cores, mhz and dram_mb_s must be positive";
    return "";
}
