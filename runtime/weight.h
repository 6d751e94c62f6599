/* The weight object: one layer's weights packed for the variant that serves (or copied plain
 * for the fallback), the plans of its shape, its counter rows, and the lock that keeps calls
 * from seeing half-packed values. Every live object is on one list, for fork(). */
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
    /* The packed layout of the variant that serves (gr_isa_variant) when this build has a plan
     * for (N, K) and the core has V; else a plain [N, K] copy (row stride K) for the fallback.
     * 64-byte aligned. */
    uint32_t *packed;
    uint32_t layout;
    size_t panel_width;
    uint16_t *plain;
    int external; /* the copy lives in the caller's memory (gemm_rvv_weight_create_in) */
    /* Calls hold it shared, update holds it exclusive: no call sees half-packed values. */
    pthread_rwlock_t lock;
    /* The plans of this (N, K), found once at create: calls do no search. */
    struct gr_shape_plans plans;
    /* The counter rows of this (N, K), one per M bucket (1, 2, 4, ... 2^31), found on first
     * use: steady-state calls do not search the counter table either. */
    _Atomic(struct gr_counter *) counters[32];
    struct gemm_rvv_weight *prev, *next; /* the list of live objects */
    int fork_locked;                     /* its lock is held for a fork */
};

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
