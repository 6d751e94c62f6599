/* The generator's inputs made from text in a test, and its messages kept in memory: for the
 * host tests of gen/'s modules. */
#ifndef TESTS_GEN_INPUT_H
#define TESTS_GEN_INPUT_H

#include <stdio.h>

#include "diag.h"
#include "plan.h"
#include "shapes.h"

/* A struct diag whose messages go to memory. */
struct messages {
    struct diag d;
    char *text;
    size_t size;
};

/* Points m->d (messages named `file`) at a fresh memory buffer. */
void messages_open(struct messages *m, const char *file);

/* Closes the buffer; returns the messages written ("" when none; caller frees). */
char *messages_close(struct messages *m);

/* Reads `text` as a shapes file named `name`; returns the status, the messages go to
 * *messages (caller frees). */
int shapes_from_text(const char *name, const char *text, struct shapes *s, char **messages);

/* Reads `text` and plans it with its own gate, buckets and target; fails the test on an error. */
void plan_from_text(const char *text, struct shapes *s, struct plan *p);

/* A Llama-like shapes file: q, k, up and down projections at several M, and one shape small
 * enough for the fallback (10 (layer, M) entries, 6 plans). */
extern const char llama_shapes[];

#endif
