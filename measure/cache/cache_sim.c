/* The cache model behind cache_model.c: see cache_sim.h. */
#include "cache_sim.h"

#include <stdlib.h>
#include <string.h>

static int is_pow2(uint64_t v) { return v && !(v & (v - 1)); }

int cache_level_init(struct cache_level *c, uint64_t size, uint64_t ways, uint64_t line,
                     const char **why)
{
    memset(c, 0, sizeof *c);
    if (!is_pow2(line) || !is_pow2(size) || ways == 0) {
        *why = "size and line size must be powers of two, ways at least 1";
        return -1;
    }
    if (size % (ways * line) != 0 || !is_pow2(size / (ways * line))) {
        *why = "size / (ways * line size) must be a power of two number of sets";
        return -1;
    }
    c->size = size;
    c->ways = ways;
    c->line = line;
    c->sets = size / (ways * line);
    while ((1ull << c->line_shift) < line)
        c->line_shift++;
    size_t slots = (size_t)(c->sets * ways);
    c->tag = calloc(slots, sizeof *c->tag);
    c->stamp = calloc(slots, sizeof *c->stamp);
    c->dirty = calloc(slots, sizeof *c->dirty);
    if (!c->tag || !c->stamp || !c->dirty) {
        *why = "out of memory";
        return -1;
    }
    return 0;
}

static void level_reset(struct cache_level *c)
{
    size_t slots = (size_t)(c->sets * c->ways);
    memset(c->stamp, 0, slots * sizeof *c->stamp);
    memset(c->dirty, 0, slots);
    c->clock = 0;
    c->fills = c->writebacks = 0;
}

void cache_sim_reset(struct cache_sim *s)
{
    level_reset(&s->l1);
    for (size_t i = 0; i < s->l2_count; i++)
        level_reset(&s->l2[i]);
    s->accesses = s->l1_misses = 0;
    s->last_line = UINT64_MAX;
}

/* The slot holding line, or -1. */
static ptrdiff_t find(const struct cache_level *c, uint64_t line)
{
    size_t base = (size_t)((line & (c->sets - 1)) * c->ways);
    for (size_t w = 0; w < c->ways; w++)
        if (c->stamp[base + w] && c->tag[base + w] == line)
            return (ptrdiff_t)(base + w);
    return -1;
}

/* The slot line goes to: an empty way, else the least recently used one. */
static size_t victim(const struct cache_level *c, uint64_t line)
{
    size_t base = (size_t)((line & (c->sets - 1)) * c->ways), best = base;
    for (size_t w = 0; w < c->ways; w++) {
        if (!c->stamp[base + w])
            return base + w;
        if (c->stamp[base + w] < c->stamp[best])
            best = base + w;
    }
    return best;
}

/* One line of L2 i to (is_write) or from DRAM. */
static void dram(struct cache_sim *s, size_t i, uint64_t line, int is_write)
{
    struct cache_level *c = &s->l2[i];
    if (is_write)
        c->writebacks++;
    else
        c->fills++;
    if (s->hook)
        s->hook(s->hook_ctx, i, line << c->line_shift, is_write);
}

/* Installs line in a free or LRU slot of L2 i, writing a dirty victim to DRAM. */
static size_t l2_install(struct cache_sim *s, size_t i, uint64_t line)
{
    struct cache_level *c = &s->l2[i];
    size_t v = victim(c, line);
    if (c->stamp[v] && c->dirty[v])
        dram(s, i, c->tag[v], 1);
    c->tag[v] = line;
    c->dirty[v] = 0;
    return v;
}

/* The L1 reads the lines of L2 i covering [addr, addr + bytes). */
static void l2_read(struct cache_sim *s, size_t i, uint64_t addr, uint64_t bytes)
{
    struct cache_level *c = &s->l2[i];
    for (uint64_t line = addr >> c->line_shift; line <= (addr + bytes - 1) >> c->line_shift;
         line++) {
        ptrdiff_t slot = find(c, line);
        if (slot < 0) {
            dram(s, i, line, 0);
            slot = (ptrdiff_t)l2_install(s, i, line);
        }
        c->stamp[slot] = ++c->clock;
    }
}

/* The L1 writes a dirty line [addr, addr + bytes) back to L2 i. An L2 line it covers whole
 * needs no fill from DRAM; one it covers in part (an L1 line smaller than the L2's) does. */
static void l2_write(struct cache_sim *s, size_t i, uint64_t addr, uint64_t bytes)
{
    struct cache_level *c = &s->l2[i];
    int whole = bytes >= c->line;
    for (uint64_t line = addr >> c->line_shift; line <= (addr + bytes - 1) >> c->line_shift;
         line++) {
        ptrdiff_t slot = find(c, line);
        if (slot < 0) {
            if (!whole)
                dram(s, i, line, 0);
            slot = (ptrdiff_t)l2_install(s, i, line);
        }
        c->dirty[slot] = 1;
        c->stamp[slot] = ++c->clock;
    }
}

static void write_back_l1_line(struct cache_sim *s, uint64_t line)
{
    for (size_t i = 0; i < s->l2_count; i++)
        l2_write(s, i, line << s->l1.line_shift, s->l1.line);
}

static void access_line(struct cache_sim *s, uint64_t line, int is_store)
{
    struct cache_level *l1 = &s->l1;
    if (line == s->last_line) { /* already the most recently used line of its set */
        l1->dirty[s->last_way] |= (uint8_t)is_store;
        return;
    }
    ptrdiff_t slot = find(l1, line);
    if (slot < 0) {
        s->l1_misses++;
        slot = (ptrdiff_t)victim(l1, line);
        if (l1->stamp[slot] && l1->dirty[slot])
            write_back_l1_line(s, l1->tag[slot]);
        for (size_t i = 0; i < s->l2_count; i++)
            l2_read(s, i, line << l1->line_shift, l1->line);
        l1->tag[slot] = line;
        l1->dirty[slot] = 0;
    }
    l1->stamp[slot] = ++l1->clock;
    l1->dirty[slot] |= (uint8_t)is_store;
    s->last_line = line;
    s->last_way = (size_t)slot;
}

void cache_sim_access(struct cache_sim *s, uint64_t addr, uint64_t size, int is_store)
{
    s->accesses++;
    uint64_t first = addr >> s->l1.line_shift, last = (addr + size - 1) >> s->l1.line_shift;
    for (uint64_t line = first; line <= last; line++)
        access_line(s, line, is_store);
}

void cache_sim_flush(struct cache_sim *s)
{
    struct cache_level *l1 = &s->l1;
    for (size_t slot = 0; slot < l1->sets * l1->ways; slot++)
        if (l1->stamp[slot] && l1->dirty[slot]) {
            write_back_l1_line(s, l1->tag[slot]);
            l1->dirty[slot] = 0;
        }
    for (size_t i = 0; i < s->l2_count; i++) {
        struct cache_level *c = &s->l2[i];
        for (size_t slot = 0; slot < c->sets * c->ways; slot++)
            if (c->stamp[slot] && c->dirty[slot]) {
                dram(s, i, c->tag[slot], 1);
                c->dirty[slot] = 0;
            }
    }
}
