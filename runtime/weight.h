/* The weight object: one layer's weights, BF16 or Q8_0, packed for the variant that serves (or
 * copied plain for the fallback), the plans of its shape and format, its counter rows, and the
 * lock that keeps calls from seeing half-packed values. Every live object is on one list, for
 * fork(). The BF16 calls are in weight.c, the Q8_0 ones in weight_q8_0.c. */
#ifndef GEMM_RVV_WEIGHT_H
#define GEMM_RVV_WEIGHT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "counters.h"
#include "fallback.h"
#include "gemm_rvv.h"
#include "registry_lookup.h"

struct gemm_rvv_weight {
    size_t n, k;
    uint32_t format; /* enum gr_format: BF16 (plain, packed) or Q8_0 (q8, packed) */
    /* The packed layout of the variant that serves (gr_isa_variant) when this build has a plan
     * for (N, K) and the core has V; else a plain [N, K] copy (row stride K) for the fallback.
     * 64-byte aligned. */
    uint32_t *packed;
    uint32_t layout;
    size_t panel_width;
    uint16_t *plain;
    unsigned char *q8; /* Q8_0 without a plan: the GGUF blocks as written, rows contiguous */
    size_t bytes; /* of the copy (packed, plain or q8), padding included */
    int external; /* the copy lives in the caller's memory (gemm_rvv_weight_create_in) */
    /* Calls hold it shared, update holds it exclusive: no call sees half-packed values; free
     * refuses an object whose lock anyone holds. */
    pthread_rwlock_t lock;
    /* The plans of this (N, K), found once at create: calls do no search. */
    struct gr_shape_plans plans;
    /* The counter rows of this (N, K), one per M bucket (1, 2, 4, ... 2^31), found on first
     * use: steady-state calls do not search the counter table either. */
    _Atomic(struct gr_counter *) counters[32];
    struct gemm_rvv_weight *prev, *next; /* the list of live objects */
    int fork_locked;                     /* its lock is held for a fork */
};

/* A new object of `format` (enum gr_format) for an [n, k] weight, its form chosen and its copy
 * in mem (mem_bytes, the caller's: GEMM_RVV_ERR_BUFFER when too small or misaligned) or, with
 * mem NULL, in memory of its own; not yet published. Every check of the shape is here: sizes
 * (GEMM_RVV_ERR_SIZE), K % 32 for Q8_0 (GEMM_RVV_ERR_FORMAT), overflow. */
gemm_rvv_status gr_weight_new(uint32_t format, int64_t n, int64_t k, void *mem, size_t mem_bytes,
                              struct gemm_rvv_weight **out);

/* The bytes of the copy gr_weight_new would make for `format` and [n, k], into *bytes. */
gemm_rvv_status gr_weight_form_bytes(uint32_t format, int64_t n, int64_t k, size_t *bytes);
/* gemm_rvv_weight_create_in and _create_in_q8_0: an object of `format` over the caller's
 * memory, only its packed form's padding written. */
gemm_rvv_status gr_weight_create_in(uint32_t format, int64_t n, int64_t k, void *mem,
                                    size_t mem_bytes, gemm_rvv_weight **out);

/* The arguments of a write or read of `format`'s elements (BF16 values, Q8_0 blocks): the
 * object (GEMM_RVV_ERR_FORMAT when of another format), the buffer, a range inside it. */
gemm_rvv_status gr_weight_check_range(const gemm_rvv_weight *weight, uint32_t format,
                                      const void *buf, size_t first, size_t count);

/* Puts a filled object on the live list and hands it out in *out. */
void gr_weight_publish(struct gemm_rvv_weight *obj, gemm_rvv_weight **out);

/* Holds the object's lock exclusive, for a write of its weights: GEMM_RVV_OK or
 * GEMM_RVV_ERR_THREADS; gr_weight_unlock releases it (and gr_weight_hold's). */
gemm_rvv_status gr_weight_lock(gemm_rvv_weight *weight);
void gr_weight_unlock(const gemm_rvv_weight *weight);

/* GEMM_RVV_ERR_ALIAS when a call's Y [m, N] (ldy, y_type) overlaps the object's copy: the
 * caller's memory when the object was made by gemm_rvv_weight_create_in. */
gemm_rvv_status gr_weight_check_alias(const gemm_rvv_weight *weight, const void *y, size_t m,
                                      size_t ldy, gemm_rvv_type y_type);

/* What the fallback and the driver read of the object's weights. */
struct gr_weight_view gr_weight_view_of(const gemm_rvv_weight *weight);

/* Holds the object's lock shared for one call: GEMM_RVV_OK, or GEMM_RVV_ERR_THREADS when the
 * system refused the lock (too many readers). */
gemm_rvv_status gr_weight_hold(const gemm_rvv_weight *weight);
void gr_weight_release(const gemm_rvv_weight *weight);

/* Around fork() (fork.c): every object's lock is held exclusive across it (running calls and
 * updates finish first); the child starts each lock afresh, held by nobody. */
void gr_weights_fork_prepare(void);
void gr_weights_fork_parent(void);
void gr_weights_fork_child(void);

#endif
