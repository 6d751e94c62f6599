/* gemm_rvv_attention: the checks, then the one loop nest of attention for kernels and fallback
 * alike. The (query row, head) pairs of each KV head are cut into tiles of `pairs` pairs (the
 * plan's, else 1), each tile computed whole by one thread over every block of the cache, so
 * the bits depend on neither the thread count nor the tiles (docs/numerics.md, "Attention"). */
#include <math.h>

#include "attention.h"
#include "attn_exp.h"
#include "q8_0_scale.h" /* gr_fp16_to_f32 */
#include "isa.h"
#include "threads.h"

/* The plan of the call's shape for n_q rows: the smallest bucket that holds them, else the
 * largest; NULL when the build has none. */
const struct gr_attn_plan *gr_attention_plan(const gemm_rvv_attention_args *a)
{
    const struct gr_attn_plan *best = NULL;
    const uint32_t k_type = a->k_type == GEMM_RVV_BF16 ? GR_KV_BF16 : GR_KV_F16;
    const uint32_t v_type = a->v_type == GEMM_RVV_BF16 ? GR_KV_BF16 : GR_KV_F16;
    for (size_t i = 0; i < gr_attn_registry_count; i++) {
        const struct gr_attn_plan *p = gr_attn_registry[i];
        if (p->head_dim != a->head_dim || p->q_heads != a->q_heads ||
            p->kv_heads != a->kv_heads || p->k_type != k_type || p->v_type != v_type)
            continue;
        if (!best || (best->n_q < a->n_q && p->n_q > best->n_q) ||
            (p->n_q >= a->n_q && p->n_q < best->n_q))
            best = p;
    }
    return best;
}

struct attention_job {
    struct gr_attention at;
    const struct gr_attn_tiles *tiles;
    size_t pairs;          /* of a tile */
    size_t tiles_per_head; /* of a KV head */
    size_t shared;         /* tiles of one work item, sharing each block's widened K */
    size_t items_per_head;
};

/* One tile's state across the blocks. */
struct tile_state {
    struct gr_attn_args args;
    struct gr_attn_block b;
    float m[GR_ATTN_PAIRS_MAX];
    const uint16_t *mask_row[GR_ATTN_PAIRS_MAX];
    float *out[GR_ATTN_PAIRS_MAX];
};

/* Accumulators of one work item (on its thread's stack): one tile's at any head dim; a work
 * item shares no more tiles than fit (gr_attention_run). */
#define ACC_FLOATS (GR_ATTN_PAIRS_MAX * GEMM_RVV_ATTENTION_MAX_HEAD_DIM)

/* Tile t of KV head g: its pairs (in order of row, then head in the group) set up. */
static void gr_attention_tile_begin(const struct attention_job *job, size_t g, size_t t,
                                    struct tile_state *st, float *acc, float *kt, float *vt)
{
    const struct gr_attention *at = &job->at;
    const gemm_rvv_attention_args *a = at->a;
    const size_t d = (size_t)a->head_dim, p0 = t * job->pairs;
    const size_t all = (size_t)a->n_q * at->group;
    const size_t count = all - p0 < job->pairs ? all - p0 : job->pairs;
    st->args = (struct gr_attn_args){
        .pairs = count, .head_dim = d, .k_stride = (size_t)a->k_pos_stride,
        .k_type = a->k_type == GEMM_RVV_BF16 ? GR_KV_BF16 : GR_KV_F16,
        .v_stride = (size_t)a->v_pos_stride,
        .v_dim_stride = a->v_dim_stride ? (size_t)a->v_dim_stride : 1,
        .v_type = a->v_type == GEMM_RVV_BF16 ? GR_KV_BF16 : GR_KV_F16,
        .dot_scale = at->dot_scale, .softcap = a->logit_softcap, .kt = kt, .vt = vt};
    for (size_t r = 0; r < count; r++) {
        const size_t row = (p0 + r) / at->group, head = g * at->group + (p0 + r) % at->group;
        st->args.q[r] = a->q + row * (size_t)a->q_row_stride + head * (size_t)a->q_head_stride;
        st->args.slope[r] = gr_attention_slope(at, (uint32_t)head);
        st->mask_row[r] = a->mask ? a->mask + row * (size_t)a->mask_row_stride : NULL;
        st->out[r] = a->out + row * (size_t)a->out_row_stride + head * (size_t)a->out_head_stride;
        st->b.acc[r] = acc + r * d;
        for (size_t i = 0; i < d; i++)
            st->b.acc[r][i] = 0.0f;
        st->m[r] = -INFINITY;
        st->b.sum[r] = 0.0f;
    }
}

/* Whether some position of the block is live for some pair of the tile: its mask term, as the
 * tiles compute it, is not -Inf. A live block is found at its first live position. */
static int gr_attention_block_live(const struct gr_attn_args *a)
{
    for (size_t r = 0; r < a->pairs; r++)
        for (size_t j = 0; j < a->n; j++)
            if (a->slope[r] * gr_fp16_to_f32(a->mask[r][j]) != -INFINITY)
                return 1;
    return 0;
}

/* One block of one tile: score, the running maxima, weights, PV (from vt when the block's V
 * was widened for the tiles that share it). */
static void gr_attention_tile_block(const struct gr_attn_tiles *tiles, struct tile_state *st,
                                    int from_vt)
{
    struct gr_attn_args *args = &st->args;
    struct gr_attn_block *b = &st->b;
    tiles->score[args->pairs - 1](args, b);
    uint32_t any = 0;
    for (size_t r = 0; r < args->pairs; r++) {
        any |= b->live[r];
        b->c[r] = 1.0f;
        if (!b->live[r])
            continue; /* a block without a live position changes nothing */
        const float new_max = b->max[r] > st->m[r] ? b->max[r] : st->m[r];
        b->c[r] = gr_exp_f32(st->m[r] - new_max);
        b->sum[r] = b->sum[r] * b->c[r];
        b->max[r] = st->m[r] = new_max;
    }
    if (!any)
        return;
    tiles->weights(args, b);
    if (from_vt)
        tiles->pv_vt[args->pairs - 1](args, b);
    else
        tiles->pv[args->v_type][args->pairs - 1](args, b);
}

/* Tiles t0 .. t1 of KV head g over every block of the cache, K (and V for several tiles)
 * widened once a block. */
static void gr_attention_tiles(const struct attention_job *job, size_t g, size_t t0, size_t t1)
{
    const gemm_rvv_attention_args *a = job->at.a;
    const size_t n_kv = (size_t)a->n_kv, count = t1 - t0;
    const uint32_t k_type = a->k_type == GEMM_RVV_BF16, v_type = a->v_type == GEMM_RVV_BF16;
    /* The vector tiles' widened K and V of a block. */
    float kt[GR_ATTN_KERNEL_HEAD_DIM_MAX * GR_ATTN_BLOCK], vt[GR_ATTN_BLOCK * GR_ATTN_KERNEL_HEAD_DIM_MAX];
    float acc[ACC_FLOATS];
    struct tile_state st[GR_ATTN_SHARED_MAX];
    for (size_t t = 0; t < count; t++)
        gr_attention_tile_begin(job, g, t0 + t, &st[t],
                                acc + t * job->pairs * (size_t)a->head_dim, kt, vt);
    for (size_t p = 0; p < n_kv; p += GR_ATTN_BLOCK) {
        const size_t n = n_kv - p < GR_ATTN_BLOCK ? n_kv - p : GR_ATTN_BLOCK;
        const uint16_t *k = a->k + g * (size_t)a->k_head_stride + p * (size_t)a->k_pos_stride;
        const uint16_t *v = a->v + g * (size_t)a->v_head_stride + p * (size_t)a->v_pos_stride;
        for (size_t t = 0; t < count; t++) {
            st[t].args.n = n;
            st[t].args.k = k;
            st[t].args.v = v;
            for (size_t r = 0; r < st[t].args.pairs; r++)
                st[t].args.mask[r] = st[t].mask_row[r] ? st[t].mask_row[r] + p : NULL;
        }
        /* Tiles whose pairs have every position of the block masked (a causal prompt's later
         * blocks) skip it, as a block without a live position changes nothing. */
        size_t live[GR_ATTN_SHARED_MAX], n_live = 0;
        for (size_t t = 0; t < count; t++)
            if (!st[t].args.mask[0] || gr_attention_block_live(&st[t].args))
                live[n_live++] = t;
        if (n_live == 0)
            continue;
        /* V widened once into vt for the tiles that share the block, and always when its d
         * is not adjacent (the pv tiles read rows of adjacent elements). */
        const int from_vt = n_live > 1 || st[live[0]].args.v_dim_stride != 1;
        job->tiles->kt[k_type](&st[live[0]].args);
        if (from_vt)
            job->tiles->vt[v_type](&st[live[0]].args);
        for (size_t i = 0; i < n_live; i++)
            gr_attention_tile_block(job->tiles, &st[live[i]], from_vt);
    }
    for (size_t t = 0; t < count; t++)
        for (size_t r = 0; r < st[t].args.pairs; r++)
            for (size_t i = 0; i < (size_t)a->head_dim; i++)
                st[t].out[r][i] = st[t].b.sum[r] == 0.0f ? 0.0f
                                                         : st[t].b.acc[r][i] / st[t].b.sum[r];
}

static void gr_attention_item(void *ctx, size_t i)
{
    const struct attention_job *job = ctx;
    const size_t g = i / job->items_per_head, t0 = i % job->items_per_head * job->shared;
    const size_t t1 = t0 + job->shared < job->tiles_per_head ? t0 + job->shared
                                                              : job->tiles_per_head;
    gr_attention_tiles(job, g, t0, t1);
}

void gr_attention_run(const gemm_rvv_attention_args *a, const struct gr_attn_tiles *tiles,
                      size_t pairs, size_t shared)
{
    struct attention_job job = {.tiles = tiles, .pairs = pairs, .shared = shared};
    gr_attention_prepare(a, &job.at);
    const size_t fit = ACC_FLOATS / (pairs * (size_t)a->head_dim);
    if (job.shared > fit)
        job.shared = fit; /* the accumulators of the work item's tiles on its stack */
    const size_t all = (size_t)a->n_q * job.at.group;
    job.tiles_per_head = (all + pairs - 1) / pairs;
    job.items_per_head = (job.tiles_per_head + job.shared - 1) / job.shared;
    gr_threads_call_begin(); /* a resize waits for the call (gemm_rvv_set_threads) */
    gr_parallel_for((size_t)a->kv_heads * job.items_per_head, gr_attention_item, &job);
    gr_threads_call_end();
}

gemm_rvv_status gemm_rvv_attention(const gemm_rvv_attention_args *args)
{
    if (gr_isa_status() != GEMM_RVV_OK)
        return gr_isa_status();
    gemm_rvv_status s = gr_attention_check(args);
    if (s != GEMM_RVV_OK)
        return s;
    const struct gr_attn_plan *plan = gr_attention_plan(args);
    const int vector = plan && gr_attn_tiles_base.weights && gemm_rvv_kernels_active() &&
                       args->head_dim <= GR_ATTN_KERNEL_HEAD_DIM_MAX;
    gr_attention_run(args, vector ? &gr_attn_tiles_base : &gr_attn_tiles_scalar,
                     plan ? plan->pairs : 1, plan && plan->shared ? plan->shared : 1);
    return GEMM_RVV_OK;
}
