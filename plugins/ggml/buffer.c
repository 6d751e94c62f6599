/* The GEMM_RVV buffer type. A buffer is one allocation. A weight the library has plans for
 * (grg_packs) holds only its packed form there: its allocation size is the packed size, a
 * gemm_rvv weight object is made over that memory when the tensor is placed, writes pack into
 * it and reads give back the bytes written, in ggml's layout of its format. Every other
 * tensor (activations, norms, weights without plans) is plain bytes as ggml lays them out. */
#define _DEFAULT_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "plugin.h"

/* The packed tensors of a buffer, by address: ggml-rpc's server and ggml's scheduler hand the
 * plugin tensor structs of their own for the same bytes, so the weight object is found from
 * where the tensor's data lies, not from the struct. Sorted by data; the lock guards it. */
struct grg_buffer {
    void *base;    /* a mapping of its own: freed, a buffer goes back to the system at once */
    size_t mapped; /* (a heap block of a model's size may stay in malloc's heap, and an RPC
                    * server's memory would not come down when its client leaves) */
    struct grg_packed **packed;
    size_t count, capacity;
    pthread_mutex_t lock;
};

static bool compute_buffer(ggml_backend_buffer_t buf)
{
    return buf->usage == GGML_BACKEND_BUFFER_USAGE_COMPUTE;
}

/* The index of the first entry whose data ends after `at`. Lock held. */
static size_t search(const struct grg_buffer *b, const char *at)
{
    size_t lo = 0, hi = b->count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const struct grg_packed *p = b->packed[mid];
        if ((const char *)p->data + p->bytes <= at)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void buffer_free(ggml_backend_buffer_t buf);

/* The buffer of this file's that holds t's bytes (not a multi-buffer ggml made of several). */
static ggml_backend_buffer_t buffer_of(const struct ggml_tensor *t)
{
    const struct ggml_tensor *base = t->view_src ? t->view_src : t;
    ggml_backend_buffer_t buf = base->buffer ? base->buffer : t->buffer;
    return buf && buf->iface.free_buffer == buffer_free ? buf : NULL;
}

struct grg_packed *grg_packed_find(const struct ggml_tensor *t)
{
    ggml_backend_buffer_t buf = buffer_of(t);
    if (!buf || !t->data)
        return NULL;
    struct grg_buffer *b = buf->context;
    pthread_mutex_lock(&b->lock);
    size_t i = search(b, t->data);
    struct grg_packed *p = i < b->count && (const char *)b->packed[i]->data <= (const char *)t->data
                               ? b->packed[i]
                               : NULL;
    pthread_mutex_unlock(&b->lock);
    return p;
}

static void drop_at(struct grg_buffer *b, size_t i)
{
    gemm_rvv_weight_free(b->packed[i]->weight);
    free(b->packed[i]);
    memmove(b->packed + i, b->packed + i + 1, (b->count - i - 1) * sizeof *b->packed);
    b->count--;
}

/* Drops the entries whose bytes meet [data, data + bytes). Lock held. */
static void drop_range(struct grg_buffer *b, const char *data, size_t bytes)
{
    size_t i = search(b, data);
    while (i < b->count && (const char *)b->packed[i]->data < data + bytes)
        drop_at(b, i);
}

static void drop_all(struct grg_buffer *b)
{
    pthread_mutex_lock(&b->lock);
    while (b->count)
        drop_at(b, b->count - 1);
    pthread_mutex_unlock(&b->lock);
}

/* Makes the weight object of a packed tensor over its bytes (its packed size), in place of
 * whatever was there. */
static enum ggml_status place_packed(struct grg_buffer *b, const struct ggml_tensor *t)
{
    const struct grg_format *fmt = grg_format_of(t->type);
    struct grg_packed *p = calloc(1, sizeof *p);
    gemm_rvv_status s = p ? fmt->bytes(t->ne[1], t->ne[0], &p->bytes) : GEMM_RVV_ERR_NOMEM;
    if (s == GEMM_RVV_OK)
        s = fmt->create_in(t->ne[1], t->ne[0], t->data, p->bytes, &p->weight);
    pthread_mutex_lock(&b->lock);
    if (s == GEMM_RVV_OK && b->count == b->capacity) {
        size_t grown = b->capacity ? 2 * b->capacity : 16;
        struct grg_packed **more = realloc(b->packed, grown * sizeof *more);
        if (more) {
            b->packed = more;
            b->capacity = grown;
        } else {
            s = GEMM_RVV_ERR_NOMEM;
        }
    }
    if (s != GEMM_RVV_OK) {
        pthread_mutex_unlock(&b->lock);
        grg_log(GGML_LOG_LEVEL_ERROR, "%s: cannot place %s: %s\n", GRG_NAME, t->name,
                gemm_rvv_strerror(s));
        if (p)
            gemm_rvv_weight_free(p->weight);
        free(p);
        return s == GEMM_RVV_ERR_NOMEM ? GGML_STATUS_ALLOC_FAILED : GGML_STATUS_FAILED;
    }
    p->data = t->data;
    p->n = t->ne[1];
    p->k = t->ne[0];
    p->fmt = fmt;
    drop_range(b, t->data, p->bytes);
    size_t i = search(b, t->data);
    memmove(b->packed + i + 1, b->packed + i, (b->count - i) * sizeof *b->packed);
    b->packed[i] = p;
    b->count++;
    pthread_mutex_unlock(&b->lock);
    return GGML_STATUS_SUCCESS;
}

/* A tensor placed anew: a packed one gets its weight object. */
static enum ggml_status buffer_init_tensor(ggml_backend_buffer_t buf, struct ggml_tensor *t)
{
    if (t->view_src || compute_buffer(buf) || !grg_packs(t))
        return GGML_STATUS_SUCCESS;
    return place_packed(buf->context, t);
}

/* The packed tensor a write reaches: placed by init_tensor, or now: ggml-rpc's server sets
 * weights without placing them, in a layout its client made with ggml_nbytes, so the packed
 * form is placed only where it fits that space (else the weight stays plain and is served
 * unpacked). */
static struct grg_packed *packed_for_write(ggml_backend_buffer_t buf, struct ggml_tensor *t)
{
    struct grg_packed *p = grg_packed_find(t);
    if (p || t->view_src || compute_buffer(buf) || !grg_packs(t) || buffer_of(t) != buf)
        return p;
    struct grg_buffer *b = buf->context;
    size_t bytes, room = (ggml_nbytes(t) + GEMM_RVV_WEIGHT_ALIGN - 1) / GEMM_RVV_WEIGHT_ALIGN *
                         GEMM_RVV_WEIGHT_ALIGN;
    if ((uintptr_t)t->data % GEMM_RVV_WEIGHT_ALIGN != 0 ||
        grg_format_of(t->type)->bytes(t->ne[1], t->ne[0], &bytes) != GEMM_RVV_OK || bytes > room ||
        (char *)t->data + bytes > (char *)b->base + buf->size)
        return NULL;
    return place_packed(b, t) == GGML_STATUS_SUCCESS ? grg_packed_find(t) : NULL;
}

/* ---- bytes of a packed tensor, in ggml's layout ------------------------------------------ */

/* Where a write or read of [offset, offset + size) of tensor t falls in its packed tensor's
 * own bytes, ggml's layout (t may be a view of it). */
static size_t packed_offset(const struct ggml_tensor *t, const struct grg_packed *p,
                            size_t offset)
{
    return (size_t)((const char *)t->data - (const char *)p->data) + offset;
}

/* Units (elements, blocks) a read or write moves through the stack at a time. */
#define CHUNK_BYTES 4352

static size_t min_size(size_t a, size_t b)
{
    return a < b ? a : b;
}

static void read_bytes(const struct grg_packed *p, size_t from, size_t size, unsigned char *out)
{
    size_t u = p->fmt->unit_bytes, per = CHUNK_BYTES / u;
    size_t first = from / u, end = (from + size + u - 1) / u;
    unsigned char chunk[CHUNK_BYTES];
    for (size_t e = first; e < end; e += per) {
        size_t count = min_size(end - e, per);
        p->fmt->read(p->weight, chunk, e, count);
        /* the bytes of this chunk inside [from, from + size) */
        size_t lo = e * u > from ? e * u : from;
        size_t hi = min_size((e + count) * u, from + size);
        memcpy(out + (lo - from), chunk + (lo - e * u), hi - lo);
    }
}

/* Writes bytes into a packed tensor: whole units straight from the source, a unit cut by the
 * range's ends merged with the bytes it keeps. */
static void write_bytes(struct grg_packed *p, size_t from, size_t size, const unsigned char *in)
{
    size_t u = p->fmt->unit_bytes, per = CHUNK_BYTES / u;
    unsigned char chunk[CHUNK_BYTES];
    if (size && from % u) {
        size_t at = from % u, take = min_size(u - at, size);
        read_bytes(p, from - at, u, chunk);
        memcpy(chunk + at, in, take);
        p->fmt->write(p->weight, chunk, from / u, 1);
        from += take, in += take, size -= take;
    }
    size_t whole = size / u;
    if (whole && (uintptr_t)in % 2 == 0) {
        p->fmt->write(p->weight, in, from / u, whole);
    } else {
        for (size_t done = 0; done < whole; done += per) {
            size_t count = min_size(whole - done, per);
            memcpy(chunk, in + u * done, count * u);
            p->fmt->write(p->weight, chunk, from / u + done, count);
        }
    }
    if (size % u) {
        size_t at = from + u * whole;
        read_bytes(p, at, u, chunk);
        memcpy(chunk, in + u * whole, size % u);
        p->fmt->write(p->weight, chunk, at / u, 1);
    }
}

/* Sets [from, from + size) of a packed tensor's bytes, in ggml's layout, to value. */
static void fill_bytes(struct grg_packed *p, size_t from, size_t size, uint8_t value)
{
    unsigned char pattern[CHUNK_BYTES];
    memset(pattern, value, sizeof pattern);
    for (size_t done = 0; done < size; done += sizeof pattern)
        write_bytes(p, from + done, min_size(size - done, sizeof pattern), pattern);
}

/* A packed write goes in pieces that end on a multiple of this in the source's addresses (so
 * on a page boundary), each piece's source pages given back before the next is packed: a
 * weight set from llama.cpp's mapping of the file is never resident twice, not even while it
 * is being packed (its largest weight would be, at once). */
#define RELEASE_PIECE ((size_t)1 << 20)

static void buffer_set(ggml_backend_buffer_t buf, struct ggml_tensor *t, const void *data,
                       size_t offset, size_t size)
{
    struct grg_packed *p = packed_for_write(buf, t);
    if (!p) {
        memcpy((char *)t->data + offset, data, size);
        return;
    }
    const unsigned char *src = data;
    for (size_t done = 0, next; done < size; done = next) {
        next = done + RELEASE_PIECE - ((uintptr_t)(src + done) + RELEASE_PIECE) % RELEASE_PIECE;
        next = next < size ? next : size;
        write_bytes(p, packed_offset(t, p, offset + done), next - done, src + done);
        grg_release_source(src + done, next - done);
    }
}

static void buffer_get(ggml_backend_buffer_t buf, const struct ggml_tensor *t, void *data,
                       size_t offset, size_t size)
{
    (void)buf;
    const struct grg_packed *p = grg_packed_find(t);
    if (p)
        read_bytes(p, packed_offset(t, p, offset), size, data);
    else
        memcpy(data, (const char *)t->data + offset, size);
}

static void buffer_memset(ggml_backend_buffer_t buf, struct ggml_tensor *t, uint8_t value,
                          size_t offset, size_t size)
{
    struct grg_packed *p = packed_for_write(buf, t);
    if (!p) {
        memset((char *)t->data + offset, value, size);
        return;
    }
    fill_bytes(p, packed_offset(t, p, offset), size, value);
}

/* Every byte of every tensor set to value. A packed weight is made anew over its bytes (its
 * padding zero again) and then holds value in every byte of ggml's layout of it. */
static void buffer_clear(ggml_backend_buffer_t buf, uint8_t value)
{
    struct grg_buffer *b = buf->context;
    pthread_mutex_lock(&b->lock);
    memset(b->base, value, buf->size);
    for (size_t i = b->count; i-- > 0;) {
        struct grg_packed *p = b->packed[i];
        gemm_rvv_weight_free(p->weight);
        p->weight = NULL;
        if (p->fmt->create_in(p->n, p->k, p->data, p->bytes, &p->weight) != GEMM_RVV_OK) {
            drop_at(b, i); /* it was made over these bytes before; if not now, read plain */
            continue;
        }
        size_t units = (size_t)(p->n * (p->k / p->fmt->unit_elems));
        fill_bytes(p, 0, units * p->fmt->unit_bytes, value);
    }
    pthread_mutex_unlock(&b->lock);
}

/* The tensors are gone (ggml places new ones): nothing may point at their objects. */
static void buffer_reset(ggml_backend_buffer_t buf)
{
    drop_all(buf->context);
}

static void buffer_free(ggml_backend_buffer_t buf)
{
    struct grg_buffer *b = buf->context;
    drop_all(b);
    pthread_mutex_destroy(&b->lock);
    free(b->packed);
    munmap(b->base, b->mapped);
    free(b);
}

static void *buffer_base(ggml_backend_buffer_t buf)
{
    return ((struct grg_buffer *)buf->context)->base;
}

static const struct ggml_backend_buffer_i buffer_iface = {
    .free_buffer = buffer_free,
    .base = buffer_base,
    .init_tensor = buffer_init_tensor,
    .memset_tensor = buffer_memset,
    .set_tensor = buffer_set,
    .get_tensor = buffer_get,
    .clear = buffer_clear,
    .reset = buffer_reset,
};

/* ---- buffer type ------------------------------------------------------------------------- */

static const char *buft_name(ggml_backend_buffer_type_t buft)
{
    (void)buft;
    return GRG_NAME;
}

static ggml_backend_buffer_t buft_alloc(ggml_backend_buffer_type_t buft, size_t size)
{
    struct grg_buffer *b = calloc(1, sizeof *b);
    if (b) {
        b->mapped = size ? size : 1;
        b->base = mmap(NULL, b->mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (b->base == MAP_FAILED)
            b->base = NULL;
        if (b->base && pthread_mutex_init(&b->lock, NULL) != 0) {
            munmap(b->base, b->mapped);
            b->base = NULL;
        }
    }
    if (!b || !b->base) {
        grg_log(GGML_LOG_LEVEL_ERROR, "%s: cannot allocate a buffer of %zu bytes\n", GRG_NAME,
                size);
        free(b);
        return NULL;
    }
    return ggml_backend_buffer_init(buft, buffer_iface, b, size);
}

static size_t buft_alignment(ggml_backend_buffer_type_t buft)
{
    (void)buft;
    return GEMM_RVV_WEIGHT_ALIGN;
}

/* A packed tensor takes its packed size; ggml's allocator asks before placing it. */
static size_t buft_alloc_size(ggml_backend_buffer_type_t buft, const struct ggml_tensor *t)
{
    (void)buft;
    size_t bytes;
    if (grg_packs(t) && grg_format_of(t->type)->bytes(t->ne[1], t->ne[0], &bytes) == GEMM_RVV_OK &&
        bytes > ggml_nbytes(t))
        return bytes;
    return ggml_nbytes(t);
}

static struct ggml_backend_buffer_type buffer_type = {
    .iface = {.name = buft_name,
              .alloc_buffer = buft_alloc,
              .alignment = buft_alignment,
              .alloc_size = buft_alloc_size},
};

ggml_backend_buffer_type_t grg_buffer_type(void)
{
    return &buffer_type;
}

bool grg_is_own_buffer_type(ggml_backend_buffer_type_t buft)
{
    return buft == &buffer_type;
}

bool grg_reads_packed(const struct ggml_tensor *t)
{
    if (grg_packed_find(t))
        return true;
    /* Not placed yet: llama.cpp asks with the weight in a buffer of size 0, which ggml makes
     * without calling this buffer type (no context, no functions): packed once placed. */
    const struct ggml_tensor *base = t->view_src ? t->view_src : t;
    ggml_backend_buffer_t buf = base->buffer;
    return buf && grg_is_own_buffer_type(buf->buft) && !base->data && !compute_buffer(buf) &&
           grg_packs(base);
}
