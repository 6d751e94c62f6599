/* The public Linear calls: the checks every argument passes before anything is written, then
 * dispatch (a weight object's calls hold its lock shared, so no update lands half way). */
#include "check.h"
#include "dispatch.h"
#include "isa.h"
#include "threads.h"
#include "weight.h"

/* A call on a weight object of `format`, X of x_bytes a value (BF16, or FP32 for Q8_0). */
static gemm_rvv_status linear_on_object(const void *x, size_t x_bytes, uint32_t format,
                                        int64_t m, int64_t ldx, const gemm_rvv_weight *weight,
                                        const float *bias, void *y, int64_t ldy,
                                        gemm_rvv_type y_type)
{
    if (gr_isa_status() != GEMM_RVV_OK)
        return gr_isa_status();
    if (!weight)
        return GEMM_RVV_ERR_NULL;
    if (weight->format != format)
        return GEMM_RVV_ERR_FORMAT;
    gemm_rvv_status s = gr_check_call(x, x_bytes, m, ldx, (int64_t)weight->n,
                                      (int64_t)weight->k, y, ldy, y_type);
    if (s == GEMM_RVV_OK)
        s = gr_check_alias(x, x_bytes, (size_t)m, (size_t)ldx, NULL, weight->n, weight->k, 0,
                           bias, y, (size_t)ldy, y_type);
    if (s == GEMM_RVV_OK)
        s = gr_weight_check_alias(weight, y, (size_t)m, (size_t)ldy, y_type);
    if (s != GEMM_RVV_OK || (s = gr_weight_hold(weight)) != GEMM_RVV_OK)
        return s;
    const struct gr_call c = {.x = x, .m = (size_t)m, .ldx = (size_t)ldx,
                              .w = gr_weight_view_of(weight), .bias = bias, .y = y,
                              .ldy = (size_t)ldy, .y_bf16 = y_type == GEMM_RVV_BF16};
    /* After the hold: a call a resize waits for must not wait for a weight's lock. */
    gr_threads_call_begin();
    s = gr_dispatch(&c, &weight->plans, ((gemm_rvv_weight *)weight)->counters);
    gr_threads_call_end();
    gr_weight_release(weight);
    return s;
}

gemm_rvv_status gemm_rvv_linear(const uint16_t *x, int64_t m, int64_t ldx,
                                const gemm_rvv_weight *weight, const float *bias, void *y,
                                int64_t ldy, gemm_rvv_type y_type)
{
    return linear_on_object(x, sizeof *x, GR_FORMAT_BF16, m, ldx, weight, bias, y, ldy, y_type);
}

gemm_rvv_status gemm_rvv_linear_plain(const uint16_t *x, int64_t m, int64_t ldx,
                                      const uint16_t *w, int64_t n, int64_t k, int64_t ldw,
                                      const float *bias, void *y, int64_t ldy,
                                      gemm_rvv_type y_type)
{
    if (gr_isa_status() != GEMM_RVV_OK)
        return gr_isa_status();
    if (!w)
        return GEMM_RVV_ERR_NULL;
    gemm_rvv_status s = gr_check_call(x, sizeof *x, m, ldx, n, k, y, ldy, y_type);
    if (s == GEMM_RVV_OK)
        s = gr_check_matrix(n, k, ldw, sizeof(uint16_t));
    if (s == GEMM_RVV_OK)
        s = gr_check_alias(x, sizeof *x, (size_t)m, (size_t)ldx, w, (size_t)n, (size_t)k,
                           (size_t)ldw, bias, y, (size_t)ldy, y_type);
    if (s != GEMM_RVV_OK)
        return s;
    struct gr_shape_plans plans;
    gr_find_plans((uint64_t)n, (uint64_t)k, GR_FORMAT_BF16, &plans);
    const struct gr_weight_view view = {.plain = w, .ldw = (size_t)ldw, .n = (size_t)n,
                                        .k = (size_t)k};
    const struct gr_call c = {.x = x, .m = (size_t)m, .ldx = (size_t)ldx, .w = view,
                              .bias = bias, .y = y, .ldy = (size_t)ldy,
                              .y_bf16 = y_type == GEMM_RVV_BF16};
    gr_threads_call_begin();
    s = gr_dispatch(&c, &plans, NULL);
    gr_threads_call_end();
    return s;
}

gemm_rvv_status gemm_rvv_linear_f32x(const float *x, int64_t m, int64_t ldx,
                                     const gemm_rvv_weight *weight, const float *bias, void *y,
                                     int64_t ldy, gemm_rvv_type y_type)
{
    return linear_on_object(x, sizeof *x, GR_FORMAT_Q8_0, m, ldx, weight, bias, y, ldy, y_type);
}
