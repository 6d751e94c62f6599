/* The parts of ggml's backend interface the plugin implements, declared for the ABI of ggml
 * 0.27 (backend API version 3), whose own declarations are internal to ggml and not shipped
 * in libggml-dev. Only the layout matters to ggml: each table is a row of function pointers in
 * a fixed order, which the static assertions below pin to the offsets libggml-base 0.27.0
 * reads them at. The public types (tensors, enums, the handles' typedefs) come from
 * libggml-dev's headers. */
#ifndef GRG_GGML_ABI_H
#define GRG_GGML_ABI_H

#include <stdbool.h>
#include <stddef.h>

#include "ggml-backend.h"
#include "ggml.h"

/* The ggml release this ABI is written for (major.minor, as ggml_version() starts) and the
 * backend API version ggml 0.27 requires of a loaded backend's registry. */
#define GRG_GGML_ABI_RELEASE "0.27"
#define GRG_BACKEND_API_VERSION 3

/* Buffer type: how to allocate buffers that hold tensors of one kind of memory. */
struct ggml_backend_buffer_type_i {
    const char *(*name)(ggml_backend_buffer_type_t buft);
    ggml_backend_buffer_t (*alloc_buffer)(ggml_backend_buffer_type_t buft, size_t size);
    /* optional: allocate a buffer for these tensors at once */
    ggml_backend_buffer_t (*alloc_buffer_for)(ggml_backend_buffer_type_t buft,
                                              struct ggml_tensor **tensors, int count);
    size_t (*alignment)(ggml_backend_buffer_type_t buft);
    size_t (*max_size)(ggml_backend_buffer_type_t buft);                         /* optional */
    size_t (*alloc_size)(ggml_backend_buffer_type_t buft, const struct ggml_tensor *t); /* optional */
    size_t (*alloc_size_for)(ggml_backend_buffer_type_t buft, struct ggml_tensor **tensors,
                             int count);                                        /* optional */
    bool (*is_host)(ggml_backend_buffer_type_t buft);                            /* optional */
};

struct ggml_backend_buffer_type {
    struct ggml_backend_buffer_type_i iface;
    ggml_backend_dev_t device;
    void *context;
};

/* Buffer: one allocation, tensors placed in it by ggml's allocator. */
struct ggml_backend_buffer_i {
    void (*free_buffer)(ggml_backend_buffer_t buf);                                  /* optional */
    void *(*base)(ggml_backend_buffer_t buf);
    enum ggml_status (*init_tensor)(ggml_backend_buffer_t buf, struct ggml_tensor *t); /* optional */
    void (*memset_tensor)(ggml_backend_buffer_t buf, struct ggml_tensor *t, uint8_t value,
                          size_t offset, size_t size);
    void (*set_tensor)(ggml_backend_buffer_t buf, struct ggml_tensor *t, const void *data,
                       size_t offset, size_t size);
    void (*get_tensor)(ggml_backend_buffer_t buf, const struct ggml_tensor *t, void *data,
                       size_t offset, size_t size);
    void (*set_tensor_2d)(ggml_backend_buffer_t buf, struct ggml_tensor *t, const void *data,
                          size_t offset, size_t size, size_t copies, size_t stride_t,
                          size_t stride_data);                                       /* optional */
    void (*get_tensor_2d)(ggml_backend_buffer_t buf, const struct ggml_tensor *t, void *data,
                          size_t offset, size_t size, size_t copies, size_t stride_t,
                          size_t stride_data);                                       /* optional */
    bool (*cpy_tensor)(ggml_backend_buffer_t buf, const struct ggml_tensor *src,
                       struct ggml_tensor *dst);                                     /* optional */
    void (*clear)(ggml_backend_buffer_t buf, uint8_t value);
    void (*reset)(ggml_backend_buffer_t buf);                                        /* optional */
};

struct ggml_backend_buffer {
    struct ggml_backend_buffer_i iface;
    ggml_backend_buffer_type_t buft;
    void *context;
    size_t size;
    enum ggml_backend_buffer_usage usage;
};

/* Exported by libggml-base: wraps a backend's buffer in ggml's buffer object. */
GGML_API ggml_backend_buffer_t ggml_backend_buffer_init(ggml_backend_buffer_type_t buft,
                                                        struct ggml_backend_buffer_i iface,
                                                        void *context, size_t size);

/* Backend (stream): runs graphs. Entries marked optional may be NULL. */
struct ggml_backend_i {
    const char *(*name)(ggml_backend_t backend);
    void (*free)(ggml_backend_t backend);
    void (*set_tensor_async)(ggml_backend_t backend, struct ggml_tensor *t, const void *data,
                             size_t offset, size_t size);            /* optional */
    void (*get_tensor_async)(ggml_backend_t backend, const struct ggml_tensor *t, void *data,
                             size_t offset, size_t size);            /* optional */
    void *set_tensor_2d_async, *get_tensor_2d_async; /* optional */
    void *cpy_tensor_async;                          /* optional */
    void (*synchronize)(ggml_backend_t backend);     /* optional */
    void *graph_plan_create, *graph_plan_free;       /* optional */
    void *graph_plan_update, *graph_plan_compute;    /* optional */
    enum ggml_status (*graph_compute)(ggml_backend_t backend, struct ggml_cgraph *graph);
    void (*event_record)(ggml_backend_t backend, ggml_backend_event_t event); /* optional */
    void (*event_wait)(ggml_backend_t backend, ggml_backend_event_t event);   /* optional */
    void *graph_optimize;                            /* optional */
};

struct ggml_backend {
    ggml_guid_t guid;
    struct ggml_backend_i iface;
    ggml_backend_dev_t device;
    void *context;
};

/* Device: what it computes, which buffers it reads, how to start a backend on it. */
struct ggml_backend_device_i {
    const char *(*name)(ggml_backend_dev_t dev);
    const char *(*description)(ggml_backend_dev_t dev);
    void (*memory)(ggml_backend_dev_t dev, size_t *free, size_t *total);
    enum ggml_backend_dev_type (*type)(ggml_backend_dev_t dev);
    void (*props)(ggml_backend_dev_t dev, struct ggml_backend_dev_props *props);
    ggml_backend_t (*init_backend)(ggml_backend_dev_t dev, const char *params);
    ggml_backend_buffer_type_t (*buffer_type)(ggml_backend_dev_t dev);
    ggml_backend_buffer_type_t (*host_buffer_type)(ggml_backend_dev_t dev); /* optional */
    void *buffer_from_host_ptr; /* optional */
    bool (*supports_op)(ggml_backend_dev_t dev, const struct ggml_tensor *op);
    bool (*supports_buft)(ggml_backend_dev_t dev, ggml_backend_buffer_type_t buft);
    bool (*offload_op)(ggml_backend_dev_t dev, const struct ggml_tensor *op); /* optional */
    ggml_backend_event_t (*event_new)(ggml_backend_dev_t dev);                  /* optional */
    void (*event_free)(ggml_backend_dev_t dev, ggml_backend_event_t event);        /* optional */
    void (*event_synchronize)(ggml_backend_dev_t dev, ggml_backend_event_t event); /* optional */
};

/* Event: a point in a backend's stream that another may wait for. */
struct ggml_backend_event {
    struct ggml_backend_device *device;
    void *context;
};

struct ggml_backend_device {
    struct ggml_backend_device_i iface;
    ggml_backend_reg_t reg;
    void *context;
};

/* Registry: what ggml_backend_init returns; ggml refuses it unless api_version matches. */
struct ggml_backend_reg_i {
    const char *(*name)(ggml_backend_reg_t reg);
    size_t (*device_count)(ggml_backend_reg_t reg);
    ggml_backend_dev_t (*device)(ggml_backend_reg_t reg, size_t index);
    void *(*proc_address)(ggml_backend_reg_t reg, const char *name); /* optional */
};

struct ggml_backend_reg {
    int api_version;
    struct ggml_backend_reg_i iface;
    void *context;
};

/* The offsets libggml-base 0.27.0 (riscv64, LP64) reads, from its accessors' code. */
_Static_assert(offsetof(struct ggml_backend_buffer_type, iface.is_host) == 56, "buft ABI");
_Static_assert(offsetof(struct ggml_backend_buffer_type, device) == 64, "buft ABI");
_Static_assert(offsetof(struct ggml_backend_buffer, iface.clear) == 72, "buffer ABI");
_Static_assert(offsetof(struct ggml_backend_buffer, iface.reset) == 80, "buffer ABI");
_Static_assert(offsetof(struct ggml_backend_buffer, buft) == 88, "buffer ABI");
_Static_assert(offsetof(struct ggml_backend_buffer, size) == 104, "buffer ABI");
_Static_assert(offsetof(struct ggml_backend_buffer, usage) == 112, "buffer ABI");
_Static_assert(sizeof(struct ggml_backend_buffer) == 120, "buffer ABI");
_Static_assert(offsetof(struct ggml_backend, iface.synchronize) == 64, "backend ABI");
_Static_assert(offsetof(struct ggml_backend, iface.graph_compute) == 104, "backend ABI");
_Static_assert(offsetof(struct ggml_backend, device) == 136, "backend ABI");
_Static_assert(offsetof(struct ggml_backend_device, iface.props) == 32, "device ABI");
_Static_assert(offsetof(struct ggml_backend_device, iface.supports_op) == 72, "device ABI");
_Static_assert(offsetof(struct ggml_backend_device, iface.offload_op) == 88, "device ABI");
_Static_assert(offsetof(struct ggml_backend_device, reg) == 120, "device ABI");
_Static_assert(offsetof(struct ggml_backend, iface.set_tensor_async) == 24, "backend ABI");
_Static_assert(offsetof(struct ggml_backend, iface.event_record) == 112, "backend ABI");
_Static_assert(offsetof(struct ggml_backend_device, iface.host_buffer_type) == 56, "device ABI");
_Static_assert(offsetof(struct ggml_backend_device, iface.event_new) == 96, "device ABI");
_Static_assert(offsetof(struct ggml_backend_reg, iface.proc_address) == 32, "registry ABI");
_Static_assert(sizeof(struct ggml_backend_dev_props) == 56, "device properties ABI");

#endif
