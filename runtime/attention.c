/* gemm_rvv_attention: the checks, then every (query row, head) pair on the worker threads,
 * each pair computed whole by one thread, so the bits do not depend on the thread count. */
#include "attention.h"
#include "isa.h"
#include "threads.h"

struct attention_job {
    struct gr_attention at;
    size_t heads;
};

static void attention_pair(void *ctx, size_t i)
{
    const struct attention_job *job = ctx;
    gr_attention_fallback(&job->at, i / job->heads, i % job->heads);
}

gemm_rvv_status gemm_rvv_attention(const gemm_rvv_attention_args *args)
{
    if (gr_isa_status() != GEMM_RVV_OK)
        return gr_isa_status();
    gemm_rvv_status s = gr_attention_check(args);
    if (s != GEMM_RVV_OK)
        return s;
    struct attention_job job = {.heads = (size_t)args->q_heads};
    gr_attention_prepare(args, &job.at);
    gr_threads_call_begin(); /* a resize waits for the call (gemm_rvv_set_threads) */
    gr_parallel_for((size_t)args->n_q * job.heads, attention_pair, &job);
    gr_threads_call_end();
    return GEMM_RVV_OK;
}
