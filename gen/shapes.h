/* What a shapes file says, after it has been checked: the layers and the optional settings. */
#ifndef GEN_SHAPES_H
#define GEN_SHAPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "gate.h"
#include "plan_fields.h"
#include "target.h"

struct layer {
    char *name;
    uint64_t n, k;
    uint64_t *m;    /* the M values the engine calls with, increasing, no repeats */
    size_t m_count;
    enum weight_format format; /* its `weights:`, else the file's, else BF16 */
    int weights_line, weights_col; /* where its own `weights:` is; line 0: it has none */
    int line, col;  /* where the layer starts in the file */
};

/* An attention entry (`attention:`): one attention shape of the model and the query-row counts
 * its engine calls it with. */
struct attention {
    char *name;
    uint64_t head_dim;          /* a multiple of 8 up to GEMM_RVV_ATTENTION_MAX_HEAD_DIM */
    uint64_t q_heads, kv_heads; /* kv_heads divides q_heads */
    enum kv_type k_type, v_type;
    uint64_t *n_q;              /* increasing, no repeats */
    size_t n_q_count;
    int line, col;              /* where the entry starts in the file */
};

struct shapes {
    char *model;             /* optional "model:" text, NULL when absent */
    struct layer *layers;
    size_t count;
    struct gate gate;        /* the file's gate, defaults where it says nothing */
    bool gate_set[4];        /* which of min_n, min_k, max_m, min_mnk the file set */
    struct buckets buckets;  /* the file's buckets, or the defaults */
    bool buckets_set;
    struct target target;    /* the file's target machine, the K1 where it says nothing */
    enum weight_format weights; /* the file's `weights:`, for layers that say none (BF16) */
    struct attention *attention; /* the `attention:` entries, in file order */
    size_t attention_count;
};

/* Reads and checks a shapes file. Returns 0, or -1 after reporting every problem through d. */
int shapes_read_file(const char *path, struct diag *d, struct shapes *out);

/* The same from memory (tests); d->file names it in messages. */
int shapes_read_buffer(const char *text, size_t len, struct diag *d, struct shapes *out);

void shapes_free(struct shapes *s);

#endif
