/* The products GEMM_RVV runs itself: MUL_MAT of a 2-D contiguous BF16 or Q8_0 weight [N, K]
 * that the library has plans for in its format, by FP32 activations into FP32, through the
 * format's calls (format.c). A BF16 weight is packed when it lives in GEMM_RVV's buffer, else
 * read where it is, its activations rounded to BF16 (nearest even) as ggml's CPU backend
 * rounds them before its BF16 dot product. A Q8_0 weight is served packed only; the library
 * quantises its FP32 activations per block of 32, as ggml's CPU backend does. */
#include <stdlib.h>
#include <string.h>

#include "plugin.h"

#define MAX_BUCKETS 16

/* FP32 rows whose elements are adjacent, at strides the library can take. */
static bool f32_rows(const struct ggml_tensor *t)
{
    return t->type == GGML_TYPE_F32 && t->nb[0] == sizeof(float) && t->nb[1] % sizeof(float) == 0;
}

struct grg_packed *grg_packed_whole(const struct ggml_tensor *w)
{
    struct grg_packed *p = grg_packed_find(w);
    return p && p->data == w->data && p->n == w->ne[1] && p->k == w->ne[0] ? p : NULL;
}

bool grg_serves_mul_mat(const struct ggml_tensor *op, const char **why)
{
    const struct ggml_tensor *w = op->src[0], *x = op->src[1];
    const struct grg_format *fmt = grg_format_of(w->type);
    const char *no = NULL;
    if (op->op != GGML_OP_MUL_MAT || !fmt)
        no = "not a product on a BF16 or Q8_0 weight";
    else if (!grg_weight_2d(w))
        no = "not a 2-D contiguous weight";
    else if (w->data && grg_reads_packed(w) && !grg_packed_whole(w))
        no = "a part of a packed weight";
    else if (!grg_has_plans(w))
        no = fmt->no_plan;
    else if (fmt->packed_only && (w->data || w->buffer) && !grg_reads_packed(w))
        no = fmt->packed_only;
    else if (!f32_rows(x) || !f32_rows(op) || grg_reads_packed(x))
        no = "activations or result are not FP32 rows";
    if (why)
        *why = no;
    return !no;
}

/* Names, once per weight and plan, the plan that serves M rows of it. */
static void log_plan(struct grg_packed *p, const struct ggml_tensor *w, int64_t m)
{
    int64_t b[MAX_BUCKETS];
    size_t count = p->fmt->plan_buckets(w->ne[1], w->ne[0], b, MAX_BUCKETS);
    if (count > MAX_BUCKETS)
        count = MAX_BUCKETS;
    size_t i = 0;
    while (i + 1 < count && b[i] < m)
        i++;
    if (count == 0 || (p->buckets_logged >> i & 1))
        return;
    p->buckets_logged |= 1u << i;
    const char *how = b[i] >= m ? "" : " in blocks of rows";
    if (b[i] < m && b[i] == 1)
        how = " (no GEMM plan: the fallback serves)";
    grg_log(GGML_LOG_LEVEL_INFO,
            "%s: %s (N = %lld, K = %lld) M = %lld: %splan M <= %lld serves%s%s\n", GRG_NAME,
            w->name[0] ? w->name : "(unnamed weight)", (long long)w->ne[1], (long long)w->ne[0],
            (long long)m, p->fmt->plan_label, (long long)b[i], how,
            gemm_rvv_kernels_active() ? "" : " (kernels off here: the fallback serves)");
}

/* X as the BF16 path takes it: rounded into the backend's scratch, m rows of k. */
static uint16_t *bf16_rows(const char *xs, size_t x_row, int64_t m, int64_t k,
                           uint16_t **scratch, size_t *scratch_len)
{
    size_t need = (size_t)(m * k);
    if (*scratch_len < need) {
        uint16_t *grown = realloc(*scratch, need * sizeof **scratch);
        if (!grown)
            return NULL;
        *scratch = grown;
        *scratch_len = need;
    }
    /* Rounded as ggml's CPU backend rounds its BF16 products' activations (nearest even, NaN
     * kept quiet), in the library's vector code. */
    for (int64_t r = 0; r < m; r++)
        gemm_rvv_round_bf16((const float *)(xs + r * x_row), k, *scratch + r * k);
    return *scratch;
}

enum ggml_status grg_mul_mat(struct ggml_tensor *dst, uint16_t **scratch, size_t *scratch_len)
{
    const struct ggml_tensor *w = dst->src[0], *x = dst->src[1];
    const struct grg_format *fmt = grg_format_of(w->type);
    int64_t n = w->ne[1], k = w->ne[0], m = x->ne[1];
    struct grg_packed *p = grg_packed_whole(w);
    if (p)
        log_plan(p, w, m);
    if (!p && fmt->packed_only) {
        grg_log(GGML_LOG_LEVEL_ERROR, "%s: %s: its %s weight is not packed\n", GRG_NAME,
                dst->name, fmt->name);
        return GGML_STATUS_FAILED;
    }
    int64_t ldy = (int64_t)(dst->nb[1] / sizeof(float));
    int64_t ldw = (int64_t)(w->nb[1] / fmt->unit_bytes);
    for (int64_t i3 = 0; i3 < x->ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < x->ne[2]; i2++) {
            const char *xs = (const char *)x->data + i2 * x->nb[2] + i3 * x->nb[3];
            void *y = (char *)dst->data + i2 * dst->nb[2] + i3 * dst->nb[3];
            const void *xv = xs;
            int64_t ldx = (int64_t)(x->nb[1] / sizeof(float));
            if (fmt->x_bf16) {
                xv = bf16_rows(xs, x->nb[1], m, k, scratch, scratch_len);
                ldx = k;
                if (!xv) {
                    grg_log(GGML_LOG_LEVEL_ERROR, "%s: no memory for %lld x %lld activations\n",
                            GRG_NAME, (long long)m, (long long)k);
                    return GGML_STATUS_ALLOC_FAILED;
                }
            }
            gemm_rvv_status s = p ? fmt->linear(xv, m, ldx, p->weight, y, ldy)
                                  : fmt->linear_plain(xv, m, ldx, w->data, n, k, ldw, y, ldy);
            if (s != GEMM_RVV_OK) {
                grg_log(GGML_LOG_LEVEL_ERROR, "%s: %s: %s\n", GRG_NAME, dst->name,
                        gemm_rvv_strerror(s));
                return GGML_STATUS_FAILED;
            }
        }
    }
    return GGML_STATUS_SUCCESS;
}
