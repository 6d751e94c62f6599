/* Writes a plan out: one C file per kernel from the templates, registry.c and manifest.json,
 * into a fresh folder that replaces the output folder only when everything was written. */
#ifndef GEN_EMIT_H
#define GEN_EMIT_H

#include "plan.h"
#include "shapes.h"

struct emit_options {
    const char *shapes_path;   /* named in headers and the manifest */
    const char *templates_dir;
    const char *out_dir;
    const struct gate *gate;
    const struct buckets *buckets;
    int host_tiles; /* write the host's plain C variants (templates/variants.txt) */
};

/* Returns 0, or -1 after printing why to stderr (the output folder is then as it was). */
int emit_plan(const struct shapes *s, const struct plan *p, const struct emit_options *o);

#endif
