#include "shape_list.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "shapes.h"

static int append(struct shape_list *list, const char *name, int64_t m, int64_t n, int64_t k)
{
    struct bench_shape *items = realloc(list->items, (list->count + 1) * sizeof *items);
    if (!items) {
        fprintf(stderr, "gemm-rvv-bench: out of memory\n");
        return -1;
    }
    list->items = items;
    struct bench_shape *s = &items[list->count++];
    snprintf(s->name, sizeof s->name, "%s", name);
    s->m = m;
    s->n = n;
    s->k = k;
    return 0;
}

int shape_list_read(struct shape_list *list, const char *path, const char *text)
{
    struct diag d = {path, stderr, 0};
    struct shapes file;
    int rc = text ? shapes_read_buffer(text, strlen(text), &d, &file)
                  : shapes_read_file(path, &d, &file);
    if (rc != 0)
        return -1;
    for (size_t l = 0; l < file.count && rc == 0; l++)
        for (size_t i = 0; i < file.layers[l].m_count && rc == 0; i++)
            rc = append(list, file.layers[l].name, (int64_t)file.layers[l].m[i],
                        (int64_t)file.layers[l].n, (int64_t)file.layers[l].k);
    shapes_free(&file);
    return rc;
}

int shape_list_add_spec(struct shape_list *list, const char *spec)
{
    int64_t v[3];
    const char *p = spec;
    for (int i = 0; i < 3; i++) {
        char *end;
        long long x = strtoll(p, &end, 10);
        if (end == p || x <= 0 || x > INT32_MAX || *end != (i < 2 ? ',' : '\0')) {
            fprintf(stderr, "gemm-rvv-bench: --shape %s: expected M,N,K, three positive integers\n",
                    spec);
            return -1;
        }
        v[i] = x;
        p = end + 1;
    }
    return append(list, "-", v[0], v[1], v[2]); /* no layer name: the columns say the shape */
}

void shape_list_free(struct shape_list *list)
{
    free(list->items);
    list->items = NULL;
    list->count = 0;
}
