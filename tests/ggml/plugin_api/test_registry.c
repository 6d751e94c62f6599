/* plugin_api's groups for plugins/ggml/registry.c: the backend's thread count: setting the same
 * count again starts no threads. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- group threads: setting the same count again starts no threads ---- */

/* The process's threads: the entries of /proc/self/task, thread ids, sorted (under QEMU user
 * mode guest threads are host threads; the emulator's own threads are there too and stay). */
#define MAX_TIDS 256
struct tids {
    int n; /* -1: /proc/self/task unreadable */
    long id[MAX_TIDS];
};

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static struct tids threads_now(void)
{
    struct tids t = {.n = 0};
    DIR *dir = opendir("/proc/self/task");
    if (!dir) {
        t.n = -1;
        return t;
    }
    struct dirent *e;
    while ((e = readdir(dir)))
        if (e->d_name[0] != '.' && t.n < MAX_TIDS)
            t.id[t.n++] = strtol(e->d_name, NULL, 10);
    closedir(dir);
    qsort(t.id, (size_t)t.n, sizeof *t.id, cmp_long);
    return t;
}

static bool same_threads(const struct tids *a, const struct tids *b)
{
    return a->n == b->n && memcmp(a->id, b->id, (size_t)a->n * sizeof *a->id) == 0;
}

/* How b differs from a, for messages: counts and the ids that came and went. */
static void describe_threads(char *out, size_t len, const struct tids *a, const struct tids *b)
{
    int gone = 0, came = 0;
    for (int i = 0; i < a->n; i++)
        gone += !bsearch(&a->id[i], b->id, (size_t)b->n, sizeof *b->id, cmp_long);
    for (int i = 0; i < b->n; i++)
        came += !bsearch(&b->id[i], a->id, (size_t)a->n, sizeof *a->id, cmp_long);
    snprintf(out, len, "%d threads, then %d (%d ended, %d started)", a->n, b->n, gone, came);
}

static pthread_mutex_t park_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t park_cond = PTHREAD_COND_INITIALIZER;
static bool park_started, park_release;

static void *parked(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&park_lock);
    park_started = true;
    pthread_cond_broadcast(&park_cond);
    while (!park_release)
        pthread_cond_wait(&park_cond, &park_lock);
    pthread_mutex_unlock(&park_lock);
    return NULL;
}

void group_threads(void)
{
    const int64_t n = 16, k = 256;
    pa_case_begin();
    /* The counter first: one more thread must show. */
    struct tids before = threads_now();
    pthread_t th;
    if (before.n < 1) {
        pa_fail("cannot read /proc/self/task (%s)", strerror(errno));
    } else if (pthread_create(&th, NULL, parked, NULL) != 0) {
        pa_fail("pthread_create failed");
    } else {
        pthread_mutex_lock(&park_lock);
        while (!park_started)
            pthread_cond_wait(&park_cond, &park_lock);
        pthread_mutex_unlock(&park_lock);
        struct tids during = threads_now();
        pthread_mutex_lock(&park_lock);
        park_release = true;
        pthread_cond_broadcast(&park_cond);
        pthread_mutex_unlock(&park_lock);
        pthread_join(th, NULL);
        /* Under QEMU an ended thread can stay listed a moment after pthread_join. */
        struct tids after = threads_now();
        for (int i = 0; i < 200 && !same_threads(&before, &after); i++) {
            nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
            after = threads_now();
        }
        if (during.n != before.n + 1 || !same_threads(&before, &after))
            pa_fail("test premise: /proc/self/task counted %d threads, %d with one more started, "
                    "%d after it ended", before.n, during.n, after.n);
    }
    ggml_backend_set_n_threads_t set = pa_set_threads_fn(pa_dev_rvv);
    if (!set)
        pa_fail("GEMM_RVV's registry has no ggml_backend_set_n_threads");
    struct weight w = {0};
    uint16_t *bits = pa_xmalloc((size_t)(n * k) * sizeof *bits);
    if (!pa_failure[0] && pa_weight_random(&w, n, k, "w", bits)) {
        /* The CPU's result first: between the snapshots only GEMM_RVV computes (the CPU
         * backend's OpenMP threads would come and go with its own work). */
        pa_check_product(w.t, bits, 9, "before the thread counts"); /* both backends warm */
        struct ggml_context *ctx = pa_ctx_new(8, 1);
        struct ggml_tensor *x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, 9);
        struct ggml_tensor *y = ggml_mul_mat(ctx, w.t, x);
        ggml_backend_buffer_t abuf = pa_alloc_in(ctx, pa_buft_cpu, false);
        if (abuf) {
            float xs[256 * 9], y1[16 * 9], y2[16 * 9];
            pa_fill_f32(xs, sizeof xs / sizeof *xs, 1.0f);
            ggml_backend_tensor_set(x, xs, 0, sizeof xs);
            struct ggml_cgraph *g = ggml_new_graph(ctx);
            ggml_build_forward_expand(g, y);
            /* As llama.cpp does before every graph: set the count, compute. */
            set(pa_be_rvv, 3);
            enum ggml_status s1 = pa_compute(pa_be_rvv, g); /* the pool's threads exist now */
            ggml_backend_tensor_get(y, y1, 0, sizeof y1);
            struct tids first = threads_now();
            set(pa_be_rvv, 3);
            struct tids second = threads_now();
            enum ggml_status s2 = pa_compute(pa_be_rvv, g);
            ggml_backend_tensor_get(y, y2, 0, sizeof y2);
            struct tids third = threads_now();
            char how[160];
            if (s1 != GGML_STATUS_SUCCESS || s2 != GGML_STATUS_SUCCESS)
                pa_fail("GEMM_RVV's graph_compute returned %s, then %s", pa_status_name(s1),
                        pa_status_name(s2));
            else if (memcmp(y1, y2, sizeof y1) != 0)
                pa_fail("the same product on 3 threads gave other bits the second time");
            if (!same_threads(&first, &second)) {
                describe_threads(how, sizeof how, &first, &second);
                pa_fail("setting 3 threads again changed the process's threads: %s", how);
            } else if (!same_threads(&first, &third)) {
                describe_threads(how, sizeof how, &first, &third);
                pa_fail("a product after setting 3 threads again changed the process's threads: "
                        "%s", how);
            }
            if (pa_verbose)
                fprintf(stderr, "plugin_api: threads: %d, %d, %d\n", first.n, second.n, third.n);
            ggml_backend_buffer_free(abuf);
        }
        ggml_free(ctx);
    }
    if (w.ctx)
        pa_weight_free(&w);
    free(bits);
    pa_case_end("threads: the same count set again starts no threads");
}

/* ---- group devices: the layers' iGPU device and the CPU layers' accelerator ---- */

void group_devices(void)
{
    pa_case_begin();
    ggml_backend_dev_t layers = ggml_backend_dev_by_name("GEMM_RVV");
    ggml_backend_dev_t accel = ggml_backend_dev_by_name("GEMM_RVV_ACCEL");
    if (!layers || !accel) {
        pa_fail("devices GEMM_RVV %p and GEMM_RVV_ACCEL %p", (void *)layers, (void *)accel);
    } else {
        /* llama.cpp gives layers to (i)GPU devices, and puts accelerators' buffer types first
         * among the CPU's: both kinds, with one buffer type, so a tied embedding is one tensor. */
        if (ggml_backend_dev_type(layers) != GGML_BACKEND_DEVICE_TYPE_IGPU)
            pa_fail("GEMM_RVV is of type %d, not an iGPU (%d)", (int)ggml_backend_dev_type(layers),
                    (int)GGML_BACKEND_DEVICE_TYPE_IGPU);
        if (ggml_backend_dev_type(accel) != GGML_BACKEND_DEVICE_TYPE_ACCEL)
            pa_fail("GEMM_RVV_ACCEL is of type %d, not an accelerator (%d)",
                    (int)ggml_backend_dev_type(accel), (int)GGML_BACKEND_DEVICE_TYPE_ACCEL);
        if (ggml_backend_dev_buffer_type(layers) != ggml_backend_dev_buffer_type(accel))
            pa_fail("the two devices have different buffer types");
        /* The accelerator's backend computes a product on a packed weight as the iGPU's does. */
        ggml_backend_t saved = pa_be_rvv;
        pa_be_rvv = ggml_backend_dev_init(accel, NULL);
        if (!pa_be_rvv) {
            pa_fail("GEMM_RVV_ACCEL's backend cannot be started");
        } else {
            uint16_t *bits = pa_xmalloc(16 * 256 * sizeof *bits);
            struct weight w;
            if (pa_weight_random(&w, 16, 256, "w_accel", bits))
                pa_check_product(w.t, bits, 3, "GEMM_RVV_ACCEL");
            pa_weight_free(&w);
            free(bits);
            ggml_backend_free(pa_be_rvv);
        }
        pa_be_rvv = saved;
    }
    pa_case_end("GEMM_RVV an iGPU, GEMM_RVV_ACCEL an accelerator, one buffer type, both compute");
}
