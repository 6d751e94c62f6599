/* libFuzzer target: any bytes as a shapes file. The reader must end in exactly one of two ways
 * (errors reported and nothing handed back, or no error and checked shapes), and the shapes it
 * accepts must plan. ASan and UBSan catch the rest (make fuzz). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate.h"
#include "plan.h"
#include "shapes.h"

/* What the reader promises about a file it accepted. */
static void check_accepted(const struct shapes *s)
{
    if (s->count == 0 || !s->layers)
        abort();
    for (size_t i = 0; i < s->count; i++) {
        const struct layer *l = &s->layers[i];
        if (!l->name || !l->name[0] || l->n < 1 || l->n > SHAPE_DIM_MAX || l->k < 1 ||
            l->k > SHAPE_DIM_MAX || l->m_count == 0)
            abort();
        for (size_t j = 0; j < l->m_count; j++)
            if (l->m[j] < 1 || l->m[j] > SHAPE_DIM_MAX || (j > 0 && l->m[j] <= l->m[j - 1]))
                abort();
        if (i > 0 && strcmp(l->name, s->layers[i - 1].name) == 0)
            abort(); /* repeated names are merged into one layer */
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    if (!sink)
        sink = fopen("/dev/null", "w");
    struct diag d = {"fuzz.yaml", sink, 0};
    struct shapes s;
    int rc = shapes_read_buffer((const char *)data, size, &d, &s);
    if ((rc == 0) != (d.errors == 0))
        abort();
    if (rc != 0) {
        if (s.layers || s.count || s.model)
            abort(); /* nothing half-read is handed back */
        return 0;
    }
    check_accepted(&s);
    struct plan p;
    if (plan_build(&s, &s.gate, &s.buckets, &s.target, &p) == 0) {
        size_t total = 0;
        for (size_t i = 0; i < s.count; i++)
            total += s.layers[i].m_count;
        if (p.count != total || p.fallback_count > p.count)
            abort();
        plan_free(&p);
    }
    shapes_free(&s);
    return 0;
}
