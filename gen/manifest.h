/* The build's manifest.json: the gate, the buckets, the target, every (layer, M) with its
 * verdict, and every plan with its four blockings (gen/plan_fields.h's fields). */
#ifndef GEN_MANIFEST_H
#define GEN_MANIFEST_H

#include "emit.h"
#include "template.h"

/* Appends the manifest of plan p of shapes s to out (out->failed when memory ran out). */
void manifest_write(struct text *out, const struct shapes *s, const struct plan *p,
                    const struct emit_options *o);

#endif
