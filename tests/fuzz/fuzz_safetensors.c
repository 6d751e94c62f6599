/* libFuzzer target: any bytes as a model folder's model.safetensors, read by the example
 * engine's reader (examples/engine/safetensors.c). Every tensor the header names is looked up;
 * one the reader accepts must have as many bytes as its shape and dtype say, all readable
 * (a range outside the mapping faults). */
#include <jansson.h>

#include "fuzz_file.h"
#include "safetensors.h"

static size_t element_size(st_dtype d) { return d == ST_F32 ? 4 : 2; }

static void check_tensor(const st_tensor *t)
{
    uint64_t count = 1;
    for (int i = 0; i < t->ndim; i++)
        count *= (uint64_t)t->shape[i];
    if (t->dtype == ST_OTHER || t->ndim < 0 || t->ndim > ST_MAX_DIMS ||
        count * element_size(t->dtype) != t->bytes)
        abort();
    volatile unsigned sum = 0;
    for (size_t i = 0; i < t->bytes; i++)
        sum += t->data[i];
}

/* The names of the header, as the harness reads them (up to 32), and a few never present. */
static void look_up_all(const st_model *m, const uint8_t *data, size_t size)
{
    char err[512];
    st_tensor t;
    if (st_find(m, "model.embed_tokens.weight", &t, err, sizeof err) == 0)
        check_tensor(&t);
    if (st_find(m, "", &t, err, sizeof err) == 0)
        check_tensor(&t);
    uint64_t len = 0;
    for (int i = 7; size >= 8 && i >= 0; i--)
        len = len << 8 | data[i];
    if (size < 8 || len > size - 8)
        return;
    json_t *header = json_loadb((const char *)data + 8, (size_t)len, 0, NULL);
    const char *name;
    json_t *value;
    int n = 0;
    json_object_foreach(header, name, value) {
        if (n++ == 32)
            break;
        if (st_find(m, name, &t, err, sizeof err) == 0)
            check_tensor(&t);
    }
    json_decref(header);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[256], err[512];
    fuzz_write("model.safetensors", data, size, path, sizeof path);
    st_model *m = st_open(fuzz_dir(), err, sizeof err);
    if (!m) {
        if (!err[0])
            abort(); /* a failure always says why */
        return 0;
    }
    look_up_all(m, data, size);
    st_close(m);
    return 0;
}
