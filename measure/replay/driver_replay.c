/* One call of the shipped driver (runtime/plan_call.c, runtime/driver.c) traced on the host and
 * its memory accesses fed to the cache model of measure/cache/cache_sim.c, in seconds instead
 * of the 10 to 20 minutes a call with M = 128 takes under QEMU with the plugin. It is how the
 * flood terms of the generator's traffic model (gen/blocking.c) were calibrated: any blocking
 * can be tried, not only the plan's.
 *
 * Nothing of the driver is modelled here: the runtime's own plan_call.c, split.c, driver.c,
 * lines.c and scratch.c run on real buffers, with a plan made of the generator's choices (its
 * tile for a bucket of M rows, gen/tile.c; the blocking given; the X-copy and rounds fields
 * from blocking_x_copy, written into the plan's fields through gen/plan_fields.h). What stands
 * in for the board:
 * - the variant: trace tiles, arrange and pack (below) that record the loads and stores the
 *   base variant's RVV code makes at VLEN 256 (strips of VLMAX(e32, LMUL), panels of 64) and
 *   compute nothing;
 * - the driver's own loads and stores (its copies of X, the carried elements, Y finished from
 *   the partial sums, the kept tail): driver.c is compiled with GCC's ThreadSanitizer
 *   instrumentation (mk/measure.mk) and the __tsan_* hooks below record each access instead
 *   of checking it, memcpy included (-Dmemcpy=gr_trace_memcpy); a run of contiguous scalar
 *   accesses counts as one access, as a vector load or store would;
 * - the threads: gr_parallel_for runs participant i on piece i as a coroutine, 64 accesses
 *   each in turn (skew=S: participant i takes 64 + i S, cores of unequal speed), each with its
 *   own L1, four to an L2 (the K1's clusters: 8 threads, two L2s; the DRAM traffic is the sum
 *   of both L2s'); gr_parallel_for returns when all are done, as the runtime's does;
 * - the memory: the caller's buffers sit at fixed addresses where PLACEMENT puts them (as
 *   measure/dram/placement.h places them for the plugin's runs), the call's scratch after them
 *   (gr_scratch_take is wrapped: one block, laid out by the real gr_scratch_shared/piece).
 * x= and rounds= force the plan's X-copy fields (none: x_copy_rows 0; own and shared: a copy
 * for every call) and col_rounds (0 or 4).
 *
 *   make bench-replay REPLAY_ARGS="M N K strips|tiles KC NC packed|plain L2_KB [PLACEMENT]
 *                                  [x_at=PLACEMENT] [threads=T] [x=plan|none|own|shared]
 *                                  [rounds=plan|0|1] [skew=S]"
 * (PLACEMENT: aligned (the default), malloc or page+B; x_at= puts X elsewhere than W and Y)
 * prints the DRAM bytes over the minimum and the megabytes filled and written back per
 * buffer: the caller's, and the parts of the scratch as the driver lays them out
 * (gr_drive_scratch_parts; x_copy: the participants' own copies or the call's shared one). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "blocking.h"
#include "cache_sim.h"
#include "cpu.h"
#include "dispatch.h"
#include "driver.h"
#include "isa.h"
#include "plan_fields.h"
#include "scratch.h"
#include "settings.h"
#include "threads.h"
#include "tile.h"

#define PANEL 64  /* columns of a panel of packed weights at VLEN 256 */
#define VLENB 32  /* bytes of a vector register at VLEN 256 */
#define PAGE 4096 /* where placement.h's page+B and malloc placements count from */
#define CHUNK 64  /* BF16 weights of a plain row that one pack load takes (e16m4) */
#define CALL_AT (1ull << 32) /* the caller's buffers, then the scratch */

/* The caller's buffers, then the parts of a participant's scratch (gr_drive_scratch_parts;
 * x_copy: its own copy of X, or the call's shared one). */
enum buffer {
    B_W, B_X, B_Y, B_PARTIALS, B_X_F, B_WORDS, B_X_COPY, B_X_CARRY, B_Y_TAIL, B_STRIP, B_END
};
static const char *const buffer_names[B_END] = {"weights", "x",      "y",       "partials",
                                                "x_f",     "words",  "x_copy",  "x_carry",
                                                "y_tail",  "strip"};
_Static_assert(B_END - B_PARTIALS == GR_DRIVE_SCRATCH_PARTS, "a name per part of the scratch");

#define MAX_PARTS 16
#define CLUSTER 4
#ifndef QUANTUM
#define QUANTUM 64 /* accesses per turn (cc -DQUANTUM=... to try others) */
#endif

/* A participant (core): its L1, a mirror of its cluster's L2 (l2[0] shares the arrays), its
 * coroutine. */
struct part {
    struct cache_sim sim;
    struct cache_level *l2; /* its cluster's L2: the clock and counters between turns */
    uint64_t steps, quantum;
    ucontext_t ctx;
    int finished;
};

static struct part parts[MAX_PARTS];
static int current = -1, part_count;
static ucontext_t scheduler;

/* Every traced buffer as an address range, in address order, for the DRAM hook. The call's
 * memory is [CALL_AT, traced_end): accesses outside it (the driver's structs, the stack) are
 * not memory the call's data moves through. */
#define MAX_RANGES (3 + 1 + MAX_PARTS * GR_DRIVE_SCRATCH_PARTS)
static struct {
    uint64_t start[MAX_RANGES];
    int buffer[MAX_RANGES];
    int count;
    double filled[B_END], written[B_END];
} traffic;
static uint64_t traced_end = CALL_AT;

static void add_range(uint64_t start, uint64_t bytes, int buffer)
{
    if (!bytes || traffic.count == MAX_RANGES)
        return;
    traffic.start[traffic.count] = start;
    traffic.buffer[traffic.count++] = buffer;
    if (start + bytes > traced_end)
        traced_end = start + bytes;
}

static int range_of(uint64_t addr) { return addr >= CALL_AT && addr < traced_end; }

static void on_dram(void *ctx, size_t l2, uint64_t addr, int is_write)
{
    (void)ctx;
    (void)l2;
    int lo = 0, hi = traffic.count - 1; /* the last range starting at or before addr */
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (traffic.start[mid] <= addr)
            lo = mid;
        else
            hi = mid - 1;
    }
    const int b = traffic.buffer[lo];
    if (is_write)
        traffic.written[b] += 64;
    else
        traffic.filled[b] += 64;
}

/* Lets the next participant run. */
static void yield(struct part *r) { swapcontext(&r->ctx, &scheduler); }

static void access_now(uint64_t addr, uint64_t bytes, int is_store)
{
    struct part *r = &parts[current < 0 ? 0 : current];
    cache_sim_access(&r->sim, addr, bytes, is_store);
    if (++r->steps % r->quantum == 0 && current >= 0)
        yield(r);
}

/* The driver's scalar accesses, gathered into runs of contiguous loads and of contiguous
 * stores; both runs end (older first) where either breaks, or before any other access. */
static struct run {
    uint64_t addr, bytes, seq;
} runs[2];
static uint64_t run_seq;

static void flush_runs(void)
{
    struct run l = runs[0], s = runs[1];
    runs[0].bytes = runs[1].bytes = 0;
    if (l.bytes && (!s.bytes || l.seq < s.seq))
        access_now(l.addr, l.bytes, 0);
    if (s.bytes)
        access_now(s.addr, s.bytes, 1);
    if (l.bytes && s.bytes && l.seq > s.seq)
        access_now(l.addr, l.bytes, 0);
}

static void scalar_access(const void *p, uint64_t bytes, int is_store)
{
    const uint64_t addr = (uintptr_t)p;
    if (!range_of(addr))
        return;
    struct run *run = &runs[is_store];
    if (run->bytes && addr == run->addr + run->bytes) {
        run->bytes += bytes;
        return;
    }
    if (run->bytes)
        flush_runs();
    run->addr = addr;
    run->bytes = bytes;
    run->seq = ++run_seq;
}

static void load(const void *p, uint64_t bytes)
{
    flush_runs();
    access_now((uintptr_t)p, bytes, 0);
}

static void store(const void *p, uint64_t bytes)
{
    flush_runs();
    access_now((uintptr_t)p, bytes, 1);
}

/* ---- the hooks of driver.c's instrumentation ------------------------------------------------ */
void __tsan_init(void);
void __tsan_func_entry(void *pc);
void __tsan_func_exit(void);
void __tsan_read_range(void *p, unsigned long n);
void __tsan_write_range(void *p, unsigned long n);
void __tsan_init(void) {}
void __tsan_func_entry(void *pc) { (void)pc; }
void __tsan_func_exit(void) {}
void __tsan_read_range(void *p, unsigned long n) { scalar_access(p, n, 0); }
void __tsan_write_range(void *p, unsigned long n) { scalar_access(p, n, 1); }
#define TSAN_HOOKS(n)                                                                          \
    void __tsan_read##n(void *p);                                                              \
    void __tsan_write##n(void *p);                                                             \
    void __tsan_unaligned_read##n(void *p);                                                    \
    void __tsan_unaligned_write##n(void *p);                                                   \
    void __tsan_read##n(void *p) { scalar_access(p, n, 0); }                                   \
    void __tsan_write##n(void *p) { scalar_access(p, n, 1); }                                  \
    void __tsan_unaligned_read##n(void *p) { scalar_access(p, n, 0); }                         \
    void __tsan_unaligned_write##n(void *p) { scalar_access(p, n, 1); }
TSAN_HOOKS(1)
TSAN_HOOKS(2)
TSAN_HOOKS(4)
TSAN_HOOKS(8)
TSAN_HOOKS(16)

void *gr_trace_memcpy(void *restrict dst, const void *restrict src, size_t n);
void *gr_trace_memcpy(void *restrict dst, const void *restrict src, size_t n)
{
    if (n && range_of((uintptr_t)src))
        load(src, n);
    if (n && range_of((uintptr_t)dst))
        store(dst, n);
    return memcpy(dst, src, n);
}

/* ---- the trace variant: the base variant's accesses at VLEN 256 ---------------------------- */
static size_t trace_vlenb(void) { return VLENB; }

/* arrange_base: each row's kc activations widened and stored x_stride floats apart. */
static void trace_arrange(const uint16_t *x, size_t ldx, size_t rows, size_t kc, void *x_out,
                          size_t x_stride)
{
    for (size_t i = 0; i < rows; i++)
        for (size_t kk = 0; kk < kc; kk++) {
            if (kk % 32 == 0)
                load(x + i * ldx + kk, (kc - kk < 32 ? kc - kk : 32) * 2);
            store((float *)x_out + kk * x_stride + i, 4);
        }
}

/* pack_base: per column, CHUNK weights loaded, their words stored out_stride words apart. */
static void trace_pack(const uint16_t *w, size_t ldw, size_t cols, size_t kc, void *out,
                       size_t out_stride)
{
    for (size_t j = 0; j < cols; j++)
        for (size_t kk = 0; kk < kc; kk += CHUNK) {
            size_t vl = kc - kk < CHUNK ? kc - kk : CHUNK;
            load(w + j * ldw + kk, vl * 2);
            for (size_t p = 0; p < (vl + 1) / 2; p++)
                store((uint32_t *)out + (kk / 2 + p) * out_stride + j, 4);
        }
}

/* One register tile: partial sums in, per k-pair a weight row and the rows' activations of
 * both k, partial sums out, or outputs in the last K block. */
static void trace_tile(const struct gr_tile_args *a, size_t rows)
{
    const size_t y_bytes = a->y_bf16 ? 2 : 4;
    if (!a->first)
        for (size_t i = 0; i < rows; i++)
            load(a->acc + i * a->acc_stride, a->vl * 4);
    for (size_t p = 0; p < (a->kc + 1) / 2; p++) {
        load((const uint32_t *)a->w + p * a->w_stride, a->vl * 4);
        load((const float *)a->x + 2 * p * a->x_stride, rows * 4);
        if (2 * p + 1 < a->kc)
            load((const float *)a->x + (2 * p + 1) * a->x_stride, rows * 4);
    }
    for (size_t i = 0; i < rows; i++) {
        if (a->last)
            store((char *)a->y + i * a->ldy * y_bytes, a->vl * y_bytes);
        else
            store(a->acc + i * a->acc_stride, a->vl * 4);
    }
}

#define TRACE_TILE(r)                                                                          \
    static void trace_tile_r##r(const struct gr_tile_args *a) { trace_tile(a, r); }
TRACE_TILE(1) TRACE_TILE(2) TRACE_TILE(3) TRACE_TILE(4) TRACE_TILE(5) TRACE_TILE(6)
TRACE_TILE(7) TRACE_TILE(8) TRACE_TILE(9) TRACE_TILE(10) TRACE_TILE(11) TRACE_TILE(12)
TRACE_TILE(13) TRACE_TILE(14) TRACE_TILE(15) TRACE_TILE(16)
_Static_assert(GR_TILE_ROWS_MAX == 16, "a trace tile per row count");
static const gr_tile_fn trace_tiles[GR_TILE_ROWS_MAX] = {
    trace_tile_r1,  trace_tile_r2,  trace_tile_r3,  trace_tile_r4,
    trace_tile_r5,  trace_tile_r6,  trace_tile_r7,  trace_tile_r8,
    trace_tile_r9,  trace_tile_r10, trace_tile_r11, trace_tile_r12,
    trace_tile_r13, trace_tile_r14, trace_tile_r15, trace_tile_r16,
};

static const struct gr_variant trace_variant = {
    .name = "trace",
    .vlenb = trace_vlenb,
    .x_bytes = 4,
    .layout = GR_LAYOUT_PAIRS,
    .arrange = trace_arrange,
    .pack = trace_pack,
    .tiles = {trace_tiles, trace_tiles, trace_tiles, trace_tiles},
};

/* ---- what the runtime asks of the machine ---------------------------------------------------- */
static struct gr_settings settings = {0, 0, 0, -1};

const struct gr_variant *gr_isa_variant(void) { return &trace_variant; }
/* The replay traces BF16 plans: runtime/bf16_format.c's descriptor. */
const struct gr_format_desc *gr_format_of(uint32_t format)
{
    (void)format;
    return &gr_format_bf16;
}
const struct gr_settings *gr_settings(void) { return &settings; }
int gr_threads_get(void) { return settings.threads; }
size_t gr_panel_width(void) { return PANEL; }

/* The scratch after the caller's buffers, at scratch_at, and where a piece's parts start
 * (set by main). */
static uint64_t scratch_at;
static size_t piece_parts[GR_DRIVE_SCRATCH_PARTS + 1];
int __wrap_gr_scratch_take(struct gr_scratch *s, size_t shared, size_t count, size_t each);
int __wrap_gr_scratch_take(struct gr_scratch *s, size_t shared, size_t count, size_t each)
{
    s->block = NULL;
    s->shared_bytes = gr_align_up(shared);
    s->piece_bytes = gr_align_up(each);
    /* main's mapping holds the caller's buffers up to the page scratch_at is in */
    const uint64_t bytes = s->shared_bytes + count * s->piece_bytes;
    const uint64_t from = (scratch_at + PAGE - 1) / PAGE * PAGE;
    if (scratch_at + bytes > from &&
        mmap((void *)(uintptr_t)from, scratch_at + bytes - from, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE | MAP_NORESERVE, -1,
             0) != (void *)(uintptr_t)from)
        return -1;
    s->base = (char *)(uintptr_t)scratch_at;
    add_range(scratch_at, s->shared_bytes, B_X_COPY);
    if (gr_align_up(piece_parts[GR_DRIVE_SCRATCH_PARTS]) != s->piece_bytes) {
        fprintf(stderr, "driver_replay: a piece of %zu bytes, %zu expected\n", s->piece_bytes,
                gr_align_up(piece_parts[GR_DRIVE_SCRATCH_PARTS]));
        exit(1);
    }
    for (size_t i = 0; i < count; i++)
        for (int p = 0; p < GR_DRIVE_SCRATCH_PARTS; p++)
            add_range(scratch_at + s->shared_bytes + i * s->piece_bytes + piece_parts[p],
                      piece_parts[p + 1] - piece_parts[p], B_PARTIALS + p);
    return 0;
}

/* Keeps the scalars of a participant's mirror of its cluster's L2 in step with the others'. */
static void enter(struct part *r)
{
    r->sim.l2[0].clock = r->l2->clock;
    r->sim.l2[0].fills = r->l2->fills;
    r->sim.l2[0].writebacks = r->l2->writebacks;
}

static void leave(struct part *r)
{
    r->l2->clock = r->sim.l2[0].clock;
    r->l2->fills = r->sim.l2[0].fills;
    r->l2->writebacks = r->sim.l2[0].writebacks;
}

static void (*task_fn)(void *ctx, size_t i);
static void *task_ctx;

static void part_main(void)
{
    const int i = current;
    task_fn(task_ctx, (size_t)i);
    flush_runs();
    parts[i].finished = 1;
}

/* The participants 0 .. count - 1 as coroutines, each QUANTUM accesses in turn, until all are
 * done (the runtime's barrier). */
void gr_parallel_for(size_t count, void (*fn)(void *ctx, size_t i), void *ctx)
{
    static char stacks[MAX_PARTS][1 << 18];
    if (count > (size_t)part_count) {
        fprintf(stderr, "driver_replay: %zu participants, %d expected\n", count, part_count);
        exit(1);
    }
    task_fn = fn;
    task_ctx = ctx;
    for (size_t i = 0; i < count; i++) {
        struct part *r = &parts[i];
        r->finished = 0;
        getcontext(&r->ctx);
        r->ctx.uc_stack.ss_sp = stacks[i];
        r->ctx.uc_stack.ss_size = sizeof stacks[i];
        r->ctx.uc_link = &scheduler;
        makecontext(&r->ctx, part_main, 0);
    }
    for (int alive = 1; alive;) {
        alive = 0;
        for (size_t i = 0; i < count; i++)
            if (!parts[i].finished) {
                alive = 1;
                current = (int)i;
                enter(&parts[i]);
                swapcontext(&scheduler, &parts[i].ctx);
                leave(&parts[i]);
            }
    }
    current = -1;
}

/* ---- the call ------------------------------------------------------------------------------- */
static uint64_t align64(uint64_t a) { return (a + 63) / 64 * 64; }

/* Bytes past a page where PLACEMENT puts a buffer of `element`-byte elements (placement.h:
 * malloc 16, page+B B rounded down to the element), or 0 for aligned; -1 when it is none. */
static int placement_offset(const char *placement, uint64_t element, uint64_t *offset)
{
    char *end;
    *offset = 0;
    if (!strcmp(placement, "aligned"))
        return 0;
    if (!strcmp(placement, "malloc")) {
        *offset = 16;
        return 0;
    }
    if (strncmp(placement, "page+", 5) || placement[5] < '0' || placement[5] > '9')
        return -1;
    unsigned long b = strtoul(placement + 5, &end, 10);
    if (*end || b >= PAGE || b % 2)
        return -1;
    *offset = b / element * element;
    return 0;
}

/* The plan's blocking from the generator's, field by field as the emitter writes it. */
static struct gr_blocking plan_blocking(const struct blocking *b)
{
    struct gr_blocking g = {.order = (uint32_t)b->order};
#define PLAN_FIELD_(name, value, brk, doc) g.name = (uint32_t)(value);
    BLOCKING_FIELDS(PLAN_FIELD_)
#undef PLAN_FIELD_
    return g;
}

int main(int argc, char **argv)
{
    const char *const placement_default = "aligned";
    const char *placement = placement_default, *x_arg = "plan", *rounds_arg = "plan";
    const char *x_placement = NULL;
    uint64_t off_x = 0, off_w = 0, off_y = 0;
    unsigned long threads = 1, skew = 0;
    int bad = 0;
    for (int i = 9; i < argc; i++) {
        if (!strncmp(argv[i], "threads=", 8))
            threads = strtoul(argv[i] + 8, NULL, 10);
        else if (!strncmp(argv[i], "x=", 2))
            x_arg = argv[i] + 2;
        else if (!strncmp(argv[i], "x_at=", 5))
            x_placement = argv[i] + 5;
        else if (!strncmp(argv[i], "rounds=", 7))
            rounds_arg = argv[i] + 7;
        else if (!strncmp(argv[i], "skew=", 5))
            skew = strtoul(argv[i] + 5, NULL, 10);
        else if (placement == placement_default)
            placement = argv[i];
        else
            bad = 1;
    }
    if (argc < 9 || bad ||
        (strcmp(rounds_arg, "plan") && strcmp(rounds_arg, "0") && strcmp(rounds_arg, "1")) ||
        (strcmp(argv[4], "strips") && strcmp(argv[4], "tiles")) ||
        (strcmp(argv[7], "packed") && strcmp(argv[7], "plain")) ||
        placement_offset(x_placement ? x_placement : placement, 2, &off_x) ||
        placement_offset(placement, 2, &off_w) ||
        placement_offset(placement, 4, &off_y) || threads < 1 || threads > MAX_PARTS ||
        (strcmp(x_arg, "plan") && strcmp(x_arg, "none") && strcmp(x_arg, "own") &&
         strcmp(x_arg, "shared"))) {
        fprintf(stderr, "usage: %s M N K strips|tiles KC NC packed|plain L2_KB "
                        "[aligned|malloc|page+B (B even, below %d)] [x_at=PLACEMENT] "
                        "[threads=1..%d] [x=plan|none|own|shared] [rounds=plan|0|1] [skew=S]\n",
                argv[0], PAGE, MAX_PARTS);
        return 2;
    }
    const uint64_t m = strtoull(argv[1], NULL, 10), n = strtoull(argv[2], NULL, 10),
                   k = strtoull(argv[3], NULL, 10), kc = strtoull(argv[5], NULL, 10),
                   nc = strtoull(argv[6], NULL, 10), l2_kb = strtoull(argv[8], NULL, 10);
    const int tiles_outer = !strcmp(argv[4], "tiles"), plain = !strcmp(argv[7], "plain");
    if (!m || m > 128 || !n || !k || !kc || kc % 2 || !nc || nc % PANEL || !l2_kb ||
        n > UINT32_MAX || k > UINT32_MAX || kc > UINT32_MAX || nc > UINT32_MAX) {
        fprintf(stderr, "driver_replay: M in 1 .. 128, N, K, L2_KB positive, KC even, NC a "
                        "multiple of %d\n", PANEL);
        return 2;
    }
    settings.threads = (int)threads;

    /* The plan: the generator's tile for a bucket of M rows, the blocking given, and the
     * generator's X-copy and rounds fields for it (blocking_x_copy), for a core alone with one
     * thread, else for the CLUSTER cores of an L2; unless forced. */
    const struct tile t = tile_choose((unsigned)m);
    struct blocking b = {.order = tiles_outer ? ORDER_TILES : ORDER_STRIPS, .k_block = kc,
                         .col_block = nc};
    b.x_copy = blocking_x_copy((unsigned)m, n, k, nc, threads > 1 ? CLUSTER : 1);
    if (strcmp(x_arg, "plan")) {
        const int none = !strcmp(x_arg, "none");
        b.x_copy.rows = none ? 0 : 1;
        b.x_copy.cols = 0;
        b.x_copy.stride = 2;
        b.x_copy.shared = !strcmp(x_arg, "shared");
    }
    if (strcmp(rounds_arg, "plan"))
        b.x_copy.rounds = !strcmp(rounds_arg, "1") ? CLUSTER : 0;
    struct gr_plan plan = {.name = "replay", .n = (uint32_t)n, .k = (uint32_t)k,
                           .bucket = (uint32_t)m, .format = GR_FORMAT_BF16, .tile_rows = t.rows,
                           .lmul = t.lmul, .tile_rows_least = tile_rows_least(t)};
    plan.blocking[GR_L2_ALONE] = plan.blocking[GR_L2_SHARED] = plan_blocking(&b);
    plan.plain[GR_L2_ALONE] = plan.plain[GR_L2_SHARED] = plan.blocking[GR_L2_ALONE];

    /* The caller's buffers apart, each where the placement puts it in its first page (the
     * same layout whatever the placement, so that only the offsets differ), then the call's
     * scratch. */
    size_t piece_cols;
    part_count = (int)gr_split_columns(n, PANEL, 0, &piece_cols);
    const uint64_t np = (n + PANEL - 1) / PANEL * PANEL;
    const uint64_t sizes[3] = {np * ((k + 1) / 2) * 4, m * k * 2, m * n * 4};
    const uint64_t offsets[3] = {plain ? off_w : 0, off_x, off_y};
    uint64_t at = CALL_AT, base[3];
    for (int i = 0; i < 3; i++) {
        base[i] = at + offsets[i];
        add_range(base[i], sizes[i], i);
        at = align64(at + sizes[i]) + (1u << 20) + PAGE;
    }
    if (mmap((void *)(uintptr_t)CALL_AT, (at - CALL_AT + PAGE - 1) / PAGE * PAGE, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE | MAP_NORESERVE, -1,
             0) != (void *)(uintptr_t)CALL_AT) {
        perror("driver_replay: mmap");
        return 2;
    }
    scratch_at = at;

    static struct cache_level l2s[MAX_PARTS / CLUSTER];
    const char *why = NULL;
    for (int i = 0; i < (part_count + CLUSTER - 1) / CLUSTER; i++)
        if (cache_level_init(&l2s[i], l2_kb * 1024, 16, 64, &why)) {
            fprintf(stderr, "driver_replay: %s\n", why);
            return 2;
        }
    for (int i = 0; i < part_count; i++) {
        struct part *r = &parts[i];
        if (cache_level_init(&r->sim.l1, 32 * 1024, 8, 64, &why)) {
            fprintf(stderr, "driver_replay: %s\n", why);
            return 2;
        }
        r->l2 = &l2s[i / CLUSTER];
        r->sim.l2[0] = *r->l2; /* the same lines; enter() and leave() carry the clock */
        r->sim.l2_count = 1;
        cache_sim_reset(&r->sim);
        r->sim.hook = on_dram;
        r->quantum = QUANTUM + (uint64_t)i * skew;
    }

    struct gr_call call = {0};
    call.x = (const uint16_t *)(uintptr_t)base[B_X];
    call.m = m;
    call.ldx = k;
    call.w.n = n;
    call.w.k = k;
    if (plain) {
        call.w.plain = (const uint16_t *)(uintptr_t)base[B_W];
        call.w.ldw = k;
    } else {
        call.w.packed = (const void *)(uintptr_t)base[B_W];
        call.w.layout = GR_LAYOUT_PAIRS;
        call.w.panel_width = PANEL;
    }
    call.y = (void *)(uintptr_t)base[B_Y];
    call.ldy = n;

    /* What the driver does with X for this plan, by its own rule. */
    struct gr_drive probe;
    gr_drive_init(&probe, &plan, &trace_variant, threads > 1 ? GR_L2_SHARED : GR_L2_ALONE,
                  &call);
    gr_drive_rounds(&probe, (size_t)part_count); /* as plan_call.c widens the column blocks */
    gr_drive_scratch_parts(&probe, piece_parts);
    const char *x_copy = gr_drive_shares_x(&probe, n) ? "shared"
                         : gr_drive_copies_x(&probe, 0, piece_cols < n ? piece_cols : n)
                             ? "own"
                             : "none";

    if (gr_run_plan(&call, &plan) != GEMM_RVV_OK) {
        fprintf(stderr, "driver_replay: the call failed (no scratch at %#llx)\n",
                (unsigned long long)scratch_at);
        return 2;
    }
    flush_runs();
    for (int i = 0; i < part_count; i++) {
        enter(&parts[i]);
        cache_sim_flush(&parts[i].sim);
        leave(&parts[i]);
    }
    double min = (double)sizes[B_W] + (double)sizes[B_X] + (double)sizes[B_Y], total = 0;
    for (int i = 0; i < B_END; i++)
        total += traffic.filled[i] + traffic.written[i];
    printf("ratio=%.3f dram_bytes=%.0f min_bytes=%.0f placement=%s%s%s threads=%d x_copy=%s "
           "rounds=%u skew=%lu\n", total / min, total, min, placement,
           x_placement ? " x_at=" : "", x_placement ? x_placement : "", part_count, x_copy,
           plan.blocking[0].col_rounds, skew);
    for (int i = 0; i < B_END; i++)
        if (traffic.filled[i] + traffic.written[i] > 0)
            printf("  %-8s %8.2f MiB filled %8.2f MiB written back\n", buffer_names[i],
                   traffic.filled[i] / 1048576, traffic.written[i] / 1048576);
    return 0;
}
