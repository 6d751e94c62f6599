/* A QEMU TCG plugin (API version 1, QEMU 7.2) that models one core's data caches (cache_sim.h:
 * L1D and one or more L2s, LRU, write-back, write-allocate) and counts the DRAM traffic of a
 * marked region of the program: from each call of the start function (the caches are emptied
 * there: a cold start) to the next call of the stop function (dirty lines are written back
 * there). QEMU 7.2 user mode reports every active element of an RVV load or store to memory
 * callbacks, at its address and size, so vector code is modelled element by element.
 * Arguments (sizes in bytes, or with a K or M suffix):
 *   l1=SIZE l1_ways=W l1_line=B     the L1D (default 32K, 8 ways, 64-byte lines)
 *   l2=SIZE (repeatable, up to 4)   one L2 per size, all fed by the same L1 (default 512K)
 *   l2_ways=W l2_line=B             for every L2 (default 16 ways, 64-byte lines)
 *   start=SYMBOL stop=SYMBOL        the marker functions (cache_model_start, cache_model_stop)
 *   out=FILE                        where the counts go at exit (default stderr)
 *   regions=FILE                    the traffic by address range too (traffic_map.h), to tell
 *                                   which buffer moves the bytes
 *   l2_cores=C                      several cores (cache_sim.h, struct cache_mc): one L1 per
 *                                   vCPU (guest thread) and one L2 of each size per cluster of
 *                                   C consecutive vCPU indices, coherent; l1_line = l2_line
 *   lockstep=Q                      (with l2_cores) no thread runs more than Q accesses ahead
 *                                   of the least advanced of the others, as cores of one speed
 *                                   would; a thread without an access for IDLE_MS (1 s) of host
 *                                   time (blocked, or not scheduled) is left out until it makes
 *                                   one, and rejoins level with the others. Without it the
 *                                   threads interleave as the host schedules them.
 *   qemu-riscv64 -plugin build/measure/libcache_model.so,l2=512K,l2=128K,out=c.txt prog
 * Output: "regions=R accesses=A l1_misses=L foreign=F", then one line per L2
 * "l2=SIZE fills=LINES writebacks=LINES dram_bytes=BYTES" (with l2_cores, summed over the
 * clusters, then the lines of each vCPU and cluster and the coherence counts; switches: the
 * accesses made by another vCPU than the one before, so accesses / switches is the mean run of
 * one thread's accesses between two of another's).
 * One core (no l2_cores): accesses by any thread other than the one that called start are not
 * modelled but counted as foreign. With l2_cores every thread's accesses between start and
 * stop (both called by one thread) are modelled, each on its vCPU's L1 (vCPUs from
 * CACHE_MC_MAX_CORES on count as foreign). QEMU user mode runs guest threads in parallel host
 * threads, so one mutex serialises the shared model. */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <qemu-plugin.h>

#include "cache_sim.h"
#include "traffic_map.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

static struct cache_sim sim;
static struct cache_mc mc;       /* with l2_cores= */
static size_t l2_cores;          /* 0: one core (sim) */
static pthread_mutex_t mc_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *start_sym = "cache_model_start", *stop_sym = "cache_model_stop";
static const char *out_path, *regions_path;
static struct traffic_map map;
static int map_failed;
static atomic_int active;
static unsigned int region_vcpu;
static uint64_t regions;
static atomic_uint_fast64_t foreign;
/* Counts of the regions ended so far (the model's own are reset at each start). */
static uint64_t done_accesses, done_l1_misses;
static uint64_t done_fills[CACHE_SIM_MAX_L2], done_writebacks[CACHE_SIM_MAX_L2];
/* with l2_cores: per vCPU, per cluster and L2 size, per L2 size */
static uint64_t done_core_accesses[CACHE_MC_MAX_CORES], done_core_misses[CACHE_MC_MAX_CORES];
static uint64_t done_cluster_fills[CACHE_MC_MAX_CORES][CACHE_SIM_MAX_L2];
static uint64_t done_cluster_writebacks[CACHE_MC_MAX_CORES][CACHE_SIM_MAX_L2];
static uint64_t done_transfers[CACHE_SIM_MAX_L2], done_invalidations, done_switches;

/* lockstep=Q: per vCPU, the accesses of this region (its clock, rebased when it rejoins) and
 * the host time of its last one (0: none yet); waiters sleep on step_cv under mc_lock. */
#define IDLE_MS 1000
static uint64_t lockstep;
static pthread_cond_t step_cv = PTHREAD_COND_INITIALIZER;
static uint64_t step_clock[CACHE_MC_MAX_CORES], step_seen[CACHE_MC_MAX_CORES];
static int step_waiters;
static uint64_t done_step_waits, done_step_joins;

static uint64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
    return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000 + 1; /* never 0 */
}

/* The least clock of the vCPUs other than v that made an access within IDLE_MS, or UINT64_MAX. */
static uint64_t others_min(size_t v, uint64_t now)
{
    uint64_t least = UINT64_MAX;
    for (size_t c = 0; c < mc.cores; c++)
        if (c != v && step_seen[c] && now - step_seen[c] < IDLE_MS && step_clock[c] < least)
            least = step_clock[c];
    return least;
}

/* Waits (mc_lock held) until vCPU v is at most lockstep accesses ahead of the others. */
static void step_wait(size_t v)
{
    uint64_t now = now_ms(), least = others_min(v, now);
    if (!step_seen[v] || now - step_seen[v] >= IDLE_MS) { /* (re)joining: level with the others */
        done_step_joins++;
        if (least != UINT64_MAX && least > step_clock[v])
            step_clock[v] = least;
    }
    step_seen[v] = now;
    while (active && least != UINT64_MAX && step_clock[v] > least + lockstep) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 2000000;
        if (until.tv_nsec >= 1000000000)
            until.tv_sec++, until.tv_nsec -= 1000000000;
        step_waiters++;
        done_step_waits++;
        pthread_cond_timedwait(&step_cv, &mc_lock, &until);
        step_waiters--;
        now = now_ms();
        step_seen[v] = now; /* waiting to run is not idle */
        least = others_min(v, now);
    }
}

static void mc_on_start(unsigned int vcpu)
{
    pthread_mutex_lock(&mc_lock);
    cache_mc_reset(&mc);
    memset(step_clock, 0, sizeof step_clock);
    memset(step_seen, 0, sizeof step_seen);
    region_vcpu = vcpu;
    active = 1;
    pthread_mutex_unlock(&mc_lock);
}

static void mc_on_stop(unsigned int vcpu)
{
    pthread_mutex_lock(&mc_lock);
    if (active && vcpu == region_vcpu) {
        cache_mc_flush(&mc);
        active = 0;
        regions++;
        for (size_t c = 0; c < mc.cores; c++)
            if (mc.core[c]) {
                done_accesses += mc.core[c]->accesses;
                done_l1_misses += mc.core[c]->l1_misses;
                done_core_accesses[c] += mc.core[c]->accesses;
                done_core_misses[c] += mc.core[c]->l1_misses;
            }
        for (size_t i = 0; i < mc.l2_count; i++) {
            for (size_t g = 0; g < mc.clusters; g++)
                if (mc.cluster[g]) {
                    done_cluster_fills[g][i] += mc.cluster[g]->l2[i].fills;
                    done_cluster_writebacks[g][i] += mc.cluster[g]->l2[i].writebacks;
                    done_fills[i] += mc.cluster[g]->l2[i].fills;
                    done_writebacks[i] += mc.cluster[g]->l2[i].writebacks;
                }
            done_transfers[i] += mc.transfers[i];
        }
        done_invalidations += mc.invalidations;
        done_switches += mc.switches;
        pthread_cond_broadcast(&step_cv); /* no one waits for a region that has ended */
    }
    pthread_mutex_unlock(&mc_lock);
}

static void mc_on_mem(unsigned int vcpu, uint64_t vaddr, uint64_t size, int is_store)
{
    const char *why;
    pthread_mutex_lock(&mc_lock);
    if (active) {
        if (cache_mc_add_core(&mc, vcpu, &why) != 0)
            atomic_fetch_add(&foreign, 1);
        else if (!lockstep)
            cache_mc_access(&mc, vcpu, vaddr, size, is_store);
        else {
            step_wait(vcpu);
            if (active) { /* the region may have ended while this thread waited */
                cache_mc_access(&mc, vcpu, vaddr, size, is_store);
                /* the least advanced thread wakes the others now and then */
                if (++step_clock[vcpu] % 16 == 0 && step_waiters)
                    pthread_cond_broadcast(&step_cv);
            }
        }
    }
    pthread_mutex_unlock(&mc_lock);
}

static void on_start(unsigned int vcpu, void *unused)
{
    (void)unused;
    if (l2_cores) {
        mc_on_start(vcpu);
        return;
    }
    cache_sim_reset(&sim);
    active = 1;
    region_vcpu = vcpu;
}

static void on_stop(unsigned int vcpu, void *unused)
{
    (void)unused;
    if (l2_cores) {
        mc_on_stop(vcpu);
        return;
    }
    if (!active || vcpu != region_vcpu)
        return;
    cache_sim_flush(&sim);
    active = 0;
    regions++;
    done_accesses += sim.accesses;
    done_l1_misses += sim.l1_misses;
    for (size_t i = 0; i < sim.l2_count; i++) {
        done_fills[i] += sim.l2[i].fills;
        done_writebacks[i] += sim.l2[i].writebacks;
    }
}

static void on_dram(void *ctx, size_t l2_index, uint64_t addr, int is_write)
{
    if (traffic_map_add(ctx, l2_index, addr, is_write) != 0)
        map_failed = 1;
}

static void on_mem(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *unused)
{
    (void)unused;
    if (!active)
        return;
    if (l2_cores) {
        mc_on_mem(vcpu, vaddr, 1ull << qemu_plugin_mem_size_shift(info),
                  qemu_plugin_mem_is_store(info));
        return;
    }
    if (vcpu != region_vcpu) {
        atomic_fetch_add(&foreign, 1);
        return;
    }
    cache_sim_access(&sim, vaddr, 1ull << qemu_plugin_mem_size_shift(info),
                     qemu_plugin_mem_is_store(info));
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    size_t n = qemu_plugin_tb_n_insns(tb);
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        const char *sym = qemu_plugin_insn_symbol(insn);
        /* Every instruction of a marker calls back; a marker touches no memory, so starting
         * (or stopping) again at its next instruction changes nothing. */
        if (sym && strcmp(sym, start_sym) == 0)
            qemu_plugin_register_vcpu_insn_exec_cb(insn, on_start, QEMU_PLUGIN_CB_NO_REGS, NULL);
        else if (sym && strcmp(sym, stop_sym) == 0)
            qemu_plugin_register_vcpu_insn_exec_cb(insn, on_stop, QEMU_PLUGIN_CB_NO_REGS, NULL);
        qemu_plugin_register_vcpu_mem_cb(insn, on_mem, QEMU_PLUGIN_CB_NO_REGS,
                                         QEMU_PLUGIN_MEM_RW, NULL);
    }
}

static void at_exit(qemu_plugin_id_t id, void *unused)
{
    (void)id;
    (void)unused;
    FILE *f = out_path ? fopen(out_path, "w") : stderr;
    if (!f) {
        fprintf(stderr, "cache_model: cannot write %s\n", out_path);
        f = stderr;
    }
    if (regions == 0)
        fprintf(stderr, "cache_model: the program never called %s and then %s: nothing measured\n",
                start_sym, stop_sym);
    fprintf(f, "regions=%" PRIu64 " accesses=%" PRIu64 " l1_misses=%" PRIu64 " foreign=%" PRIu64
               "\n",
            regions, done_accesses, done_l1_misses, (uint64_t)atomic_load(&foreign));
    for (size_t i = 0; i < sim.l2_count; i++)
        fprintf(f, "l2=%" PRIu64 " fills=%" PRIu64 " writebacks=%" PRIu64 " dram_bytes=%" PRIu64
                   "\n",
                sim.l2[i].size, done_fills[i], done_writebacks[i],
                (done_fills[i] + done_writebacks[i]) * sim.l2[i].line);
    if (l2_cores) {
        fprintf(f, "cores=%zu l2_cores=%zu clusters=%zu invalidations=%" PRIu64 " switches=%" PRIu64
                   " lockstep=%" PRIu64 " waits=%" PRIu64 " joins=%" PRIu64 "\n", mc.cores,
                l2_cores, mc.clusters, done_invalidations, done_switches, lockstep, done_step_waits,
                done_step_joins);
        for (size_t c = 0; c < mc.cores; c++)
            if (done_core_accesses[c])
                fprintf(f, "vcpu=%zu cluster=%zu accesses=%" PRIu64 " l1_misses=%" PRIu64 "\n", c,
                        c / l2_cores, done_core_accesses[c], done_core_misses[c]);
        for (size_t g = 0; g < mc.clusters; g++)
            for (size_t i = 0; mc.cluster[g] && i < mc.l2_count; i++)
                fprintf(f, "cluster=%zu l2=%" PRIu64 " fills=%" PRIu64 " writebacks=%" PRIu64 "\n",
                        g, mc.l2_size[i], done_cluster_fills[g][i], done_cluster_writebacks[g][i]);
        for (size_t i = 0; i < mc.l2_count; i++)
            fprintf(f, "transfers l2=%" PRIu64 " lines=%" PRIu64 "\n", mc.l2_size[i],
                    done_transfers[i]);
    }
    if (f != stderr)
        fclose(f);
    if (!regions_path)
        return;
    FILE *r = fopen(regions_path, "w");
    if (!r || map_failed)
        fprintf(stderr, "cache_model: %s: %s\n", regions_path,
                r ? "out of memory while mapping the traffic" : "cannot write");
    if (r) {
        traffic_map_print(&map, &sim, r);
        fclose(r);
    }
}

/* "32768", "32K" or "1M" into *v; 0 on success. */
static int parse_size(const char *s, uint64_t *v)
{
    char *end;
    unsigned long long n = strtoull(s, &end, 10);
    if (end == s)
        return -1;
    if (*end == 'K' || *end == 'k')
        n <<= 10, end++;
    else if (*end == 'M' || *end == 'm')
        n <<= 20, end++;
    if (*end != '\0' || n == 0)
        return -1;
    *v = n;
    return 0;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                           int argc, char **argv)
{
    (void)info;
    uint64_t l1 = 32 << 10, l1_ways = 8, l1_line = 64, l2_ways = 16, l2_line = 64;
    uint64_t l2[CACHE_SIM_MAX_L2];
    size_t l2_count = 0;
    const struct {
        const char *name;
        uint64_t *value;
    } sizes[] = {{"l1=", &l1}, {"l1_ways=", &l1_ways}, {"l1_line=", &l1_line},
                 {"l2_ways=", &l2_ways}, {"l2_line=", &l2_line}};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "arg=", 4) == 0) /* the older "-plugin FILE,arg=..." spelling */
            a += 4;
        int known = 0;
        for (size_t j = 0; j < sizeof sizes / sizeof sizes[0] && !known; j++) {
            size_t len = strlen(sizes[j].name);
            if (strncmp(a, sizes[j].name, len) == 0) {
                known = 1;
                if (parse_size(a + len, sizes[j].value) != 0) {
                    fprintf(stderr, "cache_model: \"%s\": expected a positive size\n", a);
                    return -1;
                }
            }
        }
        if (known)
            continue;
        if (strncmp(a, "l2=", 3) == 0) {
            if (l2_count == CACHE_SIM_MAX_L2 || parse_size(a + 3, &l2[l2_count]) != 0) {
                fprintf(stderr, "cache_model: \"%s\": expected a positive size (at most %d L2s)\n",
                        a, CACHE_SIM_MAX_L2);
                return -1;
            }
            l2_count++;
        } else if (strncmp(a, "l2_cores=", 9) == 0) {
            char *end;
            unsigned long v = strtoul(a + 9, &end, 10);
            if (end == a + 9 || *end || v == 0 || v > CACHE_MC_MAX_CORES) {
                fprintf(stderr, "cache_model: \"%s\": expected 1 to %d cores per L2\n", a,
                        CACHE_MC_MAX_CORES);
                return -1;
            }
            l2_cores = v;
        } else if (strncmp(a, "lockstep=", 9) == 0) {
            char *end;
            lockstep = strtoull(a + 9, &end, 10);
            if (end == a + 9 || *end) {
                fprintf(stderr, "cache_model: \"%s\": expected a count of accesses\n", a);
                return -1;
            }
        } else if (strncmp(a, "start=", 6) == 0)
            start_sym = strdup(a + 6);
        else if (strncmp(a, "stop=", 5) == 0)
            stop_sym = strdup(a + 5);
        else if (strncmp(a, "out=", 4) == 0)
            out_path = strdup(a + 4);
        else if (strncmp(a, "regions=", 8) == 0)
            regions_path = strdup(a + 8);
        else {
            fprintf(stderr, "cache_model: unknown argument \"%s\" (l1=, l1_ways=, l1_line=, l2=, "
                            "l2_ways=, l2_line=, l2_cores=, lockstep=, start=, stop=, out=, regions=)\n", a);
            return -1;
        }
    }
    if (l2_count == 0)
        l2[l2_count++] = 512 << 10;
    const char *why;
    if (cache_level_init(&sim.l1, l1, l1_ways, l1_line, &why) != 0) {
        fprintf(stderr, "cache_model: L1 of %" PRIu64 " bytes, %" PRIu64 " ways, %" PRIu64
                        "-byte lines: %s\n", l1, l1_ways, l1_line, why);
        return -1;
    }
    for (size_t i = 0; i < l2_count; i++)
        if (cache_level_init(&sim.l2[i], l2[i], l2_ways, l2_line, &why) != 0) {
            fprintf(stderr, "cache_model: L2 of %" PRIu64 " bytes, %" PRIu64 " ways, %" PRIu64
                            "-byte lines: %s\n", l2[i], l2_ways, l2_line, why);
            return -1;
        }
    sim.l2_count = l2_count;
    if (regions_path) {
        sim.hook = on_dram;
        sim.hook_ctx = &map;
    }
    if (lockstep && !l2_cores) {
        fprintf(stderr, "cache_model: lockstep= needs l2_cores=\n");
        return -1;
    }
    if (l2_cores) {
        if (l1_line != l2_line) {
            fprintf(stderr, "cache_model: l2_cores= needs l1_line = l2_line\n");
            return -1;
        }
        if (cache_mc_init(&mc, l1, l1_ways, l1_line, l2, l2_count, l2_ways, l2_cores, &why) != 0) {
            fprintf(stderr, "cache_model: l2_cores=%zu: %s\n", l2_cores, why);
            return -1;
        }
        mc.hook = sim.hook;
        mc.hook_ctx = sim.hook_ctx;
    }
    cache_sim_reset(&sim);
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
