/* A small template expander for the kernel bodies in templates/ (in the spirit of XNNPACK's).
 *
 *   ${NAME}               the value of a variable
 *   $for VAR in A..B      repeat the lines up to $endfor with VAR = A, A+1, ..., B (inclusive;
 *                         none when B < A); A and B are numbers or variables
 *   $for VAR in COUNT     the same with VAR = 0, 1, ..., COUNT-1
 *   $if NAME [OP NUMBER]  keep the lines up to $else/$endif when true (OP: == != < <= > >=;
 *                         without OP: NAME != 0)
 *   $else / $endif / $endfor
 *   $// text              a note for template readers, dropped from the output
 * Directive lines may be indented; they produce no output themselves. */
#ifndef GEN_TEMPLATE_H
#define GEN_TEMPLATE_H

#include <stddef.h>

#include "diag.h"

#define TEMPLATE_VARS_MAX 32
/* Bounds that turn a runaway template into an error instead of a hang or an exhausted memory:
 * the real kernels nest a few blocks, visit some thousands of lines and write some 100 KiB.
 * make fuzz lowers the last two, so that each of its runs stays short. */
#define TEMPLATE_DEPTH_MAX 64             /* nested $for and $if blocks */
#ifndef TEMPLATE_STEPS_MAX
#define TEMPLATE_STEPS_MAX 1000000        /* lines visited or scanned, loop turns included */
#endif
#ifndef TEMPLATE_OUTPUT_MAX
#define TEMPLATE_OUTPUT_MAX (16ul << 20)  /* bytes one expansion may add to its output */
#endif

struct template_var {
    const char *name;
    const char *text; /* a string value, or NULL for a number */
    long long number;
};

struct template_vars {
    struct template_var v[TEMPLATE_VARS_MAX];
    size_t count;
    const char *dropped; /* the first variable that did not fit: template_expand refuses to run */
};

/* Each returns 0, or -1 when all TEMPLATE_VARS_MAX slots are taken (then template_expand
 * reports the variable and fails, so a caller may add variables without checking each). */
int tvars_number(struct template_vars *t, const char *name, long long value);
int tvars_text(struct template_vars *t, const char *name, const char *value);

/* Growable output text. An allocation that fails leaves the text as it was and sets `failed`,
 * which stays set: check it once after building a text, before using it. */
struct text {
    char *data;
    size_t len, cap;
    int failed;
};

int text_append(struct text *t, const char *s, size_t n); /* 0, or -1 when out of memory */
int text_printf(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void text_free(struct text *t);

/* Expands `source` (named d->file in messages) into out. Returns 0, or -1 after reporting
 * (out of memory included, see diag_out_of_memory). */
int template_expand(const char *source, const struct template_vars *vars, struct diag *d,
                    struct text *out);

#endif
