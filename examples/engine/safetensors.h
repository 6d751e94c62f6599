/* A model's tensors in the safetensors format: one model.safetensors, or the shards listed by
 * model.safetensors.index.json. Files are mapped read-only; a tensor's bytes are checked to lie
 * inside its file before anyone reads them. */
#ifndef ENGINE_SAFETENSORS_H
#define ENGINE_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

enum { ST_MAX_DIMS = 8 };

typedef enum st_dtype { ST_BF16, ST_F16, ST_F32, ST_OTHER } st_dtype;

typedef struct st_tensor {
    st_dtype dtype;
    char dtype_name[16];
    int ndim;
    int64_t shape[ST_MAX_DIMS];
    const unsigned char *data; /* inside the mapping; may be unaligned */
    size_t bytes;
    const char *file;          /* the shard that holds it */
} st_tensor;

typedef struct st_model st_model;

/* Opens the model folder `dir`. On error returns NULL with a message in err. */
st_model *st_open(const char *dir, char *err, size_t err_size);

/* Finds tensor `name` and checks its entry: a known element size for its dtype, a shape whose
 * element count matches its byte range, and a byte range inside the file (a truncated file is
 * caught here, naming the tensor). Returns nonzero with a message naming the tensor on error. */
int st_find(const st_model *m, const char *name, st_tensor *out, char *err, size_t err_size);

void st_close(st_model *m);

#endif
