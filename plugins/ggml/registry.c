/* The plugin's entry point (ggml_backend_init, which ggml looks up in the file
 * GGML_BACKEND_PATH names), its registry, its two devices and their backend (stream). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin.h"


/* ---- backend (stream): compute.c ---- */

static const char *backend_name(ggml_backend_t backend)
{
    return ggml_backend_dev_name(backend->device);
}

static void backend_free(ggml_backend_t backend)
{
    grg_stream_free(backend->context);
    free(backend);
}

static enum ggml_status backend_graph_compute(ggml_backend_t backend, struct ggml_cgraph *graph)
{
    return grg_stream_compute(backend->context, graph);
}

/* Asynchronous in name only: writes, reads and graphs are done when the call returns, so
 * events and synchronising have nothing to wait for. They are there for llama.cpp's loading
 * without mmap (-lm none), which then reads each weight into a few 1 MiB host buffers and sets
 * it in chunks, instead of into a staging buffer of the largest weight's size. */
static void backend_set_tensor_async(ggml_backend_t backend, struct ggml_tensor *t,
                                     const void *data, size_t offset, size_t size)
{
    (void)backend;
    ggml_backend_tensor_set(t, data, offset, size);
}

static void backend_get_tensor_async(ggml_backend_t backend, const struct ggml_tensor *t,
                                     void *data, size_t offset, size_t size)
{
    (void)backend;
    ggml_backend_tensor_get(t, data, offset, size);
}

static void backend_synchronize(ggml_backend_t backend)
{
    (void)backend;
}

static void backend_event_record(ggml_backend_t backend, ggml_backend_event_t event)
{
    (void)backend;
    (void)event;
}

static const struct ggml_backend_i backend_iface = {
    .name = backend_name,
    .free = backend_free,
    .set_tensor_async = backend_set_tensor_async,
    .get_tensor_async = backend_get_tensor_async,
    .synchronize = backend_synchronize,
    .graph_compute = backend_graph_compute,
    .event_record = backend_event_record,
    .event_wait = backend_event_record,
};

static ggml_guid backend_guid = {0x67, 0x65, 0x6d, 0x6d, 0x5f, 0x72, 0x76, 0x76,
                                 0xbf, 0x16, 0x4b, 0x31, 0x9a, 0x0e, 0x52, 0x56};

/* llama.cpp finds this by name and calls it with its thread count before every graph; the
 * library's pool is process-wide, so the last count set holds for every GEMM_RVV backend, and
 * setting the count that runs starts nothing. The backend's CPU backend gets it too. */
static void set_n_threads(ggml_backend_t backend, int n_threads)
{
    int before = gemm_rvv_get_threads();
    gemm_rvv_status s = gemm_rvv_set_threads(n_threads);
    if (s != GEMM_RVV_OK)
        grg_log(GGML_LOG_LEVEL_WARN, "%s: %d threads asked: %s (running %d)\n", GRG_NAME,
                n_threads, gemm_rvv_strerror(s), gemm_rvv_get_threads());
    else if (gemm_rvv_get_threads() != before)
        grg_log(GGML_LOG_LEVEL_INFO, "%s: %d threads\n", GRG_NAME, gemm_rvv_get_threads());
    grg_stream_set_threads(backend->context, n_threads);
}

/* ---- device ---- */

/* Two devices, one code and one buffer type. llama.cpp gives layers (their weights, norms and
 * KV cache) to GPU and iGPU devices only, so GEMM_RVV, an iGPU (host memory), takes the layers
 * -ngl gives it (all by default) and each of their graphs stays on it whole: one split, flash
 * attention on the layer's device. GEMM_RVV_ACCEL, an accelerator, puts the same buffer type
 * first among the CPU's, for the layers llama.cpp keeps on the CPU (-ngl 0, or beyond -ngl)
 * and for the token embedding's table, so that a tied embedding and its lm_head are one tensor. */
#define DEVICES 2
static struct ggml_backend_device devices[DEVICES];
#define LAYERS_DEVICE (&devices[0])

static const char *device_name(ggml_backend_dev_t dev)
{
    return dev == LAYERS_DEVICE ? GRG_NAME : GRG_NAME "_ACCEL";
}

static const char *device_description(ggml_backend_dev_t dev)
{
    static char text[DEVICES][128];
    int i = dev != LAYERS_DEVICE;
    if (!text[i][0])
        snprintf(text[i], sizeof text[i], "gemm_rvv %s BF16 and Q8_0 Linear kernels (%s)%s",
                 gemm_rvv_version(), gemm_rvv_isa(), i ? ", for layers on the CPU" : "");
    return text[i];
}

/* Host memory. Free is given as the total, as ggml's CPU device gives it: llama.cpp fits a
 * model's layers and context to the GPU devices' free memory, and the free pages of the host
 * (page cache left out, a mapped model's file included) would shrink them below what the same
 * llama.cpp gets without the plugin. */
static void device_memory(ggml_backend_dev_t dev, size_t *free_bytes, size_t *total)
{
    (void)dev;
    long page = sysconf(_SC_PAGESIZE), pages = sysconf(_SC_PHYS_PAGES);
    *total = page > 0 && pages > 0 ? (size_t)page * (size_t)pages : 0;
    *free_bytes = *total;
}

static enum ggml_backend_dev_type device_type(ggml_backend_dev_t dev)
{
    return dev == LAYERS_DEVICE ? GGML_BACKEND_DEVICE_TYPE_IGPU : GGML_BACKEND_DEVICE_TYPE_ACCEL;
}

static void device_props(ggml_backend_dev_t dev, struct ggml_backend_dev_props *props)
{
    memset(props, 0, sizeof *props);
    props->name = device_name(dev);
    props->description = device_description(dev);
    props->type = device_type(dev);
    props->caps.async = true; /* see backend_set_tensor_async */
    props->caps.host_buffer = true;
    props->caps.events = true;
    device_memory(dev, &props->memory_free, &props->memory_total);
}

static ggml_backend_t device_init_backend(ggml_backend_dev_t dev, const char *params)
{
    (void)params;
    ggml_backend_t backend = calloc(1, sizeof *backend);
    struct grg_stream *s = backend ? grg_stream_new(gemm_rvv_get_threads()) : NULL;
    if (!s) {
        free(backend);
        return NULL;
    }
    backend->guid = &backend_guid;
    backend->iface = backend_iface;
    backend->device = dev;
    backend->context = s;
    return backend;
}

static ggml_backend_buffer_type_t device_buffer_type(ggml_backend_dev_t dev)
{
    (void)dev;
    return grg_buffer_type();
}

static ggml_backend_buffer_type_t device_host_buffer_type(ggml_backend_dev_t dev)
{
    (void)dev;
    return grg_host_buffer_type();
}

static ggml_backend_event_t device_event_new(ggml_backend_dev_t dev)
{
    ggml_backend_event_t event = calloc(1, sizeof *event);
    if (event)
        event->device = dev;
    return event;
}

static void device_event_free(ggml_backend_dev_t dev, ggml_backend_event_t event)
{
    (void)dev;
    free(event);
}

static void device_event_synchronize(ggml_backend_dev_t dev, ggml_backend_event_t event)
{
    (void)dev;
    (void)event;
}

static bool device_supports_op(ggml_backend_dev_t dev, const struct ggml_tensor *op)
{
    (void)dev;
    return grg_supports_op(op);
}

/* Its own buffers, and any host memory: the library reads activations where they are. */
static bool device_supports_buft(ggml_backend_dev_t dev, ggml_backend_buffer_type_t buft)
{
    (void)dev;
    return grg_is_own_buffer_type(buft) || ggml_backend_buft_is_host(buft);
}

static const struct ggml_backend_device_i device_iface = {
    .name = device_name,
    .description = device_description,
    .memory = device_memory,
    .type = device_type,
    .props = device_props,
    .init_backend = device_init_backend,
    .buffer_type = device_buffer_type,
    .host_buffer_type = device_host_buffer_type,
    .supports_op = device_supports_op,
    .supports_buft = device_supports_buft,
    .event_new = device_event_new,
    .event_free = device_event_free,
    .event_synchronize = device_event_synchronize,
};

/* ---- registry ---- */

static const char *reg_name(ggml_backend_reg_t reg)
{
    (void)reg;
    return GRG_NAME;
}

static size_t reg_device_count(ggml_backend_reg_t reg)
{
    (void)reg;
    return DEVICES;
}

static ggml_backend_dev_t reg_device(ggml_backend_reg_t reg, size_t index)
{
    (void)reg;
    return index < DEVICES ? &devices[index] : NULL;
}

static void *reg_proc_address(ggml_backend_reg_t reg, const char *name)
{
    (void)reg;
    if (strcmp(name, "ggml_backend_set_n_threads") == 0) {
        ggml_backend_set_n_threads_t fn = set_n_threads;
        return (void *)fn;
    }
    return NULL;
}

static struct ggml_backend_reg registry = {
    .api_version = GRG_BACKEND_API_VERSION,
    .iface = {.name = reg_name, .device_count = reg_device_count, .device = reg_device,
              .proc_address = reg_proc_address},
};

/* The release ggml reports starts with GRG_GGML_ABI_RELEASE and a dot: the same ABI. */
static bool same_release(const char *running)
{
    size_t len = strlen(GRG_GGML_ABI_RELEASE);
    return strncmp(running, GRG_GGML_ABI_RELEASE, len) == 0 && running[len] == '.';
}

__attribute__((visibility("default"))) ggml_backend_reg_t ggml_backend_init(void);

ggml_backend_reg_t ggml_backend_init(void)
{
    const char *running = ggml_version();
    if (!running || !same_release(running)) {
        grg_log(GGML_LOG_LEVEL_ERROR,
                "%s: refusing to load: built for ggml %s (backend API version %d), but this "
                "process runs ggml %s; rebuild the plugin against that ggml\n",
                GRG_NAME, GRG_GGML_ABI_RELEASE, GRG_BACKEND_API_VERSION,
                running ? running : "(unknown)");
        return NULL;
    }
    if (gemm_rvv_isa_status() != GEMM_RVV_OK) {
        grg_log(GGML_LOG_LEVEL_ERROR, "%s: refusing to load: %s (GEMM_RVV_ISA)\n", GRG_NAME,
                gemm_rvv_strerror(gemm_rvv_isa_status()));
        return NULL;
    }
    for (int i = 0; i < DEVICES; i++)
        devices[i] = (struct ggml_backend_device){.iface = device_iface, .reg = &registry};
    grg_buffer_type()->device = LAYERS_DEVICE;
    grg_host_buffer_type()->device = LAYERS_DEVICE;
    grg_log(GGML_LOG_LEVEL_INFO, "%s: loaded into ggml %s: %s, %d threads\n", GRG_NAME, running,
            device_description(LAYERS_DEVICE), gemm_rvv_get_threads());
    return &registry;
}
