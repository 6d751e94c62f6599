/* plugin_api's groups for plugins/ggml/compute.c: graphs: a MUL_MAT of no rows, unselected
 * branches, a transformer layer alone and through ggml_backend_sched. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- group empty: a MUL_MAT with no rows ---- */

/* By weight wt: g[0] the 0-row MUL_MAT alone, g[1] one beside a 3-row one (*y1). */
static void empty_graphs(struct ggml_context *ctx, struct ggml_context *gctx,
                         struct ggml_tensor *wt, struct ggml_tensor *x0, struct ggml_tensor *x1,
                         struct ggml_cgraph *g[2], struct ggml_tensor **y1)
{
    struct ggml_tensor *y0 = ggml_mul_mat(ctx, wt, x0);
    ggml_set_name(y0, "y_empty");
    g[0] = ggml_new_graph(gctx);
    ggml_build_forward_expand(g[0], y0);
    struct ggml_tensor *y0b = ggml_mul_mat(ctx, wt, x0);
    *y1 = ggml_mul_mat(ctx, wt, x1);
    ggml_set_name(y0b, "y_empty_beside");
    ggml_set_name(*y1, "y_rows");
    g[1] = ggml_new_graph(gctx);
    ggml_build_forward_expand(g[1], y0b);
    ggml_build_forward_expand(g[1], *y1);
}

static void empty_body(struct weight *w, uint16_t *bits)
{
    const int64_t n = w->t->ne[1], k = w->t->ne[0], m = 3;
    static const char *const what[2] = {"a graph of one MUL_MAT with 0 rows",
                                        "a 0-row MUL_MAT beside a 3-row one"};

    struct ggml_context *ctx = pa_ctx_new(16, 0);
    struct ggml_context *gctx = pa_ctx_new(0, 4);
    struct ggml_tensor *wc = ggml_new_tensor_2d(ctx, GGML_TYPE_BF16, k, n);
    struct ggml_tensor *x0 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, 0);
    struct ggml_tensor *x1 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, m);
    struct ggml_cgraph *g[2], *gc[2];
    struct ggml_tensor *y1, *y1c;
    empty_graphs(ctx, gctx, w->t, x0, x1, g, &y1);
    empty_graphs(ctx, gctx, wc, x0, x1, gc, &y1c); /* the CPU's, on a copy in a CPU buffer */
    ggml_backend_buffer_t abuf = pa_alloc_in(ctx, pa_buft_cpu, false);
    if (abuf) {
        float xs[256 * 3], ys[16 * 3], ref[16 * 3];
        ggml_backend_tensor_set(wc, bits, 0, ggml_nbytes(wc));
        pa_fill_f32(xs, (size_t)(k * m), 1.0f);
        ggml_backend_tensor_set(x1, xs, 0, ggml_nbytes(x1));
        if (!ggml_backend_dev_supports_op(pa_dev_rvv, ggml_graph_node(g[0], 0)))
            pa_fail("GEMM_RVV does not support a MUL_MAT with 0 rows (the CPU does: %d)",
                    ggml_backend_dev_supports_op(pa_dev_cpu, ggml_graph_node(gc[0], 0)));
        memset(ys, 0, sizeof ys);
        ggml_backend_tensor_set(y1, ys, 0, sizeof ys);
        for (int i = 0; i < 2; i++) {
            enum ggml_status s = pa_compute(pa_be_cpu, gc[i]);
            if (s != GGML_STATUS_SUCCESS)
                pa_fail("test premise: on %s the CPU backend returned %s", what[i], pa_status_name(s));
            s = pa_compute(pa_be_rvv, g[i]);
            if (s != GGML_STATUS_SUCCESS)
                pa_fail("%s: GEMM_RVV's graph_compute returned %s", what[i], pa_status_name(s));
            else if (i == 1) {
                ggml_backend_tensor_get(y1c, ref, 0, sizeof ref);
                ggml_backend_tensor_get(y1, ys, 0, sizeof ys);
                pa_expect_close("the 3-row MUL_MAT beside a 0-row one", ys, ref, 16 * 3, 16);
                pa_check_product(w->t, bits, m, "after the 0-row product");
            }
        }
        ggml_backend_buffer_free(abuf);
    }
    ggml_free(gctx);
    ggml_free(ctx);
}

void group_empty(void)
{
    pa_weight_case("empty product", 16, 256, empty_body);
}

/* ---- group select: ggml_build_forward_select's unselected branches are not computed ---- */

#define SENTINEL 12345.0f

/* The two branches by weight wt: [0] the unselected one (a MUL_MAT by xa, or pa + pb), [1]
 * the selected MUL_MAT by xb; a graph of them through ggml_build_forward_select. */
static struct ggml_cgraph *select_graph(struct ggml_context *ctx, struct ggml_context *gctx,
                                        struct ggml_tensor *wt, struct ggml_tensor *const in[4],
                                        bool unselected_is_add, struct ggml_tensor *br[2])
{
    br[0] = unselected_is_add ? ggml_add(ctx, in[2], in[3]) : ggml_mul_mat(ctx, wt, in[0]);
    br[1] = ggml_mul_mat(ctx, wt, in[1]);
    ggml_set_name(br[0], "unselected");
    ggml_set_name(br[1], "selected");
    struct ggml_cgraph *g = ggml_new_graph(gctx);
    if (ggml_build_forward_select(g, br, 2, 1) != br[1])
        pa_fail("ggml_build_forward_select did not return the selected branch");
    if (br[0]->flags & GGML_TENSOR_FLAG_COMPUTE)
        pa_fail("test premise: the unselected branch carries GGML_TENSOR_FLAG_COMPUTE");
    return g;
}

/* The unselected branch's output pre-filled with SENTINEL: on GEMM_RVV the sentinel must stay
 * and the selected output match the CPU backend's (on a copy of the weight in a CPU buffer:
 * the CPU cannot read a GEMM_RVV buffer's packed bytes). */
static void select_body(struct weight *w, const uint16_t *bits, bool unselected_is_add)
{
    const int64_t n = w->t->ne[1], k = w->t->ne[0], m = 3;
    const char *kind = unselected_is_add ? "ADD" : "MUL_MAT";

    struct ggml_context *ctx = pa_ctx_new(16, 0);
    struct ggml_tensor *wc = ggml_new_tensor_2d(ctx, GGML_TYPE_BF16, k, n);
    struct ggml_tensor *in[4] = {
        ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, m), ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, m),
        ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n, m), ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n, m),
    };
    struct ggml_context *gctx = pa_ctx_new(0, 2);
    struct ggml_tensor *br[2], *brc[2];
    struct ggml_cgraph *g = select_graph(ctx, gctx, w->t, in, unselected_is_add, br);
    struct ggml_cgraph *gc = select_graph(ctx, gctx, wc, in, unselected_is_add, brc);
    ggml_backend_buffer_t abuf = pa_alloc_in(ctx, pa_buft_cpu, false);
    if (abuf) {
        float xs[256 * 3], sent[16 * 3], got[16 * 3], ref[16 * 3];
        ggml_backend_tensor_set(wc, bits, 0, ggml_nbytes(wc));
        for (size_t i = 0; i < 4; i++) {
            pa_fill_f32(xs, (size_t)ggml_nelements(in[i]), 1.0f);
            ggml_backend_tensor_set(in[i], xs, 0, ggml_nbytes(in[i]));
        }
        for (size_t i = 0; i < 16 * 3; i++)
            sent[i] = SENTINEL;
        /* The premise on the CPU backend first: it leaves the unselected output alone. */
        ggml_backend_tensor_set(brc[0], sent, 0, sizeof sent);
        enum ggml_status s = pa_compute(pa_be_cpu, gc);
        ggml_backend_tensor_get(brc[0], got, 0, sizeof got);
        ggml_backend_tensor_get(brc[1], ref, 0, sizeof ref);
        if (s != GGML_STATUS_SUCCESS || memcmp(got, sent, sizeof got) != 0)
            pa_fail("test premise: on the CPU backend the unselected %s ran (status %s)", kind,
                    pa_status_name(s));
        /* Then on GEMM_RVV. */
        ggml_backend_tensor_set(br[0], sent, 0, sizeof sent);
        s = pa_compute(pa_be_rvv, g);
        if (s != GGML_STATUS_SUCCESS) {
            pa_fail("GEMM_RVV's graph_compute returned %s on a graph whose unselected branch is "
                    "a%s %s", pa_status_name(s), unselected_is_add ? "n" : "", kind);
        } else {
            ggml_backend_tensor_get(br[0], got, 0, sizeof got);
            for (size_t i = 0; i < 16 * 3; i++)
                if (got[i] != SENTINEL) {
                    pa_fail("GEMM_RVV computed the unselected %s: element %zu is %g, the sentinel "
                            "%g was there", kind, i, (double)got[i], (double)SENTINEL);
                    break;
                }
            ggml_backend_tensor_get(br[1], got, 0, sizeof got);
            pa_expect_close("the selected MUL_MAT", got, ref, 16 * 3, 16);
        }
        ggml_backend_buffer_free(abuf);
    }
    ggml_free(gctx);
    ggml_free(ctx);
}

static void select_mul_mat_body(struct weight *w, uint16_t *bits)
{
    select_body(w, bits, false);
}

static void select_add_body(struct weight *w, uint16_t *bits)
{
    select_body(w, bits, true);
}

void group_select(void)
{
    pa_weight_case("unselected branch MUL_MAT", 16, 256, select_mul_mat_body);
    pa_weight_case("unselected branch ADD", 16, 256, select_add_body);
}

/* ---- the layer graph (groups layer and splits) ---- */

enum { L_EMBD = 64, L_HEAD = 4, L_HEAD_KV = 2, L_HD = 16, L_FF = 128, L_TOK = 7, L_VOCAB = 32 };

struct layer_data { /* the values, shared by every copy of the layer */
    uint16_t tok_embd[L_VOCAB * L_EMBD];
    float attn_norm[L_EMBD], ffn_norm[L_EMBD];
    uint16_t wq[L_EMBD * L_EMBD], wk[L_HEAD_KV * L_HD * L_EMBD], wv[L_HEAD_KV * L_HD * L_EMBD],
        wo[L_EMBD * L_EMBD], wg[L_FF * L_EMBD], wu[L_FF * L_EMBD], wd[L_EMBD * L_FF];
    int32_t tokens[L_TOK], pos[L_TOK];
    float mask[L_TOK * L_TOK];
};

struct layer { /* one copy: its tensors and buffers */
    struct ggml_context *lin_ctx, *other_ctx, *graph_ctx;
    ggml_backend_buffer_t lin_buf, other_buf;
    struct ggml_tensor *tok_embd, *attn_norm, *ffn_norm, *wq, *wk, *wv, *wo, *wg, *wu, *wd;
    struct ggml_tensor *tokens, *pos, *mask, *out;
    struct ggml_cgraph *graph;
};

static void layer_data_fill(struct layer_data *d)
{
    pa_fill_bf16(d->tok_embd, sizeof d->tok_embd / 2, 1.0f);
    for (int i = 0; i < L_EMBD; i++) {
        d->attn_norm[i] = 1.0f + 0.1f * pa_frand();
        d->ffn_norm[i] = 1.0f + 0.1f * pa_frand();
    }
    pa_fill_bf16(d->wq, sizeof d->wq / 2, 0.2f);
    pa_fill_bf16(d->wk, sizeof d->wk / 2, 0.2f);
    pa_fill_bf16(d->wv, sizeof d->wv / 2, 0.2f);
    pa_fill_bf16(d->wo, sizeof d->wo / 2, 0.2f);
    pa_fill_bf16(d->wg, sizeof d->wg / 2, 0.2f);
    pa_fill_bf16(d->wu, sizeof d->wu / 2, 0.2f);
    pa_fill_bf16(d->wd, sizeof d->wd / 2, 0.2f);
    for (int i = 0; i < L_TOK; i++) {
        d->tokens[i] = (int32_t)(pa_rng_next() % L_VOCAB);
        d->pos[i] = i;
        for (int j = 0; j < L_TOK; j++)
            d->mask[i * L_TOK + j] = j <= i ? 0.0f : -INFINITY;
    }
}

/* Builds the layer: Linear weights in lin_buft, the embedding, norms and inputs in a CPU
 * buffer, the graph in graph_ctx (its intermediates unallocated). */
static bool layer_new(struct layer *l, const struct layer_data *d, ggml_backend_buffer_type_t lin_buft)
{
    memset(l, 0, sizeof *l);
    const struct {
        struct ggml_tensor **t;
        bool linear; /* in lin_buft, else in a CPU buffer */
        enum ggml_type type;
        int64_t ne0, ne1;
        const char *name;
        const void *data;
        size_t size;
    } specs[] = {
        {&l->wq, true, GGML_TYPE_BF16, L_EMBD, L_EMBD, "blk.0.attn_q.weight", d->wq, sizeof d->wq},
        {&l->wk, true, GGML_TYPE_BF16, L_EMBD, L_HEAD_KV * L_HD, "blk.0.attn_k.weight", d->wk, sizeof d->wk},
        {&l->wv, true, GGML_TYPE_BF16, L_EMBD, L_HEAD_KV * L_HD, "blk.0.attn_v.weight", d->wv, sizeof d->wv},
        {&l->wo, true, GGML_TYPE_BF16, L_EMBD, L_EMBD, "blk.0.attn_output.weight", d->wo, sizeof d->wo},
        {&l->wg, true, GGML_TYPE_BF16, L_EMBD, L_FF, "blk.0.ffn_gate.weight", d->wg, sizeof d->wg},
        {&l->wu, true, GGML_TYPE_BF16, L_EMBD, L_FF, "blk.0.ffn_up.weight", d->wu, sizeof d->wu},
        {&l->wd, true, GGML_TYPE_BF16, L_FF, L_EMBD, "blk.0.ffn_down.weight", d->wd, sizeof d->wd},
        {&l->tok_embd, false, GGML_TYPE_BF16, L_EMBD, L_VOCAB, "token_embd.weight", d->tok_embd, sizeof d->tok_embd},
        {&l->attn_norm, false, GGML_TYPE_F32, L_EMBD, 1, "blk.0.attn_norm.weight", d->attn_norm, sizeof d->attn_norm},
        {&l->ffn_norm, false, GGML_TYPE_F32, L_EMBD, 1, "blk.0.ffn_norm.weight", d->ffn_norm, sizeof d->ffn_norm},
        {&l->tokens, false, GGML_TYPE_I32, L_TOK, 1, "inp_tokens", d->tokens, sizeof d->tokens},
        {&l->pos, false, GGML_TYPE_I32, L_TOK, 1, "inp_pos", d->pos, sizeof d->pos},
        {&l->mask, false, GGML_TYPE_F32, L_TOK, L_TOK, "kq_mask", d->mask, sizeof d->mask},
    };
    const size_t n_specs = sizeof specs / sizeof *specs;
    l->lin_ctx = pa_ctx_new(n_specs, 0);
    l->other_ctx = pa_ctx_new(n_specs, 0);
    for (size_t i = 0; i < n_specs; i++) {
        struct ggml_context *c = specs[i].linear ? l->lin_ctx : l->other_ctx;
        *specs[i].t = specs[i].ne1 == 1
                          ? ggml_new_tensor_1d(c, specs[i].type, specs[i].ne0)
                          : ggml_new_tensor_2d(c, specs[i].type, specs[i].ne0, specs[i].ne1);
        ggml_set_name(*specs[i].t, specs[i].name);
    }
    l->lin_buf = pa_alloc_in(l->lin_ctx, lin_buft, true);
    l->other_buf = pa_alloc_in(l->other_ctx, pa_buft_cpu, true);
    if (!l->lin_buf || !l->other_buf)
        return false;
    for (size_t i = 0; i < n_specs; i++)
        ggml_backend_tensor_set(*specs[i].t, specs[i].data, 0, specs[i].size);

    struct ggml_context *c = l->graph_ctx = pa_ctx_new(128, 1);
    struct ggml_tensor *inp = ggml_get_rows(c, l->tok_embd, l->tokens);
    struct ggml_tensor *cur = ggml_mul(c, ggml_rms_norm(c, inp, 1e-5f), l->attn_norm);
    struct ggml_tensor *q = ggml_reshape_3d(c, ggml_mul_mat(c, l->wq, cur), L_HD, L_HEAD, L_TOK);
    struct ggml_tensor *k = ggml_reshape_3d(c, ggml_mul_mat(c, l->wk, cur), L_HD, L_HEAD_KV, L_TOK);
    struct ggml_tensor *v = ggml_reshape_3d(c, ggml_mul_mat(c, l->wv, cur), L_HD, L_HEAD_KV, L_TOK);
    q = ggml_rope_ext(c, q, l->pos, NULL, L_HD, 0, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
    k = ggml_rope_ext(c, k, l->pos, NULL, L_HD, 0, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
    q = ggml_permute(c, q, 0, 2, 1, 3);                     /* [hd, tok, head] */
    k = ggml_permute(c, k, 0, 2, 1, 3);                     /* [hd, tok, head_kv] */
    struct ggml_tensor *vt = ggml_cont(c, ggml_permute(c, v, 1, 2, 0, 3)); /* [tok, hd, head_kv] */
    struct ggml_tensor *kq = ggml_mul_mat(c, k, q);         /* F32 x F32: [tok_kv, tok, head] */
    kq = ggml_soft_max_ext(c, kq, l->mask, 1.0f / sqrtf((float)L_HD), 0.0f);
    struct ggml_tensor *kqv = ggml_mul_mat(c, vt, kq);      /* [hd, tok, head] */
    cur = ggml_cont_2d(c, ggml_permute(c, kqv, 0, 2, 1, 3), L_EMBD, L_TOK);
    cur = ggml_mul_mat(c, l->wo, cur);
    struct ggml_tensor *ffn_inp = ggml_add(c, cur, inp);
    cur = ggml_mul(c, ggml_rms_norm(c, ffn_inp, 1e-5f), l->ffn_norm);
    cur = ggml_swiglu_split(c, ggml_mul_mat(c, l->wg, cur), ggml_mul_mat(c, l->wu, cur));
    cur = ggml_mul_mat(c, l->wd, cur);
    /* SILU and MUL as separate ops too (older llama.cpp graphs), on the residual. */
    l->out = ggml_add(c, ggml_mul(c, ggml_silu(c, cur), cur), ffn_inp);
    ggml_set_name(l->out, "l_out");
    ggml_set_output(l->out);
    l->graph = ggml_new_graph(c);
    ggml_build_forward_expand(l->graph, l->out);
    return true;
}

static void layer_free(struct layer *l)
{
    if (l->lin_buf)
        ggml_backend_buffer_free(l->lin_buf);
    if (l->other_buf)
        ggml_backend_buffer_free(l->other_buf);
    ggml_free(l->graph_ctx);
    ggml_free(l->other_ctx);
    ggml_free(l->lin_ctx);
}

/* The layer computed on the CPU backend alone, every weight in CPU buffers: out gets
 * L_EMBD x L_TOK values. */
static bool layer_reference(const struct layer_data *d, float *out)
{
    struct layer l;
    bool ok = false;
    if (layer_new(&l, d, pa_buft_cpu)) {
        ggml_gallocr_t ga = ggml_gallocr_new(pa_buft_cpu);
        if (!ggml_gallocr_alloc_graph(ga, l.graph))
            pa_fail("test premise: ggml_gallocr_alloc_graph failed for the CPU reference");
        else {
            enum ggml_status s = pa_compute(pa_be_cpu, l.graph);
            if (s != GGML_STATUS_SUCCESS)
                pa_fail("test premise: the CPU backend returned %s on the layer", pa_status_name(s));
            else {
                ggml_backend_tensor_get(l.out, out, 0, ggml_nbytes(l.out));
                ok = true;
            }
        }
        ggml_gallocr_free(ga);
    }
    layer_free(&l);
    return ok;
}

/* Runs `run` on a fresh layer whose Linear weights are in a GEMM_RVV buffer, with `ref` the
 * CPU backend's output on the same values; one case named `name`. */
static void layer_case(const char *name,
                       void (*run)(struct layer *l, const float *ref, float *got))
{
    static struct layer_data d;
    static float ref[L_EMBD * L_TOK], got[L_EMBD * L_TOK];
    pa_case_begin();
    layer_data_fill(&d);
    if (layer_reference(&d, ref)) {
        struct layer l;
        if (layer_new(&l, &d, pa_buft_rvv))
            run(&l, ref, got);
        layer_free(&l);
    }
    pa_case_end("%s", name);
}

/* The layer with ggml_backend_graph_compute on the GEMM_RVV backend alone. */
static void layer_alone(struct layer *l, const float *ref, float *got)
{
    /* Which ops GEMM_RVV says it cannot run, for the message. */
    char missing[256] = "";
    size_t len = 0;
    for (int i = 0; i < ggml_graph_n_nodes(l->graph); i++) {
        struct ggml_tensor *t = ggml_graph_node(l->graph, i);
        if (!ggml_backend_dev_supports_op(pa_dev_rvv, t) && len < sizeof missing - 40 &&
            !strstr(missing, ggml_op_desc(t)))
            len += (size_t)snprintf(missing + len, sizeof missing - len, "%s%s",
                                    len ? " " : "", ggml_op_desc(t));
    }
    ggml_gallocr_t ga = ggml_gallocr_new(pa_buft_cpu);
    if (!ggml_gallocr_alloc_graph(ga, l->graph))
        pa_fail("ggml_gallocr_alloc_graph failed");
    else {
        enum ggml_status s = pa_compute(pa_be_rvv, l->graph);
        if (s != GGML_STATUS_SUCCESS)
            pa_fail("GEMM_RVV's graph_compute returned %s on the layer graph (%d nodes; "
                    "ops it says it does not support: %s)", pa_status_name(s),
                 ggml_graph_n_nodes(l->graph), missing[0] ? missing : "none");
        else {
            ggml_backend_tensor_get(l->out, got, 0, L_EMBD * L_TOK * sizeof *got);
            pa_expect_close("the layer's output", got, ref, L_EMBD * L_TOK, L_EMBD);
            if (missing[0])
                pa_fail("computed right, but supports_op is false for: %s", missing);
        }
    }
    ggml_gallocr_free(ga);
}

void group_layer(void)
{
    layer_case("every op: a llama layer on the GEMM_RVV backend alone", layer_alone);
}

/* ---- group splits: the layer through ggml_backend_sched, llama.cpp's way ---- */

static void layer_sched(struct layer *l, const float *ref, float *got)
{
    /* Accelerators first, the CPU last, as llama.cpp orders them. */
    ggml_backend_t backends[2] = {pa_be_rvv, pa_be_cpu};
    ggml_backend_sched_t sched =
        ggml_backend_sched_new(backends, NULL, 2, GGML_DEFAULT_GRAPH_SIZE, false, true);
    if (!ggml_backend_sched_alloc_graph(sched, l->graph))
        pa_fail("ggml_backend_sched_alloc_graph failed");
    else {
        enum ggml_status s = ggml_backend_sched_graph_compute(sched, l->graph);
        int splits = ggml_backend_sched_get_n_splits(sched);
        fprintf(stderr, "plugin_api: splits: the layer ran in %d splits (%d copies)\n",
                splits, ggml_backend_sched_get_n_copies(sched));
        if (s != GGML_STATUS_SUCCESS)
            pa_fail("ggml_backend_sched_graph_compute returned %s", pa_status_name(s));
        else {
            ggml_backend_tensor_get(l->out, got, 0, L_EMBD * L_TOK * sizeof *got);
            pa_expect_close("the layer's output through the scheduler", got, ref,
                            L_EMBD * L_TOK, L_EMBD);
        }
        /* One split when GEMM_RVV runs every node. Two are allowed: the token
         * embedding lives in a CPU buffer (llama.cpp keeps its input layer on the
         * CPU), and the scheduler runs an op where its weight lives, so its GET_ROWS
         * may run on the CPU before everything else moves to GEMM_RVV. More splits
         * mean activations hopping between the backends inside the layer. */
        if (splits > 2) {
            char where[200] = "";
            size_t len = 0;
            for (int i = 0; i < ggml_graph_n_nodes(l->graph) && len < 150; i++) {
                struct ggml_tensor *t = ggml_graph_node(l->graph, i);
                ggml_backend_t b = ggml_backend_sched_get_tensor_backend(sched, t);
                if (b == pa_be_cpu && t->op != GGML_OP_RESHAPE && t->op != GGML_OP_VIEW &&
                    t->op != GGML_OP_PERMUTE && t->op != GGML_OP_TRANSPOSE)
                    len += (size_t)snprintf(where + len, sizeof where - len, "%s%s",
                                            len ? " " : "", ggml_op_desc(t));
            }
            pa_fail("%d splits, at most 2 expected (on the CPU: %s)", splits, where);
        }
    }
    ggml_backend_sched_free(sched);
}

void group_splits(void)
{
    layer_case("splits: the layer through ggml_backend_sched [GEMM_RVV, CPU]", layer_sched);
}
