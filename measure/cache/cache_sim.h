/* A model of one core's data caches: an L1D in front of one or more L2s (each L2 sees the same
 * L1 traffic, so one run models several L2 sizes at once). Every level is set-associative,
 * LRU, write-back and write-allocate. DRAM traffic is what the L2s fetch (line fills) and write
 * (dirty lines evicted, and the dirty lines left when a region ends).
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

#endif
