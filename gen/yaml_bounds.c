/* One pass over a shapes file's events (no document is built) that stops at the first bound it
 * breaks. libyaml's scanner costs the square of the nesting depth and its loader the product
 * of anchors and aliases, so those are bounded here as well as the size after expansion. */
#include "yaml_bounds.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef SHAPES_ANCHORS_MAX
#define SHAPES_ANCHORS_MAX 1024 /* per document */
#endif
#ifndef SHAPES_ALIASES_MAX
#define SHAPES_ALIASES_MAX 65536
#endif

struct anchor {
    char *name;
    uint64_t nodes; /* the anchored node's size, aliases in it expanded */
    int open;       /* its list or mapping has not ended yet */
};

struct walk {
    struct diag *d;
    struct anchor anchors[SHAPES_ANCHORS_MAX];
    size_t anchor_count, alias_count;
    int depth;
    size_t open_anchor[SHAPES_DEPTH_MAX]; /* per open list or mapping: its anchor + 1, or 0 */
    uint64_t open_start[SHAPES_DEPTH_MAX]; /* nodes counted before it */
    uint64_t nodes;
};

void yaml_report_error(struct diag *d, const yaml_parser_t *parser)
{
    /* libyaml's loader leaves the error at YAML_NO_ERROR when its copy of a default tag fails
     * (libyaml 0.2.5). */
    if (parser->error == YAML_MEMORY_ERROR || parser->error == YAML_NO_ERROR) {
        diag_out_of_memory(d);
        return;
    }
    diag_error(d, (int)parser->problem_mark.line + 1, (int)parser->problem_mark.column + 1,
               "malformed YAML: %s%s%s", parser->problem ? parser->problem : "parse error",
               parser->context ? " " : "", parser->context ? parser->context : "");
}

static void forget_anchors(struct walk *w)
{
    for (size_t i = 0; i < w->anchor_count; i++)
        free(w->anchors[i].name);
    w->anchor_count = 0;
}

/* The latest anchor of that name (libyaml's loader refuses a repeated one), or NULL. */
static struct anchor *find_anchor(struct walk *w, const char *name)
{
    for (size_t i = w->anchor_count; i-- > 0;)
        if (strcmp(w->anchors[i].name, name) == 0)
            return &w->anchors[i];
    return NULL;
}

/* The line and column of an event, for diag_error. */
#define AT(e) (int)(e)->start_mark.line + 1, (int)(e)->start_mark.column + 1

/* Records the anchor a node starts with (none: 0); returns its index + 1, or -1 after
 * reporting. */
static long define_anchor(struct walk *w, const yaml_event_t *e, const yaml_char_t *anchor)
{
    if (!anchor)
        return 0;
    if (w->anchor_count == SHAPES_ANCHORS_MAX) {
        diag_error(w->d, AT(e), "more than %d anchors (&name) in one document",
                   SHAPES_ANCHORS_MAX);
        return -1;
    }
    char *name = strdup((const char *)anchor);
    if (!name) {
        diag_out_of_memory(w->d);
        return -1;
    }
    w->anchors[w->anchor_count] = (struct anchor){name, 1, 1};
    return (long)++w->anchor_count;
}

static int add_alias(struct walk *w, const yaml_event_t *e)
{
    const char *name = (const char *)e->data.alias.anchor;
    if (++w->alias_count > SHAPES_ALIASES_MAX) {
        diag_error(w->d, AT(e), "more than %d aliases (*name) in the file", SHAPES_ALIASES_MAX);
        return -1;
    }
    struct anchor *a = find_anchor(w, name);
    if (a && a->open) {
        diag_error(w->d, AT(e), "alias *%.40s stands inside the node it names", name);
        return -1;
    }
    w->nodes += a ? a->nodes : 1; /* an unknown anchor: the loader says so */
    return 0;
}

/* One event; returns 0, or -1 after reporting. */
static int walk_event(struct walk *w, const yaml_event_t *e)
{
    long anchor;
    switch (e->type) {
    case YAML_DOCUMENT_START_EVENT:
        forget_anchors(w);
        break;
    case YAML_ALIAS_EVENT:
        if (add_alias(w, e) != 0)
            return -1;
        break;
    case YAML_SCALAR_EVENT:
        if ((anchor = define_anchor(w, e, e->data.scalar.anchor)) < 0)
            return -1;
        if (anchor)
            w->anchors[anchor - 1].open = 0;
        w->nodes++;
        break;
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT:
        if (w->depth == SHAPES_DEPTH_MAX) {
            diag_error(w->d, AT(e), "lists and mappings nest deeper than %d levels here (a "
                       "shapes file needs 4)", SHAPES_DEPTH_MAX);
            return -1;
        }
        anchor = define_anchor(w, e, e->type == YAML_SEQUENCE_START_EVENT
                                         ? e->data.sequence_start.anchor
                                         : e->data.mapping_start.anchor);
        if (anchor < 0)
            return -1;
        w->open_anchor[w->depth] = (size_t)anchor;
        w->open_start[w->depth++] = w->nodes++;
        break;
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        if (w->depth > 0 && w->open_anchor[--w->depth]) {
            struct anchor *a = &w->anchors[w->open_anchor[w->depth] - 1];
            a->nodes = w->nodes - w->open_start[w->depth];
            a->open = 0;
        }
        break;
    default:
        break;
    }
    if (w->nodes > SHAPES_NODES_MAX) {
        diag_error(w->d, AT(e), "the file holds more than %lu values, lists and mappings%s (the most a "
                   "shapes file may)", (unsigned long)SHAPES_NODES_MAX,
                   w->alias_count ? " with its aliases expanded" : "");
        return -1;
    }
    return 0;
}

/* Where byte `offset` of the text stands, as libyaml counts: lines from 1, characters from 1. */
static void position(const char *text, size_t offset, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < offset; i++) {
        if (text[i] == '\n') {
            ++*line;
            *col = 1;
        } else if (((unsigned char)text[i] & 0xc0) != 0x80) {
            ++*col;
        }
    }
}

int yaml_parser_start(yaml_parser_t *parser, const char *text, size_t len, struct diag *d)
{
    if (!yaml_parser_initialize(parser)) {
        diag_out_of_memory(d);
        return -1;
    }
    yaml_parser_set_input_string(parser, (const unsigned char *)text, len);
    return 0;
}

int yaml_check_bounds(const char *text, size_t len, struct diag *d)
{
    if (len > SHAPES_FILE_MAX) {
        int line, col;
        position(text, SHAPES_FILE_MAX, &line, &col);
        diag_error(d, line, col, "the file goes on past %lu MiB here, more than a shapes file "
                   "may hold", (unsigned long)(SHAPES_FILE_MAX >> 20));
        return -1;
    }
    yaml_parser_t parser;
    if (yaml_parser_start(&parser, text, len, d) != 0)
        return -1;
    struct walk *w = calloc(1, sizeof *w);
    int rc = -1;
    if (!w) {
        diag_out_of_memory(d);
        goto out;
    }
    w->d = d;
    for (;;) {
        yaml_event_t e;
        if (!yaml_parser_parse(&parser, &e)) {
            yaml_report_error(d, &parser);
            break;
        }
        int bad = walk_event(w, &e), end = e.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&e);
        if (bad)
            break;
        if (end) {
            rc = 0;
            break;
        }
    }
    forget_anchors(w);
    free(w);
out:
    yaml_parser_delete(&parser);
    return rc;
}
