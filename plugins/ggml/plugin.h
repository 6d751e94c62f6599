/* The GEMM_RVV ggml backend: two devices (registry.c: GEMM_RVV for llama.cpp's layers,
 * GEMM_RVV_ACCEL for those on the CPU) that compute any graph ggml's CPU backend computes.
 * Its MUL_MATs on BF16 and Q8_0 weights and its attention run through libgemm_rvv; every
 * other node runs on ggml's own CPU backend in the same process, on the same memory. Its
 * buffer type holds each planned weight once, packed. Shared by the plugin's files. */
#ifndef GRG_PLUGIN_H
#define GRG_PLUGIN_H

#include <stdbool.h>
#include <stdint.h>

#include "gemm_rvv.h"
#include "ggml_abi.h"

#define GRG_NAME "GEMM_RVV"

/* format.c: a weight format GEMM_RVV packs, and the library's calls for it. ggml stores its
 * elements in units (one BF16 element; one Q8_0 block of 32), which the calls count. */
struct grg_format {
    enum ggml_type type;
    const char *name;
    size_t unit_bytes;
    int64_t unit_elems;
    size_t (*plan_buckets)(int64_t n, int64_t k, int64_t *m_buckets, size_t capacity);
    gemm_rvv_status (*bytes)(int64_t n, int64_t k, size_t *bytes);
    gemm_rvv_status (*create_in)(int64_t n, int64_t k, void *mem, size_t mem_bytes,
                                 gemm_rvv_weight **out);
    gemm_rvv_status (*write)(gemm_rvv_weight *w, const void *src, size_t first, size_t count);
    gemm_rvv_status (*read)(const gemm_rvv_weight *w, void *dst, size_t first, size_t count);
    /* count units in ggml's layout to FP32 elements, as ggml's CPU backend converts them */
    void (*to_f32)(const void *units, size_t count, float *out);
    /* The product Y = X W^T into FP32 rows ldy apart, X's m rows ldx apart: FP32 rounded to
     * BF16 first by the caller (x_bf16), or FP32 as they are; on the packed weight, or (NULL:
     * the format is served packed only) on ggml's own rows of the weight, ldw apart. */
    bool x_bf16;
    gemm_rvv_status (*linear)(const void *x, int64_t m, int64_t ldx, const gemm_rvv_weight *w,
                              void *y, int64_t ldy);
    gemm_rvv_status (*linear_plain)(const void *x, int64_t m, int64_t ldx, const void *w,
                                    int64_t n, int64_t k, int64_t ldw, void *y, int64_t ldy);
    /* In messages: the plan's name ("" for BF16, the first format), why a product without a
     * plan is declined, and (served packed only) why one on a weight elsewhere is. */
    const char *plan_label, *no_plan, *packed_only;
};
/* The format of ggml's type, or NULL when GEMM_RVV does not multiply it. */
const struct grg_format *grg_format_of(enum ggml_type type);
/* Whether w is one 2-D contiguous matrix; whether the library has plans for its N x K in its
 * format. */
bool grg_weight_2d(const struct ggml_tensor *w);
bool grg_has_plans(const struct ggml_tensor *w);
/* Whether t is (a part of) llama.cpp's KV cache, by its name (cache_k_l0, ...). */
bool grg_kv_cache(const struct ggml_tensor *t);
/* Whether GEMM_RVV packs this tensor when it is placed in its buffer as a weight: a 2-D
 * contiguous tensor of a format above whose N x K the library has plans for, not the KV cache. */
bool grg_packs(const struct ggml_tensor *t);

/* A weight placed packed in a GEMM_RVV buffer: its bytes there, its shape, format and object. */
struct grg_packed {
    void *data;
    size_t bytes;
    int64_t n, k;
    const struct grg_format *fmt;
    gemm_rvv_weight *weight;
    uint32_t buckets_logged; /* bit i: the log named the plan of bucket index i serving it */
};

/* buffer.c */
ggml_backend_buffer_type_t grg_buffer_type(void);
bool grg_is_own_buffer_type(ggml_backend_buffer_type_t buft);
/* The packed weight whose bytes hold t's data (t itself, a view of it, or another struct for
 * the same tensor), or NULL. */
struct grg_packed *grg_packed_find(const struct ggml_tensor *t);
/* Whether t's bytes (t or the tensor it views) are packed, or will be once placed: then only
 * GEMM_RVV's own MUL_MAT may read them. */
bool grg_reads_packed(const struct ggml_tensor *t);

/* host_buffer.c: host memory whose buffers are mappings of their own (the device's host
 * buffer type). */
ggml_backend_buffer_type_t grg_host_buffer_type(void);

/* release.c */
/* After a weight was copied out of src: gives back the pages of src that lie wholly inside it
 * when they are a read-only shared file mapping (a model file llama.cpp mapped), which the
 * kernel reads again from the file, so that the weight is not resident twice. Anything else,
 * a private mapping too (its pages may hold the process's own writes), is left. */
void grg_release_source(const void *src, size_t size);

/* matmul.c */
/* The packed weight that is w whole (not a part of it), or NULL. */
struct grg_packed *grg_packed_whole(const struct ggml_tensor *w);
/* Whether GEMM_RVV runs this MUL_MAT itself (else the CPU backend does); with `why`, says why
 * not for a weight of a format it packs. */
bool grg_serves_mul_mat(const struct ggml_tensor *op, const char **why);
/* Runs one MUL_MAT that grg_serves_mul_mat takes; for a BF16 weight X is rounded to BF16
 * into scratch the backend owns (a Q8_0 weight takes X as it is). */
enum ggml_status grg_mul_mat(struct ggml_tensor *dst, uint16_t **scratch, size_t *scratch_len);

/* rows.c: GET_ROWS on a packed weight (a tied embedding is also the lm_head, held once). */
/* Whether GEMM_RVV gives the rows of this GET_ROWS itself: of a whole weight it packs (or will
 * once placed), by I32 indices, into FP32 rows. */
bool grg_serves_get_rows(const struct ggml_tensor *op);
/* The rows, read out of the packed weight and converted as ggml's CPU backend converts them:
 * the same bits. GGML_STATUS_FAILED (nothing more written) on an index out of range. */
enum ggml_status grg_get_rows(struct ggml_tensor *dst);

/* attention.c: attention through gemm_rvv_attention. */
/* Whether GEMM_RVV computes this FLASH_ATTN_EXT itself; with `why`, why not. */
bool grg_serves_flash_attn(const struct ggml_tensor *op, const char **why);
/* Runs one FLASH_ATTN_EXT that grg_serves_flash_attn takes, every ne3 slice. */
enum ggml_status grg_flash_attn(struct ggml_tensor *dst);
/* The stream's scratch for the unfused chain: Q and the mask (as F16) copied. */
struct grg_scratch {
    void *q, *mask;
    size_t q_len, mask_len;
};
/* When node i of g starts llama.cpp's attention without FLASH_ATTN_EXT (MUL_MAT of the K
 * cache by Q, SOFT_MAX, MUL_MAT of V^T by the weights; views between them) whose two
 * intermediates nothing else reads, in a form the call takes: the index of its last node;
 * else -1. */
int grg_attn_chain(struct ggml_cgraph *g, int i);
/* The CONT node of the chain ending at `last` whose source the chain reads V from (the caller
 * does not run it), or NULL. */
const struct ggml_tensor *grg_attn_chain_cont(struct ggml_cgraph *g, int last);
/* Computes the chain [first, last] into the last node's tensor with one call per ne3 slice;
 * GGML_STATUS_ABORTED, nothing written, when its F32 mask does not convert to F16 exactly
 * (the caller then has ggml compute the nodes). */
enum ggml_status grg_attn_chain_compute(struct ggml_cgraph *g, int first, int last,
                                        struct grg_scratch *s);

/* supports.c */
bool grg_supports_op(const struct ggml_tensor *op);

/* cpu.c: ggml's CPU backend, found through ggml's registry. */
ggml_backend_dev_t grg_cpu_device(void);
/* A CPU backend for one GEMM_RVV backend, running `threads` threads. */
ggml_backend_t grg_cpu_backend_new(int threads);
/* Sets a CPU backend's thread count (llama.cpp sets GEMM_RVV's, which passes it on). */
void grg_cpu_set_threads(ggml_backend_t cpu, int threads);

/* compute.c */
/* The nodes of a graph in order: GEMM_RVV's MUL_MATs here, every run of other nodes on the
 * CPU backend cpu. */
struct grg_stream;
struct grg_stream *grg_stream_new(int threads);
void grg_stream_free(struct grg_stream *s);
void grg_stream_set_threads(struct grg_stream *s, int threads);
enum ggml_status grg_stream_compute(struct grg_stream *s, struct ggml_cgraph *graph);

/* log.c: a message at `level` through ggml's log callback, or stderr. */
void grg_log(enum ggml_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
