/* What GEMM_RVV runs, and running it: MUL_MAT of a 2-D contiguous BF16 weight [N, K] that the
 * library has plans for, by FP32 activations into FP32. The activations are rounded to BF16
 * (nearest even, by ggml's own row conversion) as ggml's CPU backend does before its BF16 dot
 * product. Everything else is declined, so ggml's CPU backend runs it. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "plugin.h"

#define MAX_BUCKETS 16

bool grg_op_is_layout(enum ggml_op op)
{
    return op == GGML_OP_NONE || op == GGML_OP_RESHAPE || op == GGML_OP_VIEW ||
           op == GGML_OP_PERMUTE || op == GGML_OP_TRANSPOSE;
}

bool grg_weight_has_plans(const struct ggml_tensor *w)
{
    return w->type == GGML_TYPE_BF16 && w->ne[2] == 1 && w->ne[3] == 1 && ggml_is_contiguous(w) &&
           gemm_rvv_plan_buckets(w->ne[1], w->ne[0], NULL, 0) > 0;
}

/* Each declined weight is named once: a small set of hashes of (name, N, K). */
#define DECLINED_MAX 4096
static uint64_t declined[DECLINED_MAX];
static size_t declined_count;
static pthread_mutex_t declined_lock = PTHREAD_MUTEX_INITIALIZER;

static bool first_decline(const struct ggml_tensor *w)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *c = w->name; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ull;
    h = (h ^ (uint64_t)w->ne[0]) * 1099511628211ull;
    h = (h ^ (uint64_t)w->ne[1]) * 1099511628211ull;
    h = (h ^ (uint64_t)w->ne[2]) * 1099511628211ull;
    bool first = true;
    pthread_mutex_lock(&declined_lock);
    for (size_t i = 0; i < declined_count && first; i++)
        first = declined[i] != h;
    if (first && declined_count < DECLINED_MAX)
        declined[declined_count++] = h;
    pthread_mutex_unlock(&declined_lock);
    return first;
}

static bool decline(const struct ggml_tensor *w, const char *why)
{
    if (first_decline(w))
        grg_log(GGML_LOG_LEVEL_INFO, "%s: declines %s [%lld x %lld x %lld x %lld]: %s\n", GRG_NAME,
                w->name[0] ? w->name : "(unnamed weight)", (long long)w->ne[0],
                (long long)w->ne[1], (long long)w->ne[2], (long long)w->ne[3], why);
    return false;
}

/* FP32 rows whose elements are adjacent, at strides the library can take. */
static bool f32_rows(const struct ggml_tensor *t)
{
    return t->type == GGML_TYPE_F32 && t->nb[0] == sizeof(float) && t->nb[1] % sizeof(float) == 0;
}

bool grg_supports_op(const struct ggml_tensor *op)
{
    /* Ops that only name existing data run anywhere (graph_compute skips them). */
    if (grg_op_is_layout(op->op))
        return true;
    if (op->op != GGML_OP_MUL_MAT)
        return false;
    const struct ggml_tensor *w = op->src[0], *x = op->src[1];
    /* A weight already placed in other memory stays with the backend that owns it. */
    if (w->buffer && !grg_is_own_buffer_type(w->buffer->buft))
        return false;
    if (w->type != GGML_TYPE_BF16)
        return false;
    if (w->ne[2] != 1 || w->ne[3] != 1 || !ggml_is_contiguous(w))
        return decline(w, "not a 2-D contiguous weight");
    if (gemm_rvv_plan_buckets(w->ne[1], w->ne[0], NULL, 0) == 0)
        return decline(w, "this build has no plan for its N x K");
    if (!f32_rows(x) || !f32_rows(op) || op->type != GGML_TYPE_F32)
        return decline(w, "activations or result are not FP32 rows");
    return true;
}

/* Names, once per weight and plan, the plan that serves M rows of it. */
static void log_plan(struct grg_packed *p, const struct ggml_tensor *w, int64_t m)
{
    int64_t b[MAX_BUCKETS];
    size_t count = gemm_rvv_plan_buckets(w->ne[1], w->ne[0], b, MAX_BUCKETS);
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
    grg_log(GGML_LOG_LEVEL_INFO, "%s: %s (N = %lld, K = %lld) M = %lld: plan M <= %lld serves%s%s\n",
            GRG_NAME, w->name[0] ? w->name : "(unnamed weight)", (long long)w->ne[1],
            (long long)w->ne[0], (long long)m, (long long)b[i], how,
            gemm_rvv_kernels_active() ? "" : " (kernels off here: the fallback serves)");
}

enum ggml_status grg_mul_mat(struct ggml_tensor *dst, uint16_t **scratch, size_t *scratch_len)
{
    const struct ggml_tensor *w = dst->src[0], *x = dst->src[1];
    int64_t n = w->ne[1], k = w->ne[0], m = x->ne[1];
    size_t need = (size_t)(m * k);
    if (*scratch_len < need) {
        uint16_t *grown = realloc(*scratch, need * sizeof **scratch);
        if (!grown) {
            grg_log(GGML_LOG_LEVEL_ERROR, "%s: no memory for %lld x %lld activations\n", GRG_NAME,
                    (long long)m, (long long)k);
            return GGML_STATUS_ALLOC_FAILED;
        }
        *scratch = grown;
        *scratch_len = need;
    }
    struct grg_packed *p = w->extra;
    if (p && p->tensor != w)
        p = NULL;
    if (p)
        log_plan(p, w, m);
    for (int64_t i3 = 0; i3 < x->ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < x->ne[2]; i2++) {
            const char *xs = (const char *)x->data + i2 * x->nb[2] + i3 * x->nb[3];
            for (int64_t r = 0; r < m; r++)
                ggml_fp32_to_bf16_row_ref((const float *)(xs + r * x->nb[1]),
                                          (ggml_bf16_t *)(*scratch + r * k), k);
            void *y = (char *)dst->data + i2 * dst->nb[2] + i3 * dst->nb[3];
            int64_t ldy = (int64_t)(dst->nb[1] / sizeof(float));
            gemm_rvv_status s =
                p ? gemm_rvv_linear(*scratch, m, k, p->weight, NULL, y, ldy, GEMM_RVV_F32)
                  : gemm_rvv_linear_plain(*scratch, m, k, w->data, n, k,
                                          (int64_t)(w->nb[1] / sizeof(uint16_t)), NULL, y, ldy,
                                          GEMM_RVV_F32);
            if (s != GEMM_RVV_OK) {
                grg_log(GGML_LOG_LEVEL_ERROR, "%s: %s: %s\n", GRG_NAME, dst->name,
                        gemm_rvv_strerror(s));
                return GGML_STATUS_FAILED;
            }
        }
    }
    return GGML_STATUS_SUCCESS;
}
