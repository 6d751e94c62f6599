/* Compiler-style diagnostics: "FILE:LINE:COL: error: MESSAGE" on a chosen stream. */
#ifndef GEN_DIAG_H
#define GEN_DIAG_H

#include <stdio.h>

struct diag {
    const char *file; /* the name printed before every message */
    FILE *out;        /* where messages go (stderr in the program, a buffer in tests) */
    int errors;       /* how many errors were reported so far */
};

/* Reports an error at a 1-based line and column; line 0 means "the whole file". */
void diag_error(struct diag *d, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The one way the generator's parts report a failed allocation: "FILE: error: out of memory",
 * counted as an error, so the caller stops, fails and writes nothing. Library code never
 * exits; the program ends with status 1. */
void diag_out_of_memory(struct diag *d);

#endif
