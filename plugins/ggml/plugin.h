/* The GEMM_RVV ggml backend: one accelerator device that computes any graph ggml's CPU
 * backend computes. Its MUL_MATs on BF16 weights run through libgemm_rvv; every other node
 * runs on ggml's own CPU backend in the same process, on the same memory. Its buffer type
 * holds each planned BF16 weight once, packed. Shared by the plugin's files. */
#ifndef GRG_PLUGIN_H
#define GRG_PLUGIN_H

#include <stdbool.h>
#include <stdint.h>

#include "gemm_rvv.h"
#include "ggml_abi.h"

#define GRG_NAME "GEMM_RVV"

/* A weight placed packed in a GEMM_RVV buffer, found by its address there (ggml's RPC server
 * makes a new tensor for every command and refuses tensor->extra: nothing points to it). */
struct grg_packed {
    void *data;   /* where it starts in the buffer */
    size_t bytes; /* its packed copy's size */
    int64_t n, k;
    gemm_rvv_weight *weight;
    uint32_t buckets_logged; /* bit i: the log named the plan of bucket index i serving it */
    struct grg_packed *next; /* the buffer's list */
};

/* buffer.c */
ggml_backend_buffer_type_t grg_buffer_type(void);
bool grg_is_own_buffer_type(ggml_backend_buffer_type_t buft);
/* Whether t's bytes (t or the tensor it views) are packed, or will be once placed: then only
 * GEMM_RVV's own MUL_MAT may read them. */
bool grg_reads_packed(const struct ggml_tensor *t);
/* The packed weight a tensor (not a view) is, or NULL. */
struct grg_packed *grg_packed_weight(const struct ggml_tensor *t);

/* release.c */
/* After a weight was copied out of src: gives back the pages of src that lie wholly inside it
 * when they are a read-only file mapping (a model file llama.cpp mapped), which the kernel can
 * read again from the file, so that the weight is not resident twice. Anything else is left. */
void grg_release_source(const void *src, size_t size);

/* matmul.c */
/* Whether GEMM_RVV packs this tensor when it is placed in its buffer as a weight: a 2-D
 * contiguous BF16 tensor whose N x K the library has plans for. */
bool grg_packs(const struct ggml_tensor *t);
/* Whether GEMM_RVV runs this MUL_MAT itself (else the CPU backend does); with `why`, says why
 * not for a BF16 weight. */
bool grg_serves_mul_mat(const struct ggml_tensor *op, const char **why);
/* Runs one MUL_MAT that grg_serves_mul_mat takes; X is rounded to BF16 into scratch the
 * backend owns. */
enum ggml_status grg_mul_mat(struct ggml_tensor *dst, uint16_t **scratch, size_t *scratch_len);

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

/* registry.c */
void grg_log(enum ggml_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
