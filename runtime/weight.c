/* For PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP: without it glibc's rwlock prefers readers,
 * and callers calling back to back keep a weight update waiting for ever. */
#define _GNU_SOURCE
#include "weight.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cpu.h"
#include "fork.h"
#include "isa.h"
#include "pack.h"
#include "q8_0.h"
#include "q8_0_pack.h"
#include "scratch.h"

_Static_assert(GEMM_RVV_WEIGHT_ALIGN == GR_ALIGN, "the caller's memory is aligned as the library's");

/* The live objects, for fork(); the mutex guards the list and every fork_locked flag. */
static struct gemm_rvv_weight *live;
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;

static int init_lock(pthread_rwlock_t *lock)
{
    pthread_rwlockattr_t attr;
    if (pthread_rwlockattr_init(&attr) != 0)
        return -1;
#if defined(__GLIBC__) /* an enum constant there, not a macro */
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
#endif
    int rc = pthread_rwlock_init(lock, &attr);
    pthread_rwlockattr_destroy(&attr);
    return rc == 0 ? 0 : -1;
}

/* Unlocking a lock this thread holds cannot fail; if it did the lock would be broken, and
 * every later call on the object would hang or race. */
static void unlock(pthread_rwlock_t *lock)
{
    if (pthread_rwlock_unlock(lock) != 0) {
        fputs("gemm_rvv: a weight object's lock could not be released\n", stderr);
        abort();
    }
}

/* Fills the object's copy of W: packed for the kernels, or plain rows for the fallback. */
static void store_weights(struct gemm_rvv_weight *obj, const uint16_t *w, size_t ldw)
{
    if (obj->packed) {
        gr_pack(w, obj->n, obj->k, ldw, obj->panel_width, obj->layout, obj->packed);
        return;
    }
    for (size_t row = 0; row < obj->n; row++)
        memcpy(obj->plain + row * obj->k, w + row * ldw, obj->k * sizeof *w);
}

/* The shape checks of `format`: sizes, K a multiple of 32 for Q8_0, extents that fit. */
static gemm_rvv_status check_shape(uint32_t format, int64_t n, int64_t k)
{
    if (format == GR_FORMAT_BF16)
        return gr_check_matrix(n, k, k, sizeof(uint16_t));
    if (n <= 0 || k <= 0)
        return GEMM_RVV_ERR_SIZE;
    if (k % GR_Q8_BLOCK != 0)
        return GEMM_RVV_ERR_FORMAT;
    return gr_check_matrix(n, k / GR_Q8_BLOCK, k / GR_Q8_BLOCK, GR_Q8_BLOCK_BYTES);
}

/* The form of the object's copy for this core and build: packed where a plan serves (N, K)
 * and the core has V, else plain rows (BF16) or GGUF blocks (Q8_0); its bytes (0 on
 * overflow). Q8_0 panels are VLMAX(e8, m1) wide, whichever variant serves. */
static size_t choose_form(struct gemm_rvv_weight *obj)
{
    gr_find_plans(obj->n, obj->k, obj->format, &obj->plans);
    if (obj->plans.count > 0 && gr_cpu_has_vector() && obj->format == GR_FORMAT_Q8_0) {
        obj->panel_width = gr_isa_variant()->vlenb();
        return gr_align_up(gr_q8_packed_bytes(obj->n, obj->k, obj->panel_width));
    }
    if (obj->plans.count > 0 && gr_cpu_has_vector()) {
        obj->panel_width = gr_panel_width();
        obj->layout = gr_isa_variant()->layout;
        size_t words = gr_packed_words(obj->n, obj->k, obj->panel_width);
        return gr_align_up(words * sizeof(uint32_t));
    }
    obj->panel_width = 0;
    if (obj->format == GR_FORMAT_Q8_0)
        return gr_align_up(obj->n * (obj->k / GR_Q8_BLOCK) * GR_Q8_BLOCK_BYTES);
    return gr_align_up(obj->n * obj->k * sizeof(uint16_t));
}

gemm_rvv_status gr_weight_new(uint32_t format, int64_t n, int64_t k, void *mem, size_t mem_bytes,
                              struct gemm_rvv_weight **out)
{
    gemm_rvv_status s;
    if ((s = gr_isa_status()) != GEMM_RVV_OK)
        return s;
    if ((s = check_shape(format, n, k)) != GEMM_RVV_OK)
        return s;
    struct gemm_rvv_weight *obj = calloc(1, sizeof *obj);
    if (!obj)
        return GEMM_RVV_ERR_NOMEM;
    obj->n = (size_t)n;
    obj->k = (size_t)k;
    obj->format = format;
    size_t bytes = choose_form(obj);
    obj->bytes = bytes;
    obj->external = mem != NULL;
    if (bytes == 0)
        s = GEMM_RVV_ERR_OVERFLOW;
    else if (obj->external && (mem_bytes < bytes || (uintptr_t)mem % GEMM_RVV_WEIGHT_ALIGN != 0))
        s = GEMM_RVV_ERR_BUFFER;
    else if (!obj->external && !(mem = gr_alloc_aligned(bytes)))
        s = GEMM_RVV_ERR_NOMEM;
    else if (init_lock(&obj->lock) != 0)
        s = GEMM_RVV_ERR_NOMEM;
    if (s != GEMM_RVV_OK) {
        if (!obj->external)
            free(mem);
        free(obj);
        return s;
    }
    if (obj->panel_width)
        obj->packed = mem;
    else if (format == GR_FORMAT_Q8_0)
        obj->q8 = mem;
    else
        obj->plain = mem;
    *out = obj;
    return GEMM_RVV_OK;
}

gemm_rvv_status gr_weight_form_bytes(uint32_t format, int64_t n, int64_t k, size_t *bytes)
{
    gemm_rvv_status s;
    if ((s = gr_isa_status()) != GEMM_RVV_OK)
        return s;
    if (!bytes)
        return GEMM_RVV_ERR_NULL;
    if ((s = check_shape(format, n, k)) != GEMM_RVV_OK)
        return s;
    struct gemm_rvv_weight form = {.n = (size_t)n, .k = (size_t)k, .format = format};
    size_t need = choose_form(&form);
    if (need == 0)
        return GEMM_RVV_ERR_OVERFLOW;
    *bytes = need;
    return GEMM_RVV_OK;
}

void gr_weight_publish(struct gemm_rvv_weight *obj, gemm_rvv_weight **out)
{
    for (size_t i = 0; i < sizeof obj->counters / sizeof obj->counters[0]; i++)
        atomic_init(&obj->counters[i], NULL);
    /* Done at load when threads.c is linked; a program may create weights and never call. */
    gr_fork_register();
    pthread_mutex_lock(&live_lock);
    obj->next = live;
    if (live)
        live->prev = obj;
    live = obj;
    pthread_mutex_unlock(&live_lock);
    *out = obj;
}

gemm_rvv_status gemm_rvv_weight_create(const uint16_t *w, int64_t n, int64_t k, int64_t ldw,
                                       gemm_rvv_weight **out)
{
    gemm_rvv_status s;
    if ((s = gr_isa_status()) != GEMM_RVV_OK)
        return s;
    if (!w || !out)
        return GEMM_RVV_ERR_NULL;
    if ((s = gr_check_matrix(n, k, ldw, sizeof(uint16_t))) != GEMM_RVV_OK)
        return s;
    struct gemm_rvv_weight *obj;
    if ((s = gr_weight_new(GR_FORMAT_BF16, n, k, NULL, 0, &obj)) != GEMM_RVV_OK)
        return s;
    store_weights(obj, w, (size_t)ldw);
    gr_weight_publish(obj, out);
    return GEMM_RVV_OK;
}

gemm_rvv_status gemm_rvv_weight_bytes(int64_t n, int64_t k, size_t *bytes)
{
    return gr_weight_form_bytes(GR_FORMAT_BF16, n, k, bytes);
}

gemm_rvv_status gr_weight_create_in(uint32_t format, int64_t n, int64_t k, void *mem,
                                    size_t mem_bytes, gemm_rvv_weight **out)
{
    gemm_rvv_status s;
    if ((s = gr_isa_status()) != GEMM_RVV_OK)
        return s;
    if (!mem || !out)
        return GEMM_RVV_ERR_NULL;
    struct gemm_rvv_weight *obj;
    if ((s = gr_weight_new(format, n, k, mem, mem_bytes, &obj)) != GEMM_RVV_OK)
        return s;
    if (obj->packed && format == GR_FORMAT_Q8_0)
        gr_q8_pack_zero_padding(obj->n, obj->k, obj->panel_width, obj->packed);
    else if (obj->packed)
        gr_pack_zero_padding(obj->n, obj->k, obj->panel_width, obj->layout, obj->packed);
    gr_weight_publish(obj, out);
    return GEMM_RVV_OK;
}

gemm_rvv_status gemm_rvv_weight_create_in(int64_t n, int64_t k, void *mem, size_t mem_bytes,
                                          gemm_rvv_weight **out)
{
    return gr_weight_create_in(GR_FORMAT_BF16, n, k, mem, mem_bytes, out);
}

gemm_rvv_status gr_weight_check_range(const gemm_rvv_weight *weight, uint32_t format,
                                      const void *buf, size_t first, size_t count)
{
    if (gr_isa_status() != GEMM_RVV_OK)
        return gr_isa_status();
    if (!weight || !buf)
        return GEMM_RVV_ERR_NULL;
    if (weight->format != format)
        return GEMM_RVV_ERR_FORMAT;
    size_t total = weight->n * (format == GR_FORMAT_Q8_0 ? weight->k / GR_Q8_BLOCK : weight->k);
    return first > total || count > total - first ? GEMM_RVV_ERR_RANGE : GEMM_RVV_OK;
}

gemm_rvv_status gemm_rvv_weight_write(gemm_rvv_weight *weight, const uint16_t *src,
                                      size_t first, size_t count)
{
    gemm_rvv_status s = gr_weight_check_range(weight, GR_FORMAT_BF16, src, first, count);
    if (s != GEMM_RVV_OK)
        return s;
    if (pthread_rwlock_wrlock(&weight->lock) != 0)
        return GEMM_RVV_ERR_THREADS;
    if (weight->packed)
        gr_pack_range(src, first, count, weight->n, weight->k, weight->panel_width,
                      weight->layout, weight->packed);
    else
        memcpy(weight->plain + first, src, count * sizeof *src);
    unlock(&weight->lock);
    return GEMM_RVV_OK;
}

gemm_rvv_status gemm_rvv_weight_read(const gemm_rvv_weight *weight, uint16_t *dst, size_t first,
                                     size_t count)
{
    gemm_rvv_status s = gr_weight_check_range(weight, GR_FORMAT_BF16, dst, first, count);
    if (s != GEMM_RVV_OK)
        return s;
    if ((s = gr_weight_hold(weight)) != GEMM_RVV_OK)
        return s;
    for (size_t e = first; e < first + count; e++)
        dst[e - first] = weight->packed ? gr_packed_get(weight->packed, weight->layout, weight->k,
                                                        weight->panel_width, e / weight->k,
                                                        e % weight->k)
                                        : weight->plain[e];
    gr_weight_release(weight);
    return GEMM_RVV_OK;
}

gemm_rvv_status gemm_rvv_weight_update(gemm_rvv_weight *weight, const uint16_t *w, int64_t ldw)
{
    if (gr_isa_status() != GEMM_RVV_OK)
        return gr_isa_status();
    if (!weight || !w)
        return GEMM_RVV_ERR_NULL;
    if (weight->format != GR_FORMAT_BF16)
        return GEMM_RVV_ERR_FORMAT;
    gemm_rvv_status s = gr_check_matrix((int64_t)weight->n, (int64_t)weight->k, ldw,
                                        sizeof(uint16_t));
    if (s != GEMM_RVV_OK)
        return s;
    if (pthread_rwlock_wrlock(&weight->lock) != 0)
        return GEMM_RVV_ERR_THREADS;
    store_weights(weight, w, (size_t)ldw);
    unlock(&weight->lock);
    return GEMM_RVV_OK;
}

gemm_rvv_status gemm_rvv_weight_free(gemm_rvv_weight *weight)
{
    if (!weight)
        return GEMM_RVV_OK;
    pthread_mutex_lock(&live_lock);
    /* Held by a call, read, write or update running on it: freeing it would pull the weights
     * from under them. Once taken, nothing running holds it. */
    if (pthread_rwlock_trywrlock(&weight->lock) != 0) {
        pthread_mutex_unlock(&live_lock);
        return GEMM_RVV_ERR_BUSY;
    }
    unlock(&weight->lock);
    pthread_rwlock_destroy(&weight->lock);
    if (weight->prev)
        weight->prev->next = weight->next;
    else
        live = weight->next;
    if (weight->next)
        weight->next->prev = weight->prev;
    pthread_mutex_unlock(&live_lock);
    if (!weight->external) {
        free(weight->packed);
        free(weight->plain);
        free(weight->q8);
    }
    free(weight);
    return GEMM_RVV_OK;
}

gemm_rvv_status gr_weight_check_alias(const gemm_rvv_weight *weight, const void *y, size_t m,
                                      size_t ldy, gemm_rvv_type y_type)
{
    const void *copy = weight->packed ? (const void *)weight->packed
                       : weight->q8   ? (const void *)weight->q8
                                      : (const void *)weight->plain;
    return gr_check_alias_bytes(y, m, weight->n, ldy, y_type, copy, weight->bytes);
}

struct gr_weight_view gr_weight_view_of(const gemm_rvv_weight *weight)
{
    return (struct gr_weight_view){.packed = weight->packed, .layout = weight->layout,
                                   .panel_width = weight->panel_width, .plain = weight->plain,
                                   .ldw = weight->k, .n = weight->n, .k = weight->k,
                                   .format = weight->format, .q8_blocks = weight->q8};
}

gemm_rvv_status gr_weight_lock(gemm_rvv_weight *weight)
{
    return pthread_rwlock_wrlock(&weight->lock) == 0 ? GEMM_RVV_OK : GEMM_RVV_ERR_THREADS;
}

void gr_weight_unlock(const gemm_rvv_weight *weight)
{
    unlock((pthread_rwlock_t *)&weight->lock);
}

gemm_rvv_status gr_weight_hold(const gemm_rvv_weight *weight)
{
    return pthread_rwlock_rdlock((pthread_rwlock_t *)&weight->lock) == 0 ? GEMM_RVV_OK
                                                                         : GEMM_RVV_ERR_THREADS;
}

void gr_weight_release(const gemm_rvv_weight *weight)
{
    unlock((pthread_rwlock_t *)&weight->lock);
}

void gr_weights_fork_prepare(void)
{
    pthread_mutex_lock(&live_lock);
    for (struct gemm_rvv_weight *w = live; w; w = w->next)
        w->fork_locked = pthread_rwlock_wrlock(&w->lock) == 0;
}

void gr_weights_fork_parent(void)
{
    for (struct gemm_rvv_weight *w = live; w; w = w->next)
        if (w->fork_locked) {
            w->fork_locked = 0;
            unlock(&w->lock);
        }
    pthread_mutex_unlock(&live_lock);
}

/* glibc's rwlock knows its writer by thread id, which fork() changes: the child cannot unlock
 * what the parent's thread locked, so it makes each lock again (no other thread can hold one:
 * the child has only this one). */
void gr_weights_fork_child(void)
{
    for (struct gemm_rvv_weight *w = live; w; w = w->next) {
        w->fork_locked = 0;
        if (init_lock(&w->lock) != 0) {
            fputs("gemm_rvv: a weight object's lock could not be made again after fork\n",
                  stderr);
            abort();
        }
    }
    pthread_mutex_unlock(&live_lock);
}
