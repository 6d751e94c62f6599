/* What GEMM_RVV's device says it computes, for ggml's scheduler and llama.cpp's placement of
 * weights: its own products, and every op ggml's CPU device computes, except where that would
 * need the bytes of a packed weight (only GEMM_RVV's products and its GET_ROWS read those,
 * the latter so that a tied embedding is held once), would take into
 * GEMM_RVV's buffer a weight that it does not multiply (such weights stay in ggml's own
 * buffers, its repacking ones included); and the attention it computes (FLASH_ATTN_EXT). A
 * tensor not placed yet is taken as packed when GEMM_RVV would pack it once placed in its
 * buffer (test-backend-ops places every tensor of a case there after asking). */
#include <pthread.h>

#include "plugin.h"

static bool layout_op(enum ggml_op op)
{
    return op == GGML_OP_NONE || op == GGML_OP_RESHAPE || op == GGML_OP_VIEW ||
           op == GGML_OP_PERMUTE || op == GGML_OP_TRANSPOSE;
}

/* Sets of weights by a hash of (name, shape), e.g. the declined ones, each named once. */
#define WEIGHT_SET_MAX 4096
struct weight_set {
    uint64_t hash[WEIGHT_SET_MAX];
    size_t count;
    pthread_mutex_t lock;
};
static struct weight_set declined = {.lock = PTHREAD_MUTEX_INITIALIZER};
static struct weight_set multiplied = {.lock = PTHREAD_MUTEX_INITIALIZER};

static uint64_t weight_hash(const struct ggml_tensor *w)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *c = w->name; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ull;
    h = (h ^ (uint64_t)w->ne[0]) * 1099511628211ull;
    h = (h ^ (uint64_t)w->ne[1]) * 1099511628211ull;
    h = (h ^ (uint64_t)w->ne[2]) * 1099511628211ull;
    return (h ^ (uint64_t)w->type) * 1099511628211ull;
}

/* Whether w is in the set; with `add`, adds it. */
static bool in_set(struct weight_set *set, const struct ggml_tensor *w, bool add)
{
    uint64_t h = weight_hash(w);
    bool found = false;
    pthread_mutex_lock(&set->lock);
    for (size_t i = 0; i < set->count && !found; i++)
        found = set->hash[i] == h;
    if (!found && add && set->count < WEIGHT_SET_MAX)
        set->hash[set->count++] = h;
    pthread_mutex_unlock(&set->lock);
    return found;
}

/* Names a declined weight (or attention: its result) once, with the reason. */
static void log_decline(const struct ggml_tensor *w, const char *why)
{
    if (!in_set(&declined, w, true))
        grg_log(GGML_LOG_LEVEL_INFO, "%s: declines %s [%lld x %lld x %lld x %lld]: %s\n", GRG_NAME,
                w->name[0]                          ? w->name
                : w->op == GGML_OP_FLASH_ATTN_EXT ? "(unnamed attention)"
                                                  : "(unnamed weight)",
                (long long)w->ne[0],
                (long long)w->ne[1], (long long)w->ne[2], (long long)w->ne[3], why);
}

/* A weight in GEMM_RVV's own buffer (or about to be placed there), not an activation nor
 * the KV cache of a layer on GEMM_RVV. */
static bool own_weight(const struct ggml_tensor *t)
{
    const struct ggml_tensor *base = t->view_src ? t->view_src : t;
    return base->buffer && grg_is_own_buffer_type(base->buffer->buft) && !grg_kv_cache(base) &&
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
    /* Attention GEMM_RVV computes (attention.c). llama.cpp's -fa auto keeps flash attention on
     * where the op lands on its layer's device: GEMM_RVV for the layers it holds; for layers on
     * the CPU (-ngl 0) it turns it off, and graph_compute computes the unfused chain with the
     * same call. A FLASH_ATTN_EXT it declines goes to the CPU device (graph_compute still has
     * ggml compute one it is handed, as ggml-rpc's server hands it every node). */
    if (op->op == GGML_OP_FLASH_ATTN_EXT) {
        const char *why;
        if (grg_serves_flash_attn(op, &why))
            return true;
        log_decline(op, why);
        return false;
    }
    bool product = op->op == GGML_OP_MUL_MAT || op->op == GGML_OP_MUL_MAT_ID;
    if (op->op == GGML_OP_MUL_MAT && grg_format_of(op->src[0]->type)) {
        const char *why;
        if (grg_serves_mul_mat(op, &why)) {
            if (!op->src[0]->data)
                in_set(&multiplied, op->src[0], true);
            return true;
        }
        log_decline(op->src[0], why);
    }
    /* The rows of a packed weight are read out of it here. Not placed yet, a weight is taken
     * for its rows only when GEMM_RVV was asked to multiply it before: llama.cpp places a tied
     * embedding (the lm_head too) in the buffer the table's GET_ROWS goes to, so asked in a
     * placement after one where it multiplied it (llama.cpp's fit pass), GEMM_RVV holds it once.
     * An untied table (only GET_ROWS) stays in llama.cpp's mapping of the file, where only the
     * rows read are resident. */
    if (grg_serves_get_rows(op) && (op->src[0]->data || in_set(&multiplied, op->src[0], false)))
        return true;
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
