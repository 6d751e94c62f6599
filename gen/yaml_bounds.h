/* The bounds a shapes file must keep before libyaml builds a document of it: its size, how deep
 * it nests and how many nodes it holds once its aliases are expanded. A file of a few hundred
 * KB could otherwise cost gigabytes (aliases repeated) or minutes (deep nesting) to read. */
#ifndef GEN_YAML_BOUNDS_H
#define GEN_YAML_BOUNDS_H

#include <stddef.h>
#include <yaml.h>

#include "diag.h"

/* A real shapes file is a few KB and nests 4 deep (top mapping, layers, a layer, its M list);
 * these leave room for 200,000 layers. */
#ifndef SHAPES_FILE_MAX
#define SHAPES_FILE_MAX (32ul << 20) /* bytes */
#endif
#ifndef SHAPES_DEPTH_MAX
#define SHAPES_DEPTH_MAX 32 /* nested lists and mappings */
#endif
#ifndef SHAPES_NODES_MAX
#define SHAPES_NODES_MAX 4000000ul /* scalars, lists and mappings, each alias counted expanded */
#endif

/* Walks the events of `text` (every document) and reports the first bound it breaks, or the
 * first malformed YAML, at its line and column. Returns 0, or -1 after reporting. */
int yaml_check_bounds(const char *text, size_t len, struct diag *d);

/* Initialises `parser` to read `text`. Returns 0, or -1 after reporting out of memory. */
int yaml_parser_start(yaml_parser_t *parser, const char *text, size_t len, struct diag *d);

/* Reports a libyaml parser or loader failure: malformed YAML where it stands, or out of memory. */
void yaml_report_error(struct diag *d, const yaml_parser_t *parser);

#endif
