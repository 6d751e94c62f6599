/* A model of one core's data caches: an L1D in front of one or more L2s (each L2 sees the same
 * L1 traffic, so one run models several L2 sizes at once); and (struct cache_mc, below) of
 * several cores: one L1D per core, one L2 per cluster of cores, kept coherent. Every level
 * is set-associative, LRU, write-back and write-allocate. DRAM traffic is what the L2s fetch
 * (line fills) and write (dirty lines evicted, and the dirty lines left when a region ends).
 *
 * The L2 is modelled non-inclusive: an L1 eviction that misses the L2 installs the line there;
 * a dirty line written back whole needs no fill from DRAM. Addresses are the program's virtual
 * addresses (user-mode QEMU knows no others): the L1 index lies within the page offset for
 * 4 KiB per way, as on real VIPT L1s; for the L2 this assumes physically contiguous memory. */
#ifndef CACHE_SIM_H
#define CACHE_SIM_H

#include <stddef.h>
#include <stdint.h>

#define CACHE_SIM_MAX_L2 4

struct cache_level {
    uint64_t size, ways, line;     /* bytes, ways per set, bytes per line */
    uint64_t sets;
    unsigned line_shift;
    uint64_t *tag;                 /* sets * ways line numbers */
    uint64_t *stamp;               /* last use; 0: the way is empty */
    uint8_t *dirty;
    uint64_t clock;
    /* DRAM traffic, in lines of this level (L2s only) */
    uint64_t fills, writebacks;
};

/* Called for every line an L2 moves to or from DRAM (addr: the line's first byte), when set. */
typedef void cache_sim_dram_hook(void *ctx, size_t l2_index, uint64_t addr, int is_write);

struct cache_sim {
    struct cache_level l1;
    struct cache_level l2[CACHE_SIM_MAX_L2];
    size_t l2_count;
    uint64_t accesses, l1_misses;
    /* the L1 line touched last and its way: repeated touches of one line skip the search */
    uint64_t last_line;
    size_t last_way;
    cache_sim_dram_hook *hook;
    void *hook_ctx;
};

/* Sets up a level; returns 0, or -1 with a message in why (sizes not powers of two, a size
 * that is not a whole number of sets, no memory). */
int cache_level_init(struct cache_level *c, uint64_t size, uint64_t ways, uint64_t line,
                     const char **why);

/* Empties every level (a cold start: dirty lines are dropped, not counted) and zeroes the
 * counters. */
void cache_sim_reset(struct cache_sim *s);

/* One load or store of size bytes at addr (it may straddle lines). */
void cache_sim_access(struct cache_sim *s, uint64_t addr, uint64_t size, int is_store);

/* Ends a region: writes every dirty line back (L1 into the L2s, then the L2s to DRAM), so that
 * the outputs a region wrote count as written once. */
void cache_sim_flush(struct cache_sim *s);

/* ---- several cores ---------------------------------------------------------------------------
 * One L1D per core (core: the program's thread, by QEMU's vCPU index) and one L2 per cluster of
 * l2_cores consecutive cores; with several L2 sizes, each size is a separate set of cluster L2s
 * behind the same L1s. DRAM traffic is the fills and write-backs of every cluster's L2.
 * Coherence is write-invalidate at line granularity (L1 and L2 lines must be the same size):
 * - a store invalidates the line in every other L1 and in every other cluster's L2; a dirty
 *   copy is handed to the writer, not written to DRAM (a MESI owner passes a line it loses to
 *   a write along with its dirtiness, as ACE-style interconnects do);
 * - a load of a line dirty in another core's L1 makes that L1 write it into its cluster's L2
 *   (as its own eviction would) and keep it clean; a load of a line dirty in another cluster's
 *   L2 writes it back to DRAM and hands the data over (MESI has no shared-dirty state: the
 *   owner updates memory, the reader fills from the snoop, not from DRAM);
 * - clean lines are not passed between clusters: a cluster without the line fills it from DRAM
 *   (the conservative reading of the K1's interconnect, of which nothing is published).
 * Each L1 line carries an exclusive bit (no other L1 and no other cluster's L2 holds it), so a
 * store to an exclusive line snoops nothing. Not thread-safe: the caller serialises. */
#define CACHE_MC_MAX_CORES 64

struct cache_core {
    struct cache_level l1;
    uint8_t *excl;                 /* per L1 slot: the line is held by no other cache */
    uint64_t last_line;            /* as struct cache_sim's */
    size_t last_way;
    uint64_t accesses, l1_misses;
};

struct cache_cluster {
    struct cache_level l2[CACHE_SIM_MAX_L2];
};

struct cache_mc {
    uint64_t l1_size, l1_ways, line, l2_size[CACHE_SIM_MAX_L2], l2_ways;
    size_t l2_count, l2_cores;
    size_t cores, clusters;        /* index bounds of those set up so far (some may be NULL) */
    struct cache_core *core[CACHE_MC_MAX_CORES];
    struct cache_cluster *cluster[CACHE_MC_MAX_CORES];
    /* per L2 size: dirty lines handed from one cluster to another (no DRAM traffic), and
     * copies invalidated in other caches by a store */
    uint64_t transfers[CACHE_SIM_MAX_L2], invalidations;
    /* accesses whose core is not the previous access's: how finely the threads interleave */
    uint64_t switches;
    size_t last_core;
    cache_sim_dram_hook *hook;     /* l2_index: the L2 size's index, whichever cluster */
    void *hook_ctx;
};

/* Records the geometry (checked by setting up core 0); returns 0, or -1 with a message. */
int cache_mc_init(struct cache_mc *m, uint64_t l1_size, uint64_t l1_ways, uint64_t line,
                  const uint64_t *l2_sizes, size_t l2_count, uint64_t l2_ways, size_t l2_cores,
                  const char **why);

/* Sets up core (below CACHE_MC_MAX_CORES) and its cluster, empty, if not yet; 0 or -1. */
int cache_mc_add_core(struct cache_mc *m, size_t core, const char **why);

/* As cache_sim_reset, cache_sim_access (core: one set up) and cache_sim_flush, for every core. */
void cache_mc_reset(struct cache_mc *m);
void cache_mc_access(struct cache_mc *m, size_t core, uint64_t addr, uint64_t size, int is_store);
void cache_mc_flush(struct cache_mc *m);

/* The DRAM lines of L2 size i, summed over the clusters. */
void cache_mc_dram(const struct cache_mc *m, size_t i, uint64_t *fills, uint64_t *writebacks);

#endif
