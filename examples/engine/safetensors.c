/* safetensors: an 8-byte little-endian header length, a JSON header mapping each tensor name to
 * {"dtype", "shape", "data_offsets": [begin, end]} (offsets from the end of the header), then
 * the raw little-endian data. The header is read with jansson. */
#include "safetensors.h"

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The safetensors format's own bound on the JSON header: a larger one is refused before it
 * is parsed. */
enum { ST_HEADER_MAX = 100000000 };

typedef struct st_file {
    char path[4096];
    const unsigned char *map;
    size_t size;
    size_t data_start; /* 8 + header length */
    json_t *header;
} st_file;

struct st_model {
    st_file *files;
    size_t count;
    json_t *weight_map; /* name -> shard file name, NULL for a single file */
};

static int open_file(st_file *f, const char *path, char *err, size_t err_size)
{
    snprintf(f->path, sizeof f->path, "%s", path);
    struct stat st;
    int fd = open_regular_file(path, &st, err, err_size);
    if (fd < 0)
        return 1;
    if (st.st_size < 8) {
        snprintf(err, err_size, "%s: truncated: %lld bytes, shorter than the 8-byte header length",
                 path, (long long)st.st_size);
        close(fd);
        return 1;
    }
    f->size = (size_t)st.st_size;
    void *map = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        snprintf(err, err_size, "%s: cannot map: %s", path, strerror(errno));
        return 1;
    }
    f->map = map;
    uint64_t len = 0;
    for (int i = 7; i >= 0; i--)
        len = len << 8 | f->map[i];
    if (len > ST_HEADER_MAX) {
        snprintf(err, err_size, "%s: the header says %llu bytes, more than the %d the safetensors "
                 "format allows", path, (unsigned long long)len, ST_HEADER_MAX);
        return 1;
    }
    if (len > f->size - 8) {
        snprintf(err, err_size, "%s: truncated: the header says %llu bytes, the file holds %zu after "
                 "the length", path, (unsigned long long)len, f->size - 8);
        return 1;
    }
    f->data_start = 8 + (size_t)len;
    json_error_t jerr;
    f->header = json_loadb((const char *)f->map + 8, (size_t)len, JSON_REJECT_DUPLICATES, &jerr);
    if (!f->header || !json_is_object(f->header)) {
        snprintf(err, err_size, "%s: the header is not a JSON object (%s, at byte %d)", path,
                 f->header ? "another value" : jerr.text, jerr.position);
        return 1;
    }
    return 0;
}

static void join(char *out, size_t size, const char *dir, const char *name)
{
    snprintf(out, size, "%s/%s", dir, name);
}

/* The shards of model.safetensors.index.json, each opened once, in the order first named. */
static int open_index(st_model *m, const char *dir, const char *index_path, char *err, size_t err_size)
{
    json_t *index = json_load_regular(index_path, 0, err, err_size);
    if (!index)
        return 1;
    json_t *map = json_object_get(index, "weight_map");
    if (!json_is_object(map)) {
        snprintf(err, err_size, "%s: \"weight_map\" must be an object", index_path);
        json_decref(index);
        return 1;
    }
    m->weight_map = json_incref(map);
    json_decref(index);
    m->files = calloc(json_object_size(map) + 1, sizeof *m->files);
    if (!m->files) {
        snprintf(err, err_size, "out of memory");
        return 1;
    }
    const char *name;
    json_t *shard;
    json_object_foreach(map, name, shard) {
        if (!json_is_string(shard) || strchr(json_string_value(shard), '/')) {
            snprintf(err, err_size, "%s: the shard of \"%s\" must be a file name", index_path, name);
            return 1;
        }
        char path[4096];
        join(path, sizeof path, dir, json_string_value(shard));
        size_t i = 0;
        while (i < m->count && strcmp(m->files[i].path, path))
            i++;
        if (i == m->count && open_file(&m->files[m->count++], path, err, err_size))
            return 1;
    }
    return 0;
}

st_model *st_open(const char *dir, char *err, size_t err_size)
{
    st_model *m = calloc(1, sizeof *m);
    if (!m) {
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    char path[4096];
    join(path, sizeof path, dir, "model.safetensors.index.json");
    int failed;
    if (access(path, F_OK) == 0) {
        failed = open_index(m, dir, path, err, err_size);
    } else {
        join(path, sizeof path, dir, "model.safetensors");
        m->files = calloc(1, sizeof *m->files);
        failed = !m->files;
        if (failed)
            snprintf(err, err_size, "out of memory");
        else if (access(path, F_OK) != 0)
            snprintf(err, err_size, "%s: neither model.safetensors nor model.safetensors.index.json "
                     "is there", dir), failed = 1;
        else
            failed = open_file(&m->files[m->count++], path, err, err_size);
    }
    if (failed) {
        st_close(m);
        return NULL;
    }
    return m;
}

static st_dtype dtype_of(const char *name, size_t *element_size)
{
    static const struct { const char *name; st_dtype dtype; size_t size; } known[] = {
        {"BF16", ST_BF16, 2}, {"F16", ST_F16, 2}, {"F32", ST_F32, 4}};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (!strcmp(name, known[i].name)) {
            *element_size = known[i].size;
            return known[i].dtype;
        }
    return ST_OTHER;
}

/* Reads the tensor's entry of file f. */
static int read_entry(const st_file *f, const char *name, st_tensor *t, char *err, size_t err_size)
{
    json_t *e = json_object_get(f->header, name);
    json_t *dtype = json_object_get(e, "dtype"), *shape = json_object_get(e, "shape");
    json_t *offsets = json_object_get(e, "data_offsets");
    if (!json_is_string(dtype) || !json_is_array(shape) || json_array_size(shape) > ST_MAX_DIMS ||
        !json_is_array(offsets) || json_array_size(offsets) != 2) {
        snprintf(err, err_size, "tensor %s in %s: its entry needs \"dtype\", \"shape\" (at most %d "
                 "sizes) and \"data_offsets\" [begin, end]", name, f->path, ST_MAX_DIMS);
        return 1;
    }
    snprintf(t->dtype_name, sizeof t->dtype_name, "%s", json_string_value(dtype));
    size_t element_size = 0;
    t->dtype = dtype_of(t->dtype_name, &element_size);
    if (t->dtype == ST_OTHER) {
        snprintf(err, err_size, "tensor %s in %s: dtype %s is not supported (BF16, F16 and F32 are)",
                 name, f->path, t->dtype_name);
        return 1;
    }
    uint64_t count = 1;
    t->ndim = (int)json_array_size(shape);
    for (int i = 0; i < t->ndim; i++) {
        json_t *d = json_array_get(shape, (size_t)i);
        if (!json_is_integer(d) || json_integer_value(d) < 0 || json_integer_value(d) > INT32_MAX) {
            snprintf(err, err_size, "tensor %s in %s: shape entry %d is not a size", name, f->path, i);
            return 1;
        }
        t->shape[i] = json_integer_value(d);
        if (t->shape[i] && count > UINT64_MAX / (uint64_t)t->shape[i]) {
            snprintf(err, err_size, "tensor %s in %s: its shape has too many elements", name, f->path);
            return 1;
        }
        count *= (uint64_t)t->shape[i];
    }
    json_t *b = json_array_get(offsets, 0), *e2 = json_array_get(offsets, 1);
    if (!json_is_integer(b) || !json_is_integer(e2) || json_integer_value(b) < 0 ||
        json_integer_value(e2) < json_integer_value(b)) {
        snprintf(err, err_size, "tensor %s in %s: \"data_offsets\" must be [begin, end], begin <= end",
                 name, f->path);
        return 1;
    }
    uint64_t begin = (uint64_t)json_integer_value(b), end = (uint64_t)json_integer_value(e2);
    size_t data_size = f->size - f->data_start;
    if (end > data_size) {
        snprintf(err, err_size, "tensor %s: its data [%llu, %llu) runs past the end of %s (%zu bytes "
                 "of data): the file is truncated", name, (unsigned long long)begin,
                 (unsigned long long)end, f->path, data_size);
        return 1;
    }
    if (count > data_size || count * element_size != end - begin) {
        snprintf(err, err_size, "tensor %s in %s: %llu bytes of data for %llu elements of %s",
                 name, f->path, (unsigned long long)(end - begin), (unsigned long long)count,
                 t->dtype_name);
        return 1;
    }
    t->data = f->map + f->data_start + begin;
    t->bytes = (size_t)(end - begin);
    t->file = f->path;
    return 0;
}

int st_find(const st_model *m, const char *name, st_tensor *out, char *err, size_t err_size)
{
    const st_file *f = NULL;
    if (m->weight_map) {
        json_t *shard = json_object_get(m->weight_map, name);
        for (size_t i = 0; shard && i < m->count && !f; i++) {
            const char *base = strrchr(m->files[i].path, '/');
            if (!strcmp(base ? base + 1 : m->files[i].path, json_string_value(shard)))
                f = &m->files[i];
        }
    } else if (json_object_get(m->files[0].header, name)) {
        f = &m->files[0];
    }
    if (!f || !json_object_get(f->header, name)) {
        snprintf(err, err_size, "tensor %s is missing from %s", name,
                 f ? f->path : m->weight_map ? "model.safetensors.index.json" : m->files[0].path);
        return 1;
    }
    return read_entry(f, name, out, err, err_size);
}

void st_close(st_model *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->count; i++) {
        if (m->files[i].map)
            munmap((void *)m->files[i].map, m->files[i].size);
        json_decref(m->files[i].header);
    }
    free(m->files);
    json_decref(m->weight_map);
    free(m);
}
