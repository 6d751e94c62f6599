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

/* Where an L2 reports the lines it moves to and from DRAM: the hook, and the L2's index. */
struct sink {
    cache_sim_dram_hook *hook;
    void *ctx;
    size_t index;
};

/* One line of L2 c to (is_write) or from DRAM. */
static void dram(struct cache_level *c, const struct sink *k, uint64_t line, int is_write)
{
    if (is_write)
        c->writebacks++;
    else
        c->fills++;
    if (k->hook)
        k->hook(k->ctx, k->index, line << c->line_shift, is_write);
}

static struct sink sink_of(const struct cache_sim *s, size_t i)
{
    struct sink k = {s->hook, s->hook_ctx, i};
    return k;
}

/* Installs line in a free or LRU slot of L2 c, writing a dirty victim to DRAM. */
static size_t l2_install(struct cache_level *c, const struct sink *k, uint64_t line)
{
    size_t v = victim(c, line);
    if (c->stamp[v] && c->dirty[v])
        dram(c, k, c->tag[v], 1);
    c->tag[v] = line;
    c->dirty[v] = 0;
    return v;
}

/* The L1 reads the lines of L2 c covering [addr, addr + bytes). */
static void l2_read(struct cache_level *c, const struct sink *k, uint64_t addr, uint64_t bytes)
{
    for (uint64_t line = addr >> c->line_shift; line <= (addr + bytes - 1) >> c->line_shift;
         line++) {
        ptrdiff_t slot = find(c, line);
        if (slot < 0) {
            dram(c, k, line, 0);
            slot = (ptrdiff_t)l2_install(c, k, line);
        }
        c->stamp[slot] = ++c->clock;
    }
}

/* The L1 writes a dirty line [addr, addr + bytes) back to L2 c. An L2 line it covers whole
 * needs no fill from DRAM; one it covers in part (an L1 line smaller than the L2's) does. */
static void l2_write(struct cache_level *c, const struct sink *k, uint64_t addr, uint64_t bytes)
{
    int whole = bytes >= c->line;
    for (uint64_t line = addr >> c->line_shift; line <= (addr + bytes - 1) >> c->line_shift;
         line++) {
        ptrdiff_t slot = find(c, line);
        if (slot < 0) {
            if (!whole)
                dram(c, k, line, 0);
            slot = (ptrdiff_t)l2_install(c, k, line);
        }
        c->dirty[slot] = 1;
        c->stamp[slot] = ++c->clock;
    }
}

static void write_back_l1_line(struct cache_sim *s, uint64_t line)
{
    for (size_t i = 0; i < s->l2_count; i++) {
        struct sink k = sink_of(s, i);
        l2_write(&s->l2[i], &k, line << s->l1.line_shift, s->l1.line);
    }
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
        for (size_t i = 0; i < s->l2_count; i++) {
            struct sink k = sink_of(s, i);
            l2_read(&s->l2[i], &k, line << l1->line_shift, l1->line);
        }
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
        struct sink k = sink_of(s, i);
        for (size_t slot = 0; slot < c->sets * c->ways; slot++)
            if (c->stamp[slot] && c->dirty[slot]) {
                dram(c, &k, c->tag[slot], 1);
                c->dirty[slot] = 0;
            }
    }
}

/* ---- several cores (cache_sim.h) --------------------------------------------------------- */

int cache_mc_init(struct cache_mc *m, uint64_t l1_size, uint64_t l1_ways, uint64_t line,
                  const uint64_t *l2_sizes, size_t l2_count, uint64_t l2_ways, size_t l2_cores,
                  const char **why)
{
    memset(m, 0, sizeof *m);
    if (l2_count == 0 || l2_count > CACHE_SIM_MAX_L2 || l2_cores == 0) {
        *why = "one to CACHE_SIM_MAX_L2 L2 sizes and at least one core per L2";
        return -1;
    }
    m->l1_size = l1_size;
    m->l1_ways = l1_ways;
    m->line = line;
    m->l2_ways = l2_ways;
    m->l2_count = l2_count;
    m->l2_cores = l2_cores;
    memcpy(m->l2_size, l2_sizes, l2_count * sizeof *l2_sizes);
    return cache_mc_add_core(m, 0, why);
}

int cache_mc_add_core(struct cache_mc *m, size_t core, const char **why)
{
    if (core >= CACHE_MC_MAX_CORES) {
        *why = "more cores than CACHE_MC_MAX_CORES";
        return -1;
    }
    size_t g = core / m->l2_cores;
    if (!m->cluster[g]) {
        struct cache_cluster *c = calloc(1, sizeof *c);
        if (!c) {
            *why = "out of memory";
            return -1;
        }
        for (size_t i = 0; i < m->l2_count; i++)
            if (cache_level_init(&c->l2[i], m->l2_size[i], m->l2_ways, m->line, why) != 0)
                return -1;
        m->cluster[g] = c;
        if (g >= m->clusters)
            m->clusters = g + 1;
    }
    if (!m->core[core]) {
        struct cache_core *c = calloc(1, sizeof *c);
        if (!c || cache_level_init(&c->l1, m->l1_size, m->l1_ways, m->line, why) != 0) {
            if (!c)
                *why = "out of memory";
            return -1;
        }
        if (!(c->excl = calloc((size_t)(c->l1.sets * c->l1.ways), 1))) {
            *why = "out of memory";
            return -1;
        }
        c->last_line = UINT64_MAX;
        m->core[core] = c;
        if (core >= m->cores)
            m->cores = core + 1;
    }
    return 0;
}

void cache_mc_reset(struct cache_mc *m)
{
    for (size_t c = 0; c < m->cores; c++)
        if (m->core[c]) {
            struct cache_core *k = m->core[c];
            level_reset(&k->l1);
            memset(k->excl, 0, (size_t)(k->l1.sets * k->l1.ways));
            k->last_line = UINT64_MAX;
            k->accesses = k->l1_misses = 0;
        }
    for (size_t g = 0; g < m->clusters; g++)
        if (m->cluster[g])
            for (size_t i = 0; i < m->l2_count; i++)
                level_reset(&m->cluster[g]->l2[i]);
    memset(m->transfers, 0, sizeof m->transfers);
    m->invalidations = m->switches = 0;
}

static struct sink mc_sink(const struct cache_mc *m, size_t i)
{
    struct sink k = {m->hook, m->hook_ctx, i};
    return k;
}

/* A dirty L1 line of a core of cluster g goes to that cluster's L2s. */
static void mc_l1_write_back(struct cache_mc *m, size_t g, uint64_t line)
{
    for (size_t i = 0; i < m->l2_count; i++) {
        struct sink k = mc_sink(m, i);
        l2_write(&m->cluster[g]->l2[i], &k, line * m->line, m->line);
    }
}

static void mc_drop_l1(struct cache_mc *m, struct cache_core *d, size_t slot)
{
    d->l1.stamp[slot] = 0;
    d->l1.dirty[slot] = 0;
    d->excl[slot] = 0;
    if (d->last_way == slot)
        d->last_line = UINT64_MAX;
    m->invalidations++;
}

/* Before core c (of cluster g) takes line: what the other caches do (cache_sim.h). Returns,
 * per L2 size (bit i), whether the line's data came from another cache rather than from DRAM;
 * *shared: whether another L1 or another cluster's L2 keeps a copy. */
static unsigned mc_snoop(struct cache_mc *m, size_t c, uint64_t line, int is_store, int *shared)
{
    const size_t g = c / m->l2_cores;
    const unsigned all = (1u << m->l2_count) - 1;
    unsigned got = 0, across = 0; /* data from any other cache / from another cluster */
    *shared = 0;
    for (size_t e = 0; e < m->cores; e++) {
        struct cache_core *d = m->core[e];
        ptrdiff_t s;
        if (e == c || !d || (s = find(&d->l1, line)) < 0)
            continue;
        const size_t h = e / m->l2_cores;
        if (is_store) {
            if (d->l1.dirty[s]) { /* the newest data moves to the writer */
                got = all;
                if (h != g)
                    across = all;
            }
            mc_drop_l1(m, d, (size_t)s);
        } else {
            if (d->l1.dirty[s]) { /* into its cluster's L2, which answers below */
                mc_l1_write_back(m, h, line);
                d->l1.dirty[s] = 0;
            }
            d->excl[s] = 0;
            *shared = 1;
        }
    }
    for (size_t h = 0; h < m->clusters; h++) {
        if (h == g || !m->cluster[h])
            continue;
        for (size_t i = 0; i < m->l2_count; i++) {
            struct cache_level *l2 = &m->cluster[h]->l2[i];
            ptrdiff_t s = find(l2, line);
            if (s < 0)
                continue;
            if (is_store) {
                if (l2->dirty[s]) /* handed over with its dirtiness: no DRAM write */
                    got |= 1u << i, across |= 1u << i;
                l2->stamp[s] = 0;
                l2->dirty[s] = 0;
                m->invalidations++;
            } else {
                if (l2->dirty[s]) { /* the owner updates DRAM and answers with the data */
                    struct sink k = mc_sink(m, i);
                    dram(l2, &k, line, 1);
                    l2->dirty[s] = 0;
                    got |= 1u << i, across |= 1u << i;
                }
                *shared = 1;
            }
        }
    }
    for (size_t i = 0; i < m->l2_count; i++)
        m->transfers[i] += (across >> i) & 1;
    return got;
}

/* A store by core c to a line it holds shared: every other copy is invalidated (none of them
 * is dirty: a dirty copy elsewhere would have invalidated c's). */
static void mc_claim(struct cache_mc *m, size_t c, uint64_t line)
{
    int shared;
    (void)mc_snoop(m, c, line, 1, &shared);
}

static void mc_access_line(struct cache_mc *m, size_t c, uint64_t line, int is_store)
{
    struct cache_core *me = m->core[c];
    struct cache_level *l1 = &me->l1;
    if (line == me->last_line && (!is_store || me->excl[me->last_way])) {
        l1->dirty[me->last_way] |= (uint8_t)is_store;
        return;
    }
    ptrdiff_t slot = find(l1, line);
    if (slot >= 0) {
        if (is_store && !me->excl[slot]) {
            mc_claim(m, c, line);
            me->excl[slot] = 1;
        }
    } else {
        const size_t g = c / m->l2_cores;
        me->l1_misses++;
        slot = (ptrdiff_t)victim(l1, line);
        if (l1->stamp[slot] && l1->dirty[slot])
            mc_l1_write_back(m, g, l1->tag[slot]);
        int shared;
        unsigned got = mc_snoop(m, c, line, is_store, &shared);
        for (size_t i = 0; i < m->l2_count; i++) {
            struct cache_level *l2 = &m->cluster[g]->l2[i];
            struct sink k = mc_sink(m, i);
            ptrdiff_t s2 = find(l2, line);
            if (s2 < 0) {
                if (!((got >> i) & 1))
                    dram(l2, &k, line, 0);
                s2 = (ptrdiff_t)l2_install(l2, &k, line);
            }
            l2->stamp[s2] = ++l2->clock;
        }
        l1->tag[slot] = line;
        l1->dirty[slot] = 0;
        me->excl[slot] = (uint8_t)(is_store || !shared);
    }
    l1->stamp[slot] = ++l1->clock;
    l1->dirty[slot] |= (uint8_t)is_store;
    me->last_line = line;
    me->last_way = (size_t)slot;
}

void cache_mc_access(struct cache_mc *m, size_t core, uint64_t addr, uint64_t size, int is_store)
{
    struct cache_core *me = m->core[core];
    me->accesses++;
    if (core != m->last_core) {
        m->switches++;
        m->last_core = core;
    }
    unsigned shift = me->l1.line_shift;
    for (uint64_t line = addr >> shift; line <= (addr + size - 1) >> shift; line++)
        mc_access_line(m, core, line, is_store);
}

void cache_mc_flush(struct cache_mc *m)
{
    for (size_t c = 0; c < m->cores; c++) {
        struct cache_core *k = m->core[c];
        if (!k)
            continue;
        for (size_t slot = 0; slot < k->l1.sets * k->l1.ways; slot++)
            if (k->l1.stamp[slot] && k->l1.dirty[slot]) {
                mc_l1_write_back(m, c / m->l2_cores, k->l1.tag[slot]);
                k->l1.dirty[slot] = 0;
            }
    }
    for (size_t g = 0; g < m->clusters; g++)
        for (size_t i = 0; m->cluster[g] && i < m->l2_count; i++) {
            struct cache_level *c = &m->cluster[g]->l2[i];
            struct sink k = mc_sink(m, i);
            for (size_t slot = 0; slot < c->sets * c->ways; slot++)
                if (c->stamp[slot] && c->dirty[slot]) {
                    dram(c, &k, c->tag[slot], 1);
                    c->dirty[slot] = 0;
                }
        }
}

void cache_mc_dram(const struct cache_mc *m, size_t i, uint64_t *fills, uint64_t *writebacks)
{
    *fills = *writebacks = 0;
    for (size_t g = 0; g < m->clusters; g++)
        if (m->cluster[g]) {
            *fills += m->cluster[g]->l2[i].fills;
            *writebacks += m->cluster[g]->l2[i].writebacks;
        }
}
