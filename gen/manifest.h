/* The build's manifest.json: the gate, the buckets, the target, every (layer, M) with its
 * verdict, every plan with its four blockings (gen/plan_fields.h's fields), every (attention
 * entry, n_q) with its verdict and every attention plan with its pairs. */
#ifndef GEN_MANIFEST_H
#define GEN_MANIFEST_H

#include "gate.h"
#include "plan.h"
#include "shapes.h"
#include "template.h"

/* Appends the manifest of plan p of shapes s (read from `source`, gated by g, bucketed by b)
 * to out (out->failed when memory ran out). */
void manifest_write(struct text *out, const struct shapes *s, const struct plan *p,
                    const char *source, const struct gate *g, const struct buckets *b);

#endif
