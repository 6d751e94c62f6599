/* The (layer, M, N, K) shapes to measure: from a shapes file (read by the generator's own
 * reader, so the bench takes exactly the files gemm-rvv-gen takes) or from M,N,K options. */
#ifndef BENCH_SHAPE_LIST_H
#define BENCH_SHAPE_LIST_H

#include <stddef.h>
#include <stdint.h>

struct bench_shape {
    char name[64];
    int64_t m, n, k;
};

struct shape_list {
    struct bench_shape *items;
    size_t count;
};

/* Appends one entry per (layer, M) of a shapes file; text is its content when path is only a
 * name for messages (the file the library was built from, compiled in), else NULL. 0, or -1
 * after the reader's file:line:col messages on stderr. */
int shape_list_read(struct shape_list *list, const char *path, const char *text);

/* Appends "M,N,K" (each a positive integer). 0, or -1 after a message naming the text. */
int shape_list_add_spec(struct shape_list *list, const char *spec);

void shape_list_free(struct shape_list *list);

#endif
