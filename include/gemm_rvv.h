/* gemm_rvv: BF16 and Q8_0 Linear layers (Y = X W^T + bias) for RISC-V Vector 1.0 cores, with
 * kernels generated ahead of time for a model's shapes and a scalar fallback for every other
 * shape; and attention over an engine's KV cache (gemm_rvv_attention, "Attention" below).
 *
 * This is the only header an inference engine includes. Link libgemm_rvv.a (pkg-config name
 * gemm_rvv). All sizes and strides count elements, not bytes. BF16 values are passed as their
 * raw 16-bit patterns (uint16_t): the top half of an IEEE binary32.
 *
 * Results: every output is the sum over k = 0 .. K-1, in that order, of X[m, k] * W[n, k],
 * accumulated in FP32 (each product is exact in FP32); the bias, if any, is added after the
 * sum. A generated kernel and the scalar fallback give the same bits. Q8_0 weights (see
 * "Q8_0 weights" below) have a sum of their own, the same bits from kernels and fallback too.
 */
#ifndef GEMM_RVV_H
#define GEMM_RVV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gemm_rvv_version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The calls below are the shared library's interface even where the library is built with
 * -fvisibility=hidden (its position-independent build, which libgemm_rvv.so is made from). */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

typedef enum gemm_rvv_status {
    GEMM_RVV_OK = 0,
    GEMM_RVV_ERR_NULL = 1,     /* a required pointer is NULL */
    GEMM_RVV_ERR_SIZE = 2,     /* M, N or K is zero or negative */
    GEMM_RVV_ERR_STRIDE = 3,   /* a row stride is smaller than its row */
    GEMM_RVV_ERR_OVERFLOW = 4, /* a size or stride product does not fit the address space */
    GEMM_RVV_ERR_TYPE = 5,     /* an output type other than GEMM_RVV_F32 or GEMM_RVV_BF16 */
    GEMM_RVV_ERR_NOMEM = 6,    /* memory could not be allocated */
    GEMM_RVV_ERR_THREADS = 7,  /* a worker thread could not be started, or a lock taken */
    GEMM_RVV_ERR_ISA = 8,      /* GEMM_RVV_ISA asks for a kernel variant this core lacks */
    GEMM_RVV_ERR_ALIAS = 9,    /* Y overlaps X, W or the bias */
    GEMM_RVV_ERR_BUFFER = 10,  /* the caller's memory is too small or not aligned */
    GEMM_RVV_ERR_RANGE = 11,   /* elements past the end of the weight */
    GEMM_RVV_ERR_FORMAT = 12,  /* the weight's format is not one this call takes, or K is not a
                                  multiple of 32 for Q8_0 */
    GEMM_RVV_ERR_BUSY = 13     /* the weight object is in use: a call, read, write or update
                                  runs on it */
} gemm_rvv_status; /* gemm_rvv_attention gives some of them meanings of its own (see below) */

typedef enum gemm_rvv_type {
    GEMM_RVV_F32 = 0,  /* float */
    GEMM_RVV_BF16 = 1, /* uint16_t, rounded to nearest even; NaN stays NaN */
    GEMM_RVV_F16 = 2   /* uint16_t, IEEE binary16: attention's caches only (no Linear output) */
} gemm_rvv_type;

/* The status in words ("M, N or K is zero or negative"); never NULL. */
const char *gemm_rvv_strerror(gemm_rvv_status status);

/* The library's version, GEMM_RVV_VERSION_STRING of the build that made it. */
const char *gemm_rvv_version(void);

/* ---- Weights ------------------------------------------------------------------------------
 * A weight object holds one Linear layer's [N, K] BF16 weight, packed into the kernels' layout
 * (which depends on the core's vector length: pack on the machine that runs it). It owns the
 * packed copy: the engine may free or reuse its own buffer after create or update. */
typedef struct gemm_rvv_weight gemm_rvv_weight;

/* Packs W (N rows of K, row stride ldw >= K) into a new object stored in *out. On error *out is
 * left untouched. */
gemm_rvv_status gemm_rvv_weight_create(const uint16_t *w, int64_t n, int64_t k, int64_t ldw,
                                       gemm_rvv_weight **out);

/* Re-packs new values of the same shape (after the engine reloaded its weights). It waits for
 * calls already running on this object; every call that starts after it returns sees only the
 * new values. On error the object keeps its old values. GEMM_RVV_ERR_FORMAT on a Q8_0 object
 * (it takes gemm_rvv_weight_write_q8_0). */
gemm_rvv_status gemm_rvv_weight_update(gemm_rvv_weight *weight, const uint16_t *w, int64_t ldw);

/* Frees the object and its packed copy (not memory given to gemm_rvv_weight_create_in).
 * NULL is ignored (GEMM_RVV_OK). An object that a call, read, write or update is running on
 * is not freed: GEMM_RVV_ERR_BUSY, the object left as it was; free it once they have
 * returned. A call that starts on an object while it is being freed may find it freed: the
 * engine must not start one. */
gemm_rvv_status gemm_rvv_weight_free(gemm_rvv_weight *weight);

/* ---- Weights in the caller's memory --------------------------------------------------------
 * For an engine whose weights live in buffers it manages (a ggml backend buffer): the object's
 * copy of W is kept in memory the caller owns, so that W is held once. The copy is the form
 * this core and build serve from: packed where the build has plans for (N, K) and the core
 * has V, else plain [N, K] rows for the fallback. */
#define GEMM_RVV_WEIGHT_ALIGN 64

/* Bytes of that copy of an [n, k] weight, into *bytes (a multiple of GEMM_RVV_WEIGHT_ALIGN). */
gemm_rvv_status gemm_rvv_weight_bytes(int64_t n, int64_t k, size_t *bytes);

/* Makes an object for an [n, k] weight whose copy lives in mem (mem_bytes bytes, at least
 * gemm_rvv_weight_bytes(), aligned to GEMM_RVV_WEIGHT_ALIGN: else GEMM_RVV_ERR_BUFFER, and
 * mem is not written). Only the padding of the packed form is written here, so that the
 * caller's pages are touched as the weights arrive: each element holds whatever mem held
 * until gemm_rvv_weight_write writes it. mem must stay valid until gemm_rvv_weight_free,
 * which leaves it to the caller. */
gemm_rvv_status gemm_rvv_weight_create_in(int64_t n, int64_t k, void *mem, size_t mem_bytes,
                                          gemm_rvv_weight **out);

/* Writes `count` elements of W, taken in row-major order from element `first` (W[first / K,
 * first % K]) on, from src; any object, any range, in as many pieces as the engine likes.
 * Waits for running calls on the object, as gemm_rvv_weight_update does. GEMM_RVV_ERR_RANGE
 * when first + count > N * K (nothing written); GEMM_RVV_ERR_FORMAT on a Q8_0 object. */
gemm_rvv_status gemm_rvv_weight_write(gemm_rvv_weight *weight, const uint16_t *src,
                                      size_t first, size_t count);

/* Reads the same elements back into dst: the exact bits last written or packed.
 * GEMM_RVV_ERR_FORMAT on a Q8_0 object. */
gemm_rvv_status gemm_rvv_weight_read(const gemm_rvv_weight *weight, uint16_t *dst, size_t first,
                                     size_t count);

/* ---- Q8_0 weights --------------------------------------------------------------------------
 * Q8_0: GGUF's block layout, along K: 34 bytes a block = FP16 scale d (little-endian, 2 bytes)
 * then 32 int8 q; value = d * q. A row of an [n, k] weight is k / 32 blocks, rows contiguous.
 * Block b of the weight is row b / (k / 32), blocks kb = b % (k / 32) of that row. K must be a
 * multiple of 32 (else GEMM_RVV_ERR_FORMAT, nothing made). Q8_0 objects are freed by
 * gemm_rvv_weight_free and served by gemm_rvv_linear_f32x only; the BF16 calls on them
 * (gemm_rvv_linear, _update, _write, _read) return GEMM_RVV_ERR_FORMAT, and so do the Q8_0
 * calls below on a BF16 object.
 *
 * Results of gemm_rvv_linear_f32x: those of ggml's CPU backend (ggml 0.27's RVV variant) for
 * the same Q8_0 product, bit for bit (docs/numerics.md has the rule's detail and its error
 * bound). Each row of X is quantised per block of 32 k, once per call: amax = max |x|,
 * d = amax / 127 (FP32), the block's scale d_x = d rounded to FP16 (nearest even; Inf from
 * d >= 65520), q_x = x * (1 / d) in FP32 rounded to nearest, ties to even; d_x = 0 makes every
 * q_x 0, and a block holding an Inf or NaN gets d_x = NaN (its outputs are NaN; here ggml
 * differs). Each output is then, over the blocks in increasing k from acc = +0.0f,
 * acc = fmaf((float)isum, d_w * d_x, acc) in FP32, isum the exact int32 sum of the block's 32
 * products q_w * q_x; the bias is added after. The scale d_w is the block's FP16 scale,
 * exactly (a subnormal too; Inf and NaN stay so, and make the block's terms Inf or NaN as
 * FP32 arithmetic does: Inf * 0 is NaN). */
#define GEMM_RVV_Q8_0_BLOCK 32
#define GEMM_RVV_Q8_0_BLOCK_BYTES 34

/* Copies n rows of k / 32 Q8_0 blocks (n * k / 32 * 34 bytes at blocks) into a new object
 * stored in *out. On error *out is left untouched. */
gemm_rvv_status gemm_rvv_weight_create_q8_0(const void *blocks, int64_t n, int64_t k,
                                            gemm_rvv_weight **out);

/* Bytes of the object's copy of an [n, k] Q8_0 weight in the caller's memory (a multiple of
 * GEMM_RVV_WEIGHT_ALIGN): packed where the build has a Q8_0 plan for (N, K) and the core has
 * V (34 bytes a block, as GGUF's, plus N's padding to a panel), else the plain GGUF blocks
 * for the fallback. */
gemm_rvv_status gemm_rvv_weight_bytes_q8_0(int64_t n, int64_t k, size_t *bytes);

/* Makes a Q8_0 object whose copy lives in mem, as gemm_rvv_weight_create_in does for BF16:
 * GEMM_RVV_ERR_BUFFER when mem is smaller than gemm_rvv_weight_bytes_q8_0() or not aligned to
 * GEMM_RVV_WEIGHT_ALIGN (mem not written); only the packed form's padding is written here. */
gemm_rvv_status gemm_rvv_weight_create_in_q8_0(int64_t n, int64_t k, void *mem,
                                               size_t mem_bytes, gemm_rvv_weight **out);

/* Writes `blocks` Q8_0 blocks (34 bytes each, at src) from block first_block on (block
 * b = row * (k / 32) + kb), any range, in any pieces; waits for running calls as
 * gemm_rvv_weight_update does. GEMM_RVV_ERR_RANGE when first_block + blocks > N * K / 32
 * (nothing written); GEMM_RVV_ERR_FORMAT on a BF16 object. */
gemm_rvv_status gemm_rvv_weight_write_q8_0(gemm_rvv_weight *weight, const void *src,
                                           size_t first_block, size_t blocks);

/* Reads the same blocks back into dst: the exact 34 bytes per block last written (a NaN
 * scale's payload too). */
gemm_rvv_status gemm_rvv_weight_read_q8_0(const gemm_rvv_weight *weight, void *dst,
                                          size_t first_block, size_t blocks);

/* ---- Linear --------------------------------------------------------------------------------
 * Y[M, N] = X[M, K] W[N, K]^T (+ bias[N]). X is BF16 with row stride ldx >= K; Y has row
 * stride ldy >= N and the element type y_type; bias is N floats or NULL. On any error nothing
 * is written to Y, and the call is not counted (gemm_rvv_counters).
 *
 * Aliasing: Y must not overlap X, the bias, or W: for gemm_rvv_linear_plain the engine's W,
 * for an object made by gemm_rvv_weight_create_in(_q8_0) its copy in the caller's memory
 * (gemm_rvv_weight_bytes(_q8_0) bytes from mem); each taken as the memory from its first
 * element to its last ((rows - 1) * ld + cols elements): such a call returns
 * GEMM_RVV_ERR_ALIAS. The inputs may overlap each other; they are only read.
 *
 * Dispatch: a generated kernel serves the call when the build has one for (N, K) and a bucket
 * that holds M (the smallest such); M above the largest bucket runs that bucket's kernel on
 * blocks of rows, so prefill with M = 512 still uses the M <= 128 kernel. Everything else,
 * and every call on a core without the V extension or with the fallback forced, runs the
 * scalar fallback, which gives the same bits.
 *
 * Threads: the columns are split over the library's worker threads (gemm_rvv_set_threads);
 * the result does not depend on the thread count. Any number of engine threads may call at
 * once, on the same weight object too: each call takes its own scratch (see
 * gemm_rvv_release_memory), and fails only when that memory cannot be allocated.
 *
 * fork(): the library registers pthread_atfork handlers when it is loaded. A fork waits for
 * the calls and weight updates running on weight objects to finish; the child starts with no
 * worker threads (its first call starts a pool of the count last set) and every weight object
 * usable. */
gemm_rvv_status gemm_rvv_linear(const uint16_t *x, int64_t m, int64_t ldx,
                                const gemm_rvv_weight *weight, const float *bias, void *y,
                                int64_t ldy, gemm_rvv_type y_type);

/* Y[M, N] = X[M, K] W[N, K]^T (+ bias[N]) on a Q8_0 weight object, X in FP32 (row stride
 * ldx >= K floats), quantised as "Q8_0 weights" above says. Checks, aliasing (X's extent
 * counted in floats), dispatch, threads and counters as gemm_rvv_linear; the plans are the
 * Q8_0 ones (gemm_rvv_plan_buckets_q8_0). GEMM_RVV_ERR_FORMAT for a BF16 object. */
gemm_rvv_status gemm_rvv_linear_f32x(const float *x, int64_t m, int64_t ldx,
                                     const gemm_rvv_weight *weight, const float *bias, void *y,
                                     int64_t ldy, gemm_rvv_type y_type);

/* X for a call from FP32 activations: out[i] = x[i] rounded to BF16 (nearest even; a NaN stays
 * a quiet NaN with its sign), for i < count, as gemm_rvv_type BF16 outputs are rounded. Vector
 * code where the kernels run, scalar elsewhere, the same bits. out must not overlap x.
 * GEMM_RVV_ERR_NULL, _SIZE (count < 0), _OVERFLOW or _ALIAS: nothing is written. */
gemm_rvv_status gemm_rvv_round_bf16(const float *x, int64_t count, uint16_t *out);

/* The same on weights the engine did not pack: W is PyTorch's [N, K] layout, row stride ldw. */
gemm_rvv_status gemm_rvv_linear_plain(const uint16_t *x, int64_t m, int64_t ldx,
                                      const uint16_t *w, int64_t n, int64_t k, int64_t ldw,
                                      const float *bias, void *y, int64_t ldy,
                                      gemm_rvv_type y_type);

/* ---- Attention -----------------------------------------------------------------------------
 * gemm_rvv_attention computes, for every query row i < n_q and query head h < q_heads,
 *   out[i, h, :] = sum_p w_p V[p, g, :] / sum_p w_p,  w_p = exp(s_p - max s),
 *   s_p = scale * (Q[i, h, :] . K[p, g, :]) (+ soft-capping) + slope_h * mask[i, p]
 * over the cache positions p < n_kv, with g = h / (q_heads / kv_heads) (grouped-query
 * attention: kv_heads divides q_heads), in FP32 with an online softmax (docs/numerics.md,
 * "Attention", gives the order of every operation and the error bound). It is ggml's
 * FLASH_ATTN_EXT on one ne3 slice:
 *   - logit_softcap != 0: s_p = logit_softcap * tanh(dot * (scale / logit_softcap)) + mask term;
 *   - max_bias > 0 (ALiBi): slope_h = m0^(h + 1) for h < n2, else m1^(2 (h - n2) + 1), with n2
 *     the largest power of two <= q_heads, m0 = 2^(-max_bias / n2), m1 = 2^(-max_bias / 2 / n2)
 *     (powf, as ggml); else slope_h = 1;
 *   - mask: F16, broadcast over heads; a position whose mask term is -Inf is skipped (its K
 *     and V are not read); a row with every position masked gets zeros, as in ggml.
 * Every element is addressed by its strides, counted in elements of its own type (not bytes;
 * divide ggml's nb by the element size); strides are >= 0:
 *   Q[i, h, d]    = q[i * q_row_stride + h * q_head_stride + d]              (float)
 *   K[p, g, d]    = k[p * k_pos_stride + g * k_head_stride + d]    (k_type: GEMM_RVV_F16/BF16)
 *   V[p, g, d]    = v[p * v_pos_stride + g * v_head_stride + d * v_dim_stride]    (v_type: ...;
 *                   v_dim_stride 0 means 1: d adjacent)
 *   mask[i, p]    = mask[i * mask_row_stride + p]                          (F16 bits, or NULL)
 *   out[i, h, d]  = out[i * out_row_stride + h * out_head_stride + d]      (float)
 * ggml's layout: q [D, n_q, H_q] F32 (q_row_stride = nb1 / 4, q_head_stride = nb2 / 4), k and v
 * [D, n_kv, H_kv] (k_pos_stride = nb1 / 2, k_head_stride = nb2 / 2), mask [n_kv, n_q padded]
 * (mask_row_stride = nb1 / 2), dst [D, H_q, n_q] (out_head_stride = D, out_row_stride = H_q D).
 * llama.cpp without flash attention keeps V transposed, [n_kv, D, H_kv] with positions
 * adjacent: v_pos_stride = 1, v_dim_stride = nb1 / 2, v_head_stride = nb2 / 2 (no copy needed).
 * F16 and BF16 are widened exactly; Q stays FP32.
 *
 * Checked before anything is written (on error out is untouched):
 *   GEMM_RVV_ERR_NULL      args, q, k, v or out is NULL
 *   GEMM_RVV_ERR_SIZE      n_q, n_kv, q_heads or kv_heads below 1 (ggml writes zeros for
 *                          n_kv = 0; this call refuses it), head_dim not a multiple of 8 in
 *                          [8, GEMM_RVV_ATTENTION_MAX_HEAD_DIM], q_heads not a multiple of
 *                          kv_heads
 *   GEMM_RVV_ERR_TYPE      k_type or v_type other than GEMM_RVV_F16 or GEMM_RVV_BF16
 *   GEMM_RVV_ERR_STRIDE    a negative stride, mask_row_stride < n_kv (a mask row shorter than
 *                          the cache) with a mask, or out strides that do not keep the outputs
 *                          apart: of the dimensions (rows, heads) longer than 1, the one of
 *                          smaller stride needs a stride >= head_dim, the other a stride >=
 *                          the first's whole span
 *   GEMM_RVV_ERR_OVERFLOW  an extent (first element to last) that does not fit the address space
 *   GEMM_RVV_ERR_ALIAS     out overlaps q, k, v or the mask (each from its first element to its
 *                          last); the inputs may overlap each other
 *   GEMM_RVV_ERR_FORMAT    sinks is not NULL: attention sinks are not supported yet
 *   GEMM_RVV_ERR_ISA       as every call, when GEMM_RVV_ISA cannot be honoured here
 * Fields left 0 by a designated initializer mean: no mask, no ALiBi, no soft-capping, no sinks.
 * Threads: the (row, head) pairs are split over the library's worker threads; the result does
 * not depend on the thread count. Kernels: a shape the build planned (the shapes file's
 * `attention:` entries: head_dim, q_heads, kv_heads and the caches' types; gemm-rvv-gen's table
 * lists them) runs generated vector kernels where the core has V; every other call the scalar
 * fallback; both give the same bits. */
#define GEMM_RVV_ATTENTION_MAX_HEAD_DIM 1024

typedef struct gemm_rvv_attention_args {
    int64_t n_q, n_kv, head_dim, q_heads, kv_heads;
    const float *q;
    int64_t q_row_stride, q_head_stride;
    const uint16_t *k;
    int64_t k_pos_stride, k_head_stride;
    gemm_rvv_type k_type;
    const uint16_t *v;
    int64_t v_pos_stride, v_head_stride;
    gemm_rvv_type v_type;
    int64_t v_dim_stride; /* V's stride along d; 0 or 1: adjacent */
    const uint16_t *mask; /* F16, or NULL: no mask */
    int64_t mask_row_stride;
    float scale;
    float max_bias;      /* ALiBi's; <= 0: none */
    float logit_softcap; /* 0: none */
    const float *sinks;  /* must be NULL */
    float *out;
    int64_t out_row_stride, out_head_stride;
} gemm_rvv_attention_args;

gemm_rvv_status gemm_rvv_attention(const gemm_rvv_attention_args *args);

/* ---- Plans of this build -------------------------------------------------------------------
 * Which (N, K) the build has generated plans for, so that an engine can route a Linear to the
 * library only where a kernel serves it (the ggml plugin declines the others). Copies the M
 * buckets of the plans for (N, K), ascending (1 is the GEMV), into m_buckets (up to capacity;
 * NULL with capacity 0 only counts) and returns how many there are: 0 means every call of
 * that shape runs the scalar fallback. M above the largest bucket runs that bucket's plan on
 * blocks of rows (see Dispatch above). This says what the build holds, whatever the core: on
 * a core without V (gemm_rvv_kernels_active() == 0) the fallback serves them all the same. */
size_t gemm_rvv_plan_buckets(int64_t n, int64_t k, int64_t *m_buckets, size_t capacity);

/* The same for the Q8_0 plans of (N, K) (weights: q8_0 in the shapes file): the buckets that
 * serve gemm_rvv_linear_f32x on a Q8_0 object of that shape; 0 when none does. */
size_t gemm_rvv_plan_buckets_q8_0(int64_t n, int64_t k, int64_t *m_buckets, size_t capacity);

/* ---- Settings ------------------------------------------------------------------------------
 * Threads taking part in one call, the calling thread included. The default is the number of
 * online CPUs (at most GEMM_RVV_MAX_THREADS), or GEMM_RVV_THREADS from the environment (see
 * Environment below). Setting a new count waits until the calls running when it is set have
 * returned (calls that start meanwhile wait for it); setting the count that runs returns at
 * once. The workers are started once and reused; a call that starts the pool while it is
 * being set waits and keeps the count set.
 * Values below 1 mean 1. Returns GEMM_RVV_ERR_THREADS when not all could be started, or for a
 * count above GEMM_RVV_MAX_THREADS (the pool then runs with those that were, or with
 * GEMM_RVV_MAX_THREADS). */
#define GEMM_RVV_MAX_THREADS 1024

gemm_rvv_status gemm_rvv_set_threads(int count);
int gemm_rvv_get_threads(void);

/* Where the worker threads run. The calling thread is participant 0 and is never moved (place
 * it yourself); worker w is participant w + 1. COMPACT puts participant i on the i-th CPU the
 * process may use (so 4 threads stay in one cluster of a K1, whose CPUs are numbered cluster
 * by cluster); SPREAD spaces the participants evenly over those CPUs (4 of 8: CPUs 0, 2, 4,
 * 6); NONE lets the system place them (the default). GEMM_RVV_AFFINITY in the environment
 * sets it from the start (see Environment below). Running calls go on; workers started later by
 * gemm_rvv_set_threads are pinned the same way. Returns GEMM_RVV_ERR_THREADS for an unknown
 * mode or when the system refused to pin a worker (it then runs where it was). */
typedef enum gemm_rvv_affinity {
    GEMM_RVV_AFFINITY_NONE = 0,
    GEMM_RVV_AFFINITY_COMPACT = 1,
    GEMM_RVV_AFFINITY_SPREAD = 2
} gemm_rvv_affinity;

gemm_rvv_status gemm_rvv_set_affinity(gemm_rvv_affinity mode);
gemm_rvv_affinity gemm_rvv_get_affinity(void);

/* Forces every call to the scalar fallback (nonzero) or lets kernels serve again (0), for
 * debugging. GEMM_RVV_DISABLE=1 in the environment forces it from the start, until this is
 * called. */
void gemm_rvv_force_fallback(int on);

/* Nonzero when generated kernels can run here: the core has V and the fallback is not forced. */
int gemm_rvv_kernels_active(void);

/* Memory: a call takes scratch from a pool the library keeps, and allocates only when the pool
 * has no block big enough (the first calls of a shape, or more threads); a steady-state call
 * allocates nothing. Per participating thread a plan's call holds its bucket's partial sums of
 * one column block, the widened activations of one K block and, for plain weights, one packed
 * block (the plan file's header comment gives the sizes; tens to hundreds of KiB); the fallback
 * holds 64 widened rows of X plus 4 columns of W per thread. A call takes one block, so the pool
 * holds as many as calls ever ran at once. This frees the pool's idle blocks; later calls take
 * new ones. */
void gemm_rvv_release_memory(void);

/* ---- Environment ---------------------------------------------------------------------------
 * Read once, at the first call that needs one. Unset or empty means the default; only these
 * values are accepted:
 *   GEMM_RVV_THREADS   a whole number from 1 to GEMM_RVV_MAX_THREADS, in decimal digits
 *                      (default: the online CPUs)
 *   GEMM_RVV_AFFINITY  compact, spread or none (default: none)
 *   GEMM_RVV_DISABLE   1: every call on the scalar fallback; 0: kernels serve (default: 0)
 *   GEMM_RVV_BLOCKING  alone or shared, for measurements: which of a plan's two blockings
 *                      runs (default: alone with one thread, shared with more). alone: one
 *                      thread on the whole L2. shared: the threads of one call, all the cores
 *                      of an L2 at once (a K1 cluster's four); below 32 rows of M that is one
 *                      core's share of the L2, from 32 rows the cluster's blocking (one copy
 *                      of X, column blocks in rounds). No blocking is made for one thread
 *                      whose L2 is shared with other work at 32 rows or more: it moves
 *                      5.35 x the minimum with shared at M = 128 on a 128 KiB share, 6.07 x
 *                      with alone (docs/blocking.md, "Which blocking runs").
 * Any other value is reported once on stderr, as one line naming the variable, its value (cut
 * to 40 characters, bytes other than printable ASCII shown as '?') and the setting used
 * instead, which is the default; e.g.
 *   gemm_rvv: GEMM_RVV_DISABLE="false" ignored: expected 1 or 0; kernels stay enabled
 * GEMM_RVV_ISA (below) is stricter: a value it cannot honour fails every call. */

/* ---- ISA variant ---------------------------------------------------------------------------
 * Kernels come in variants: "base" (RVV 1.0: BF16 widened with integer instructions, multiplied
 * in FP32; every core with V, e.g. the SpacemiT K1) and "zvfbfwma" (BF16 multiplied directly by
 * vfwmaccbf16; cores with Zvfbfwma, e.g. SpacemiT K3, SiFive P870 and X390). Every plan of a
 * build has both; they give the same bits. A weight object packs its weights for the variant
 * chosen, which gemm_rvv_isa() and the first line of gemm_rvv_counters_print name. The
 * choice is made once per process, at the first call into the library: the best variant the
 * core has, found with riscv_hwprobe (Linux >= 6.15 reports Zvfbfwma), else the "isa" line of
 * /proc/cpuinfo. GEMM_RVV_ISA in the environment forces one, for debugging:
 *   unset, empty or "auto"  the best one;
 *   "base"                  the base kernels, also on a core with Zvfbfwma;
 *   "zvfbfwma"              the Zvfbfwma kernels where the core has them;
 * anything else, or "zvfbfwma" on a core without it, puts the library in a failed state for the
 * whole process instead of running instructions the core lacks: gemm_rvv_isa() says "none" and
 * every weight_create, weight_update and linear call returns GEMM_RVV_ERR_ISA, writing nothing.
 * A core without V runs the base variant, i.e. the scalar fallback (gemm_rvv_kernels_active). */

/* The variant that serves: "base", "zvfbfwma", or "none" (GEMM_RVV_ISA cannot be honoured
 * here). Never NULL. */
const char *gemm_rvv_isa(void);

/* GEMM_RVV_OK, or GEMM_RVV_ERR_ISA when gemm_rvv_isa() says "none". */
gemm_rvv_status gemm_rvv_isa_status(void);

/* ---- Counters ------------------------------------------------------------------------------
 * How many calls each shape key sent to a kernel and how many to the fallback: the serving
 * question "how often did we miss". Rows are keyed by N, K and M's bucket (1, then powers of
 * two: M = 5 counts under 8), whoever served the call. */
typedef struct gemm_rvv_counter {
    int64_t n, k, m_bucket;
    uint64_t kernel_calls, fallback_calls;
} gemm_rvv_counter;

/* Copies up to `capacity` rows into out and returns how many rows there are. */
size_t gemm_rvv_counters(gemm_rvv_counter *out, size_t capacity);
void gemm_rvv_counters_reset(void);

/* A table of the rows with the share of fallback calls, for logs. */
void gemm_rvv_counters_print(FILE *out);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif
