/* What GEMM_RVV's device says it computes, for ggml's scheduler and llama.cpp's placement of
 * weights: its own products, and every op ggml's CPU device computes, except where that would
 * need the bytes of a packed weight (only GEMM_RVV's products read those), would take into
 * GEMM_RVV's buffer a weight that it does not multiply (such weights stay in ggml's own
 * buffers, its repacking ones included), or would turn llama.cpp's flash attention off. A
 * tensor not placed yet is taken as packed when GEMM_RVV would pack it once placed in its
 * buffer (test-backend-ops places every tensor of a case there after asking). */
#include <pthread.h>

#include "plugin.h"

static bool layout_op(enum ggml_op op)
{
    return op == GGML_OP_NONE || op == GGML_OP_RESHAPE || op == GGML_OP_VIEW ||
           op == GGML_OP_PERMUTE || op == GGML_OP_TRANSPOSE;
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

static void log_decline(const struct ggml_tensor *w, const char *why)
{
    if (first_decline(w))
        grg_log(GGML_LOG_LEVEL_INFO, "%s: declines %s [%lld x %lld x %lld x %lld]: %s\n", GRG_NAME,
                w->name[0] ? w->name : "(unnamed weight)", (long long)w->ne[0],
                (long long)w->ne[1], (long long)w->ne[2], (long long)w->ne[3], why);
}

/* A weight in GEMM_RVV's own buffer (or about to be placed there), not an activation. */
static bool own_weight(const struct ggml_tensor *t)
{
    const struct ggml_tensor *base = t->view_src ? t->view_src : t;
    return base->buffer && grg_is_own_buffer_type(base->buffer->buft) &&
           ggml_backend_buffer_get_usage(base->buffer) != GGML_BACKEND_BUFFER_USAGE_COMPUTE;
}

/* A tensor not placed yet (no buffer: test-backend-ops asks before it allocates, ggml's
 * scheduler before it places activations) that GEMM_RVV would pack if it were placed in its
 * buffer: a 2-D BF16 or Q8_0 tensor whose N x K has plans in its format. Only GEMM_RVV's own
 * product may read it. */
static bool packed_if_placed(const struct ggml_tensor *t)
{
    const struct ggml_tensor *base = t->view_src ? t->view_src : t;
    return !base->buffer && !base->data && grg_packs(base);
}

bool grg_supports_op(const struct ggml_tensor *op)
{
    if (layout_op(op->op))
        return true;
    /* llama.cpp turns flash attention off when it would run on another device than its layer,
     * and an accelerator device gets no layers: left to the CPU, it stays on. (graph_compute
     * still computes it when handed one, as ggml-rpc's server does.) */
    if (op->op == GGML_OP_FLASH_ATTN_EXT)
        return false;
    bool product = op->op == GGML_OP_MUL_MAT || op->op == GGML_OP_MUL_MAT_ID;
    if (op->op == GGML_OP_MUL_MAT && grg_format_of(op->src[0]->type)) {
        const char *why;
        if (grg_serves_mul_mat(op, &why))
            return true;
        log_decline(op->src[0], why);
    }
    if (product && own_weight(op->src[0]))
        return false;
    if (grg_reads_packed(op) || packed_if_placed(op))
        return false;
    for (int i = 0; i < GGML_MAX_SRC; i++)
        if (op->src[i] && (grg_reads_packed(op->src[i]) || packed_if_placed(op->src[i])))
            return false;
    ggml_backend_dev_t cpu = grg_cpu_device();
    return cpu && ggml_backend_dev_supports_op(cpu, op);
}
