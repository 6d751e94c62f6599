/* The GEMM_RVV ggml backend: one accelerator device whose buffer type packs the BF16 weights
 * of MUL_MAT into gemm_rvv weight objects, and whose backend runs those MUL_MATs through
 * libgemm_rvv. Shared by the plugin's files. */
#ifndef GRG_PLUGIN_H
#define GRG_PLUGIN_H

#include <stdbool.h>
#include <stdint.h>

#include "gemm_rvv.h"
#include "ggml_abi.h"

#define GRG_NAME "GEMM_RVV"

/* A weight set into a GEMM_RVV buffer and packed: tensor->extra points to it. */
struct grg_packed {
    const struct ggml_tensor *tensor;
    gemm_rvv_weight *weight;
    uint32_t buckets_logged; /* bit i: the log named the plan of bucket index i serving it */
    struct grg_packed *next; /* the buffer's list */
};

/* buffer.c */
ggml_backend_buffer_type_t grg_buffer_type(void);
bool grg_is_own_buffer_type(ggml_backend_buffer_type_t buft);

/* matmul.c */
/* Whether the device runs this op: MUL_MAT of a 2-D contiguous BF16 weight with plans by FP32
 * activations into FP32. Logs each weight it declines once. */
bool grg_supports_op(const struct ggml_tensor *op);
/* Ops that compute nothing: a new view of existing data. */
bool grg_op_is_layout(enum ggml_op op);
/* Whether the weight is one GEMM_RVV packs (and so a MUL_MAT on it is supported). */
bool grg_weight_has_plans(const struct ggml_tensor *w);
/* Runs one supported MUL_MAT; X is rounded to BF16 into scratch the backend owns. */
enum ggml_status grg_mul_mat(struct ggml_tensor *dst, uint16_t **scratch, size_t *scratch_len);

/* registry.c */
void grg_log(enum ggml_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
