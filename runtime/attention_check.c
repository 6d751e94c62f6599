/* gemm_rvv_attention's arguments, checked in the order the header lists the statuses. */
#include <stdint.h>

#include "attention.h"

/* Elements from the first of an [count1, count2, d] array with strides s1, s2, sd to its last,
 * into *n; 0 when that, in bytes of elem, does not fit a ptrdiff_t. */
static int extent_strided(uint64_t count1, uint64_t s1, uint64_t count2, uint64_t s2, uint64_t d,
                          uint64_t sd, size_t elem, uint64_t *n)
{
    uint64_t a, b, c;
    if (__builtin_mul_overflow(count1 - 1, s1, &a) || __builtin_mul_overflow(count2 - 1, s2, &b) ||
        __builtin_mul_overflow(d - 1, sd, &c) || __builtin_add_overflow(a, b, n) ||
        __builtin_add_overflow(*n, c, n) || __builtin_add_overflow(*n, 1, n))
        return 0;
    return *n <= (uint64_t)PTRDIFF_MAX / elem;
}

/* The same with d adjacent. */
static int extent(uint64_t count1, uint64_t s1, uint64_t count2, uint64_t s2, uint64_t d,
                  size_t elem, uint64_t *n)
{
    return extent_strided(count1, s1, count2, s2, d, 1, elem, n);
}

/* Whether [count1, count2] rows of d elements with strides s1, s2 nest without sharing an
 * element: the smaller stride (of a dimension longer than 1) at least d, the larger at least
 * the span of the smaller dimension. Strides already checked against overflow. */
static int apart(uint64_t count1, uint64_t s1, uint64_t count2, uint64_t s2, uint64_t d)
{
    if (count1 == 1)
        return count2 == 1 || s2 >= d;
    if (count2 == 1)
        return s1 >= d;
    if (s1 > s2) {
        uint64_t t = s1;
        s1 = s2;
        s2 = t;
        t = count1;
        count1 = count2;
        count2 = t;
    }
    return s1 >= d && s2 >= (count1 - 1) * s1 + d;
}

static int overlap(const void *a, uint64_t a_elems, size_t a_elem, const void *b,
                   uint64_t b_elems, size_t b_elem)
{
    const uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
    return a0 < b0 + b_elems * b_elem && b0 < a0 + a_elems * a_elem;
}

static int cache_type(gemm_rvv_type t)
{
    return t == GEMM_RVV_F16 || t == GEMM_RVV_BF16;
}

gemm_rvv_status gr_attention_check(const gemm_rvv_attention_args *a)
{
    if (!a || !a->q || !a->k || !a->v || !a->out)
        return GEMM_RVV_ERR_NULL;
    if (a->n_q < 1 || a->n_kv < 1 || a->q_heads < 1 || a->kv_heads < 1 ||
        a->head_dim < GR_ATTN_PARTIALS || a->head_dim > GEMM_RVV_ATTENTION_MAX_HEAD_DIM ||
        a->head_dim % GR_ATTN_PARTIALS != 0 || a->q_heads % a->kv_heads != 0)
        return GEMM_RVV_ERR_SIZE;
    if (!cache_type(a->k_type) || !cache_type(a->v_type))
        return GEMM_RVV_ERR_TYPE;
    if (a->q_row_stride < 0 || a->q_head_stride < 0 || a->k_pos_stride < 0 ||
        a->k_head_stride < 0 || a->v_pos_stride < 0 || a->v_head_stride < 0 ||
        a->v_dim_stride < 0 ||
        a->out_row_stride < 0 || a->out_head_stride < 0 ||
        (a->mask && a->mask_row_stride < a->n_kv))
        return GEMM_RVV_ERR_STRIDE;
    const uint64_t nq = (uint64_t)a->n_q, nkv = (uint64_t)a->n_kv, d = (uint64_t)a->head_dim,
                   hq = (uint64_t)a->q_heads, hkv = (uint64_t)a->kv_heads;
    uint64_t q_n, k_n, v_n, m_n = 0, o_n;
    if (!extent(nq, (uint64_t)a->q_row_stride, hq, (uint64_t)a->q_head_stride, d, sizeof(float),
                &q_n) ||
        !extent(nkv, (uint64_t)a->k_pos_stride, hkv, (uint64_t)a->k_head_stride, d, 2, &k_n) ||
        !extent_strided(nkv, (uint64_t)a->v_pos_stride, hkv, (uint64_t)a->v_head_stride, d,
                        a->v_dim_stride ? (uint64_t)a->v_dim_stride : 1, 2, &v_n) ||
        (a->mask && !extent(nq, (uint64_t)a->mask_row_stride, 1, 0, nkv, 2, &m_n)) ||
        !extent(nq, (uint64_t)a->out_row_stride, hq, (uint64_t)a->out_head_stride, d,
                sizeof(float), &o_n))
        return GEMM_RVV_ERR_OVERFLOW;
    if (!apart(nq, (uint64_t)a->out_row_stride, hq, (uint64_t)a->out_head_stride, d))
        return GEMM_RVV_ERR_STRIDE;
    if (overlap(a->out, o_n, sizeof(float), a->q, q_n, sizeof(float)) ||
        overlap(a->out, o_n, sizeof(float), a->k, k_n, 2) ||
        overlap(a->out, o_n, sizeof(float), a->v, v_n, 2) ||
        (a->mask && overlap(a->out, o_n, sizeof(float), a->mask, m_n, 2)))
        return GEMM_RVV_ERR_ALIAS;
    if (a->sinks)
        return GEMM_RVV_ERR_FORMAT;
    return GEMM_RVV_OK;
}
