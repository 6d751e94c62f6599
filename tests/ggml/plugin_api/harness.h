/* plugin_api's harness, shared by the files of groups (one file per file of plugins/ggml/):
 * reporting a case, the two devices, random data, tensors in backend buffers, and the check
 * of y = W x on GEMM_RVV against ggml's CPU backend. */
#ifndef PLUGIN_API_HARNESS_H
#define PLUGIN_API_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ggml-alloc.h>
#include <ggml-backend.h>
#include <ggml.h>

/* test-backend-ops' bound for MUL_MAT: normalized mean squared error against the CPU. */
#define NMSE_MAX 5e-4
#define PA_Q8_BLOCK_BYTES 34

/* ---- reporting ---- */
extern char pa_failure[1024]; /* the current case's first failure, empty while it passes */
extern bool pa_verbose;       /* PLUGIN_API_VERBOSE: informational log lines and timings */
extern bool pa_full_tier;     /* GEMM_RVV_TEST_TIER=full (test_matmul.c) */
__attribute__((format(printf, 1, 2))) void pa_fail(const char *fmt, ...);
void pa_case_begin(void);
__attribute__((format(printf, 1, 2))) bool pa_case_end(const char *fmt, ...);
void pa_run_group(const char *name, void (*run)(void), int *passed, int *failed);

/* ---- the two devices ---- */
extern ggml_backend_dev_t pa_dev_rvv, pa_dev_cpu;
extern ggml_backend_t pa_be_rvv, pa_be_cpu;
extern ggml_backend_buffer_type_t pa_buft_rvv, pa_buft_cpu;
ggml_backend_set_n_threads_t pa_set_threads_fn(ggml_backend_dev_t dev);

/* ---- data ---- */
uint64_t pa_rng_next(void);
float pa_frand(void);
void pa_fill_f32(float *x, size_t n, float scale);
void pa_fill_bf16(uint16_t *w, size_t n, float scale);
void pa_fill_special_bits(uint16_t *w, size_t n);
void pa_fill_q8_0(uint8_t *b, size_t blocks, bool special);
void *pa_xmalloc(size_t n);
struct ggml_context *pa_ctx_new(size_t n_tensors, size_t n_graphs);
ggml_backend_buffer_t pa_alloc_in(struct ggml_context *ctx, ggml_backend_buffer_type_t buft,
                                  bool weights);
void pa_expect_close(const char *what, const float *y, const float *ref, size_t n, size_t row);
enum ggml_status pa_compute(ggml_backend_t be, struct ggml_cgraph *g);
const char *pa_status_name(enum ggml_status s);

/* ---- y = W x on GEMM_RVV against the CPU backend ---- */
void pa_check_product_of(struct ggml_tensor *w, const void *bits, int64_t m,
                         const float *x_given, const char *where);
void pa_check_product(struct ggml_tensor *w, const void *bits, int64_t m, const char *where);

/* A BF16 weight [N, K] alone in a new GEMM_RVV weight buffer. */
struct weight {
    struct ggml_context *ctx;
    ggml_backend_buffer_t buf;
    struct ggml_tensor *t;
};

bool pa_weight_new(struct weight *w, int64_t n, int64_t k, const char *name);
bool pa_q8_weight_new(struct weight *w, int64_t n, int64_t k, const char *name);
void pa_weight_free(struct weight *w);
void pa_expect_bits(const char *where, const struct ggml_tensor *t, const uint16_t *bits,
                    size_t elem_off, size_t count);
void pa_expect_bytes(const char *where, const struct ggml_tensor *t, const uint8_t *bytes,
                     size_t from, size_t size);
void pa_set_random(struct ggml_tensor *t, uint16_t *bits);
bool pa_weight_random(struct weight *w, int64_t n, int64_t k, const char *name, uint16_t *bits);
void pa_expect_weight(const char *where, struct ggml_tensor *t, const uint16_t *bits, int64_t m);
void pa_weight_case(const char *name, int64_t n, int64_t k,
                    void (*body)(struct weight *w, uint16_t *bits));

/* ---- the groups, by the plugin file each exercises ---- */
void group_products(void), group_q8_0(void);                        /* test_matmul.c */
void group_empty(void), group_select(void), group_layer(void),
    group_splits(void);                                             /* test_compute.c */
void group_readback(void), group_memory(void), group_view(void), group_memset(void),
    group_clear(void);                                              /* test_buffer.c */
void group_threads(void), group_devices(void);                      /* test_registry.c */
void group_supports(void), group_kv_cache(void);                    /* test_supports.c */
void group_source(void);                                            /* test_release.c */
void group_rows(void);                                              /* test_rows.c */
void group_attention(void);                                         /* test_attention.c */

#endif
