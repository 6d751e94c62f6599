/* Attention on gemm_rvv_attention: ggml's FLASH_ATTN_EXT (llama.cpp's -fa on and auto), and
 * the unfused chain llama.cpp builds without it (-fa off, and -fa auto for layers on the CPU,
 * since the op would run on GEMM_RVV_ACCEL rather than the layer's CPU device):
 *   kq = MUL_MAT(K cache, Q); p = SOFT_MAX(kq, mask, scale, max_bias); kqv = MUL_MAT(V^T, p)
 * computed as one call when kq and p are read by nothing else, so both modes end on the
 * library's attention. What the call cannot take is left to ggml's CPU backend, FLASH_ATTN_EXT
 * declined with the reason (supports.c logs it), a chain computed node by node. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plugin.h"

static bool kv_type(const struct ggml_tensor *t, gemm_rvv_type *type)
{
    if (t->type != GGML_TYPE_F16 && t->type != GGML_TYPE_BF16)
        return false;
    *type = t->type == GGML_TYPE_F16 ? GEMM_RVV_F16 : GEMM_RVV_BF16;
    return true;
}

/* Elements of `size` bytes, every stride a whole element. */
static bool element_strides(const struct ggml_tensor *t, size_t size)
{
    return t->nb[0] % size == 0 && t->nb[1] % size == 0 && t->nb[2] % size == 0 &&
           t->nb[3] % size == 0;
}

/* The same with the first dimension adjacent. */
static bool whole_strides(const struct ggml_tensor *t, size_t size)
{
    return t->nb[0] == size && element_strides(t, size);
}

/* The head dim the call takes, and the GQA group (ggml's broadcast: q heads per kv head). */
static const char *head_rule(int64_t d, int64_t q_heads, int64_t kv_heads)
{
    if (d % 8 != 0 || d < 8 || d > GEMM_RVV_ATTENTION_MAX_HEAD_DIM)
        return "head dim not a multiple of 8 in [8, 1024]";
    if (kv_heads < 1 || q_heads % kv_heads != 0)
        return "query heads not a multiple of KV heads";
    return NULL;
}

bool grg_serves_flash_attn(const struct ggml_tensor *op, const char **why)
{
    const struct ggml_tensor *q = op->src[0], *k = op->src[1], *v = op->src[2],
                             *mask = op->src[3];
    gemm_rvv_type kt, vt;
    const char *no = NULL;
    if (op->op != GGML_OP_FLASH_ATTN_EXT || !q || !k || !v)
        no = "not FLASH_ATTN_EXT";
    else if (op->src[4])
        no = "attention sinks";
    else if (!kv_type(k, &kt) || !kv_type(v, &vt))
        no = "a K or V cache other than F16 or BF16";
    else if (q->type != GGML_TYPE_F32 || !whole_strides(q, 4) || op->type != GGML_TYPE_F32 ||
             !whole_strides(op, 4))
        no = "Q or the result not FP32";
    else if (!whole_strides(k, 2) || !whole_strides(v, 2))
        no = "K or V elements not adjacent along the head dim";
    else if (v->ne[0] != q->ne[0] || k->ne[0] != q->ne[0])
        no = "V's head dim differs from K's";
    else if ((no = head_rule(q->ne[0], q->ne[2], k->ne[2])) != NULL)
        ;
    else if (v->ne[1] != k->ne[1] || v->ne[2] != k->ne[2] || v->ne[3] != k->ne[3] ||
             k->ne[3] < 1 || q->ne[3] % k->ne[3] != 0)
        no = "K and V not of one shape";
    else if (mask && (mask->type != GGML_TYPE_F16 || !whole_strides(mask, 2) ||
                      mask->ne[2] != 1 || mask->ne[0] < k->ne[1] || mask->ne[1] < q->ne[1] ||
                      q->ne[3] % mask->ne[3] != 0))
        no = "a mask not F16 or not one for all heads";
    else if (grg_reads_packed(q) || grg_reads_packed(k) || grg_reads_packed(v))
        no = "an input in a packed weight";
    if (why)
        *why = no;
    return !no;
}

/* Zeros for each (row, head) of one slice: ggml's result over an empty cache. */
static void zero_rows(float *out, int64_t n_q, int64_t heads, int64_t d, int64_t row_stride,
                      int64_t head_stride)
{
    for (int64_t i = 0; i < n_q; i++)
        for (int64_t h = 0; h < heads; h++)
            memset(out + i * row_stride + h * head_stride, 0, (size_t)d * sizeof(float));
}

static enum ggml_status call(const gemm_rvv_attention_args *a, const char *name)
{
    if (a->n_kv == 0) {
        zero_rows(a->out, a->n_q, a->q_heads, a->head_dim, a->out_row_stride, a->out_head_stride);
        return GGML_STATUS_SUCCESS;
    }
    gemm_rvv_status s = gemm_rvv_attention(a);
    if (s == GEMM_RVV_OK)
        return GGML_STATUS_SUCCESS;
    grg_log(GGML_LOG_LEVEL_ERROR, "%s: %s: %s\n", GRG_NAME, name, gemm_rvv_strerror(s));
    return GGML_STATUS_FAILED;
}

static void log_once(bool *logged, const struct ggml_tensor *t, const char *what, int64_t d,
                     int64_t q_heads, int64_t kv_heads, int64_t n_q)
{
    if (*logged)
        return;
    *logged = true;
    grg_log(GGML_LOG_LEVEL_INFO,
            "%s: %s (%s): attention D = %lld, %lld query heads, %lld KV heads, %lld rows%s\n",
            GRG_NAME, t->name, what, (long long)d, (long long)q_heads, (long long)kv_heads,
            (long long)n_q,
            gemm_rvv_kernels_active() ? "" : " (kernels off here: the fallback serves)");
}

enum ggml_status grg_flash_attn(struct ggml_tensor *dst)
{
    static bool logged;
    const struct ggml_tensor *q = dst->src[0], *k = dst->src[1], *v = dst->src[2],
                             *mask = dst->src[3];
    float params[3];
    memcpy(params, dst->op_params, sizeof params);
    gemm_rvv_attention_args a = {
        .n_q = q->ne[1], .n_kv = k->ne[1], .head_dim = q->ne[0], .q_heads = q->ne[2],
        .kv_heads = k->ne[2],
        .q_row_stride = (int64_t)(q->nb[1] / 4), .q_head_stride = (int64_t)(q->nb[2] / 4),
        .k_pos_stride = (int64_t)(k->nb[1] / 2), .k_head_stride = (int64_t)(k->nb[2] / 2),
        .v_pos_stride = (int64_t)(v->nb[1] / 2), .v_head_stride = (int64_t)(v->nb[2] / 2),
        .mask_row_stride = mask ? (int64_t)(mask->nb[1] / 2) : 0,
        .scale = params[0], .max_bias = params[1], .logit_softcap = params[2],
        .out_head_stride = (int64_t)(dst->nb[1] / 4), .out_row_stride = (int64_t)(dst->nb[2] / 4),
    };
    kv_type(k, &a.k_type);
    kv_type(v, &a.v_type);
    log_once(&logged, dst, "FLASH_ATTN_EXT", a.head_dim, a.q_heads, a.kv_heads, a.n_q);
    int64_t rk = q->ne[3] / k->ne[3];
    for (int64_t i3 = 0; i3 < q->ne[3]; i3++) {
        a.q = (const float *)((const char *)q->data + i3 * q->nb[3]);
        a.k = (const uint16_t *)((const char *)k->data + (i3 / rk) * k->nb[3]);
        a.v = (const uint16_t *)((const char *)v->data + (i3 / rk) * v->nb[3]);
        a.mask = mask ? (const uint16_t *)((const char *)mask->data +
                                           (i3 % mask->ne[3]) * mask->nb[3])
                      : NULL;
        a.out = (float *)((char *)dst->data + i3 * dst->nb[3]);
        enum ggml_status st = call(&a, dst->name);
        if (st != GGML_STATUS_SUCCESS)
            return st;
    }
    return GGML_STATUS_SUCCESS;
}

/* ---- llama.cpp's attention without FLASH_ATTN_EXT ---- */

/* Whether any node of the graph but `user` reads t (or a view of it), or t is an output. */
static bool read_elsewhere(struct ggml_cgraph *g, const struct ggml_tensor *t,
                           const struct ggml_tensor *user)
{
    if (t->flags & GGML_TENSOR_FLAG_OUTPUT)
        return true;
    int n = ggml_graph_n_nodes(g);
    for (int i = 0; i < n; i++) {
        const struct ggml_tensor *node = ggml_graph_node(g, i);
        if (node == user)
            continue;
        if (node->view_src == t)
            return true;
        for (int j = 0; j < GGML_MAX_SRC; j++)
            if (node->src[j] && (node->src[j] == t || node->src[j]->view_src == t))
                return true;
    }
    return false;
}

/* The node after i that is no view (llama.cpp may put views between the chain's nodes). */
static int next_op(struct ggml_cgraph *g, int i)
{
    int n = ggml_graph_n_nodes(g);
    for (i++; i < n; i++) {
        enum ggml_op op = ggml_graph_node(g, i)->op;
        if (op != GGML_OP_VIEW && op != GGML_OP_RESHAPE && op != GGML_OP_PERMUTE &&
            op != GGML_OP_TRANSPOSE)
            return i;
    }
    return -1;
}

/* V^T as the chain reads it: kqv's first source, or, where llama.cpp made that contiguous from
 * a cache kept untransposed (ggml_cont(ggml_transpose(v)): -fa auto on one board, whose cache
 * was made for flash attention), the CONT's source, strides as they are (the CONT not run). */
static const struct ggml_tensor *chain_v(struct ggml_cgraph *g, const struct ggml_tensor *kqv)
{
    const struct ggml_tensor *v = kqv->src[0], *src = v->src[0];
    if (v->op == GGML_OP_CONT && src && src->type == v->type && ggml_are_same_shape(src, v) &&
        element_strides(src, 2) && !read_elsewhere(g, v, kqv))
        return src;
    return v;
}

const struct ggml_tensor *grg_attn_chain_cont(struct ggml_cgraph *g, int last)
{
    const struct ggml_tensor *kqv = ggml_graph_node(g, last);
    return chain_v(g, kqv) != kqv->src[0] ? kqv->src[0] : NULL;
}

int grg_attn_chain(struct ggml_cgraph *g, int i)
{
    struct ggml_tensor *kq = ggml_graph_node(g, i);
    if (kq->op != GGML_OP_MUL_MAT)
        return -1;
    const struct ggml_tensor *k = kq->src[0], *q = kq->src[1];
    gemm_rvv_type type;
    if (!kv_type(k, &type) || q->type != GGML_TYPE_F32 || !whole_strides(q, 4) ||
        !whole_strides(k, 2) || kq->type != GGML_TYPE_F32 || !ggml_is_contiguous(kq) ||
        head_rule(k->ne[0], q->ne[2], k->ne[2]) || k->ne[3] < 1 || q->ne[3] % k->ne[3] != 0)
        return -1;
    int is = next_op(g, i);
    struct ggml_tensor *p = is < 0 ? NULL : ggml_graph_node(g, is);
    if (!p || p->op != GGML_OP_SOFT_MAX || p->src[0] != kq || p->src[2] ||
        p->type != GGML_TYPE_F32 || !ggml_is_contiguous(p))
        return -1;
    const struct ggml_tensor *mask = p->src[1];
    if (mask && ((mask->type != GGML_TYPE_F16 && mask->type != GGML_TYPE_F32) ||
                 !whole_strides(mask, ggml_type_size(mask->type)) || mask->ne[2] != 1 ||
                 mask->ne[0] != kq->ne[0] || mask->ne[1] < kq->ne[1] ||
                 kq->ne[3] % mask->ne[3] != 0))
        return -1;
    int iv = next_op(g, is);
    struct ggml_tensor *kqv = iv < 0 ? NULL : ggml_graph_node(g, iv);
    if (!kqv || kqv->op != GGML_OP_MUL_MAT || kqv->src[1] != p)
        return -1;
    /* V^T: [n_kv, D, H_kv], positions adjacent as llama.cpp keeps V without flash attention,
     * or d adjacent in a CONT's source */
    const struct ggml_tensor *v = chain_v(g, kqv);
    if (!kv_type(v, &type) || !element_strides(v, 2) || v->ne[0] != k->ne[1] ||
        v->ne[1] != k->ne[0] || v->ne[2] != k->ne[2] || v->ne[3] != k->ne[3] ||
        kqv->type != GGML_TYPE_F32 || !ggml_is_contiguous(kqv))
        return -1;
    if (read_elsewhere(g, kq, p) || read_elsewhere(g, p, kqv))
        return -1;
    return iv;
}

/* Grows a scratch array to `count` elements of `size` bytes. */
static void *grown(void **buf, size_t *len, size_t count, size_t size)
{
    if (*len < count * size) {
        void *b = realloc(*buf, count * size);
        if (!b)
            return NULL;
        *buf = b;
        *len = count * size;
    }
    return *buf;
}

/* The first `rows` rows of the mask's slices as F16, rows of ne[0] after one another: an F16
 * mask's as they are, an F32 mask's when every element converts exactly (llama.cpp's are 0,
 * -Inf or ALiBi's small integers); else false, and ggml's SOFT_MAX takes it as it is. */
static bool mask_f16(const struct ggml_tensor *mask, int64_t rows, uint16_t *out)
{
    for (int64_t i3 = 0; i3 < mask->ne[3]; i3++)
        for (int64_t r = 0; r < rows; r++) {
            const char *row = (const char *)mask->data + r * mask->nb[1] + i3 * mask->nb[3];
            if (mask->type == GGML_TYPE_F16) {
                memcpy(out, row, (size_t)mask->ne[0] * 2);
                out += mask->ne[0];
                continue;
            }
            const float *m = (const float *)row;
            for (int64_t p = 0; p < mask->ne[0]; p++) {
                ggml_fp16_t h = ggml_fp32_to_fp16(m[p]);
                if (ggml_fp16_to_fp32(h) != m[p])
                    return false;
                *out++ = h;
            }
        }
    return true;
}

/* Q of one slice into rows of D, heads of n_q rows after one another. */
static void q_copy(const struct ggml_tensor *q, int64_t slice, float *out)
{
    for (int64_t h = 0; h < q->ne[2]; h++)
        for (int64_t i = 0; i < q->ne[1]; i++)
            memcpy(out + (h * q->ne[1] + i) * q->ne[0],
                   (const char *)q->data + i * q->nb[1] + h * q->nb[2] + slice * q->nb[3],
                   (size_t)q->ne[0] * sizeof(float));
}

enum ggml_status grg_attn_chain_compute(struct ggml_cgraph *g, int first, int last,
                                        struct grg_scratch *s)
{
    static bool logged;
    struct ggml_tensor *kq = ggml_graph_node(g, first), *kqv = ggml_graph_node(g, last);
    struct ggml_tensor *p = kqv->src[1];
    const struct ggml_tensor *k = kq->src[0], *q = kq->src[1], *v = chain_v(g, kqv),
                             *mask = p->src[1];
    int64_t n_q = q->ne[1], n_kv = k->ne[1], d = k->ne[0];
    if (ggml_is_empty(kqv))
        return GGML_STATUS_SUCCESS;
    float params[2];
    memcpy(params, p->op_params, sizeof params);
    /* ggml's allocator may give the result the memory of Q or of the mask, whose last reader
     * is a node before it: both are copied first. */
    gemm_rvv_attention_args a = {
        .n_q = n_q, .n_kv = n_kv, .head_dim = d, .q_heads = q->ne[2], .kv_heads = k->ne[2],
        .q_row_stride = d, .q_head_stride = n_q * d,
        .k_pos_stride = (int64_t)(k->nb[1] / 2), .k_head_stride = (int64_t)(k->nb[2] / 2),
        /* V^T's strides as they are */
        .v_pos_stride = (int64_t)(v->nb[0] / 2), .v_dim_stride = (int64_t)(v->nb[1] / 2),
        .v_head_stride = (int64_t)(v->nb[2] / 2),
        .mask_row_stride = n_kv,
        .scale = params[0], .max_bias = params[1],
        .out_row_stride = (int64_t)(kqv->nb[1] / 4), .out_head_stride = (int64_t)(kqv->nb[2] / 4),
    };
    kv_type(k, &a.k_type);
    kv_type(v, &a.v_type);
    float *qs = grown(&s->q, &s->q_len, (size_t)(n_q * d * q->ne[2]), sizeof(float));
    uint16_t *m16 = mask ? grown(&s->mask, &s->mask_len, (size_t)(n_q * n_kv * mask->ne[3]), 2)
                         : NULL;
    if (!qs || (mask && !m16))
        return GGML_STATUS_ALLOC_FAILED;
    if (mask && !mask_f16(mask, n_q, m16))
        return GGML_STATUS_ABORTED; /* the caller computes the nodes */
    int64_t rk = q->ne[3] / k->ne[3];
    for (int64_t i3 = 0; i3 < q->ne[3]; i3++) {
        a.mask = mask ? m16 + (i3 % mask->ne[3]) * n_q * n_kv : NULL;
        q_copy(q, i3, qs);
        a.q = qs;
        a.k = (const uint16_t *)((const char *)k->data + (i3 / rk) * k->nb[3]);
        a.v = (const uint16_t *)((const char *)v->data + (i3 / rk) * v->nb[3]);
        a.out = (float *)((char *)kqv->data + i3 * kqv->nb[3]);
        enum ggml_status st = call(&a, kqv->name);
        if (st != GGML_STATUS_SUCCESS)
            return st;
    }
    log_once(&logged, kqv, "attention without FLASH_ATTN_EXT", d, a.q_heads, a.kv_heads, n_q);
    return GGML_STATUS_SUCCESS;
}
