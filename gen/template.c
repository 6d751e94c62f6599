#include "template.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tvars_add(struct template_vars *t, struct template_var v)
{
    if (t->count == TEMPLATE_VARS_MAX) {
        if (!t->dropped)
            t->dropped = v.name;
        return -1;
    }
    t->v[t->count++] = v;
    return 0;
}

int tvars_number(struct template_vars *t, const char *name, long long value)
{
    return tvars_add(t, (struct template_var){name, NULL, value});
}

int tvars_text(struct template_vars *t, const char *name, const char *value)
{
    return tvars_add(t, (struct template_var){name, value, 0});
}

int text_append(struct text *t, const char *s, size_t n)
{
    if (t->failed)
        return -1;
    if (n >= SIZE_MAX - t->len) {
        t->failed = 1;
        return -1;
    }
    size_t need = t->len + n + 1;
    if (need > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (cap < need)
            cap = cap > SIZE_MAX / 2 ? need : cap * 2;
        char *p = realloc(t->data, cap);
        if (!p) {
            t->failed = 1;
            return -1;
        }
        t->data = p;
        t->cap = cap;
    }
    if (n)
        memcpy(t->data + t->len, s, n);
    t->len += n;
    t->data[t->len] = '\0';
    return 0;
}

int text_printf(struct text *t, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        t->failed = 1;
        return -1;
    }
    if ((size_t)n < sizeof small)
        return text_append(t, small, (size_t)n);
    char *big = malloc((size_t)n + 1);
    if (!big) {
        t->failed = 1;
        return -1;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    int rc = text_append(t, big, (size_t)n);
    free(big);
    return rc;
}

void text_free(struct text *t)
{
    free(t->data);
    t->data = NULL;
    t->len = t->cap = 0;
    t->failed = 0;
}

/* ---- expansion ---------------------------------------------------------------------------- */

struct line {
    const char *start;
    size_t len; /* without the newline */
};

struct expander {
    struct line *lines;
    size_t count;
    struct template_vars vars; /* the caller's, then loop variables pushed on top */
    struct diag *d;
    struct text *out;
    size_t out_start; /* out->len before the expansion: TEMPLATE_OUTPUT_MAX counts from here */
    size_t steps;     /* lines visited or scanned so far, against TEMPLATE_STEPS_MAX */
};

/* A word of a directive line: its text is not NUL-terminated. */
struct word {
    const char *s;
    size_t len;
};

/* Splits s[0..len) at spaces and tabs into at most `max` words; returns how many there are
 * (more than `max` when some did not fit). */
static size_t split_words(const char *s, size_t len, struct word *w, size_t max)
{
    size_t n = 0, i = 0;
    while (i < len) {
        while (i < len && (s[i] == ' ' || s[i] == '\t'))
            i++;
        if (i == len)
            break;
        size_t begin = i;
        while (i < len && s[i] != ' ' && s[i] != '\t')
            i++;
        if (n < max)
            w[n] = (struct word){s + begin, i - begin};
        n++;
    }
    return n;
}

static int word_is(struct word w, const char *s)
{
    return w.len == strlen(s) && memcmp(w.s, s, w.len) == 0;
}

static int step(struct expander *e, size_t lineno)
{
    if (++e->steps <= TEMPLATE_STEPS_MAX)
        return 0;
    diag_error(e->d, (int)lineno + 1, 1,
               "expansion takes more than %d steps (a $for that runs too often?)",
               TEMPLATE_STEPS_MAX);
    return -1;
}

static const struct template_var *lookup(const struct expander *e, const char *name, size_t len)
{
    for (size_t i = e->vars.count; i-- > 0;)
        if (strlen(e->vars.v[i].name) == len && strncmp(e->vars.v[i].name, name, len) == 0)
            return &e->vars.v[i];
    return NULL;
}

/* A decimal number ("-" allowed) that fits a long long; returns 0 or -1. */
static int parse_number(struct word w, long long *out)
{
    size_t digits = w.len > 0 && w.s[0] == '-' ? 1 : 0;
    if (w.len == digits || w.len - digits > 18)
        return -1;
    long long v = 0;
    for (size_t i = digits; i < w.len; i++) {
        if (!isdigit((unsigned char)w.s[i]))
            return -1;
        v = v * 10 + (w.s[i] - '0'); /* 18 digits cannot overflow */
    }
    *out = digits ? -v : v;
    return 0;
}

/* A number, or a variable holding one. */
static int value_of(struct expander *e, size_t lineno, struct word w, long long *out)
{
    if (w.len > 0 && (isdigit((unsigned char)w.s[0]) || w.s[0] == '-')) {
        if (parse_number(w, out) == 0)
            return 0;
        diag_error(e->d, (int)lineno + 1, 1, "not a number of at most 18 digits: \"%.*s\"",
                   (int)w.len, w.s);
        return -1;
    }
    const struct template_var *v = lookup(e, w.s, w.len);
    if (!v || v->text) {
        diag_error(e->d, (int)lineno + 1, 1, "%s \"%.*s\"", v ? "not a number:" : "unknown variable",
                   (int)w.len, w.s);
        return -1;
    }
    *out = v->number;
    return 0;
}

/* Checks what the last appends did to the output: memory, and the size bound. */
static int output_ok(struct expander *e, size_t lineno)
{
    if (e->out->failed) {
        diag_out_of_memory(e->d);
        return -1;
    }
    if (e->out->len - e->out_start > TEMPLATE_OUTPUT_MAX) {
        diag_error(e->d, (int)lineno + 1, 1, "expansion writes more than %lu bytes",
                   TEMPLATE_OUTPUT_MAX);
        return -1;
    }
    return 0;
}

static int emit_line(struct expander *e, size_t lineno)
{
    const char *p = e->lines[lineno].start, *end = p + e->lines[lineno].len;
    while (p < end) {
        const char *dollar = memchr(p, '$', (size_t)(end - p));
        if (!dollar || dollar + 1 >= end || dollar[1] != '{') {
            const char *stop = dollar ? dollar + 1 : end;
            text_append(e->out, p, (size_t)(stop - p));
            p = stop;
            continue;
        }
        text_append(e->out, p, (size_t)(dollar - p));
        const char *name = dollar + 2;
        const char *close = memchr(name, '}', (size_t)(end - name));
        if (!close) {
            diag_error(e->d, (int)lineno + 1, (int)(dollar - e->lines[lineno].start) + 1,
                       "unclosed ${");
            return -1;
        }
        const struct template_var *v = lookup(e, name, (size_t)(close - name));
        if (!v) {
            diag_error(e->d, (int)lineno + 1, (int)(dollar - e->lines[lineno].start) + 1,
                       "unknown variable \"%.*s\"", (int)(close - name), name);
            return -1;
        }
        if (v->text)
            text_append(e->out, v->text, strlen(v->text));
        else
            text_printf(e->out, "%lld", v->number);
        p = close + 1;
    }
    text_append(e->out, "\n", 1);
    return output_ok(e, lineno);
}

/* The directive word of a line ("for", "if", ...) or NULL for a text line; *rest gets what
 * follows it. */
static const char *directive(const struct line *l, const char **rest, size_t *rest_len)
{
    const char *p = l->start, *end = l->start + l->len;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (p + 1 >= end || *p != '$' || p[1] == '{')
        return NULL;
    static const char *const words[] = {"for", "endfor", "if", "else", "endif", "//", NULL};
    for (size_t i = 0; words[i]; i++) {
        size_t n = strlen(words[i]);
        if ((size_t)(end - p - 1) >= n && strncmp(p + 1, words[i], n) == 0 &&
            (p + 1 + n == end || p[1 + n] == ' ' || strcmp(words[i], "//") == 0)) {
            *rest = p + 1 + n;
            while (*rest < end && **rest == ' ')
                (*rest)++;
            *rest_len = (size_t)(end - *rest);
            return words[i];
        }
    }
    return NULL;
}

/* Finds the $else (if any) and the closing line of the block opened at `open`. */
static int block_end(struct expander *e, size_t open, size_t limit, size_t *else_at, size_t *end_at)
{
    int depth = 0;
    *else_at = 0;
    for (size_t i = open + 1; i < limit; i++) {
        const char *rest;
        size_t rest_len;
        if (step(e, i) != 0)
            return -1;
        const char *w = directive(&e->lines[i], &rest, &rest_len);
        if (!w)
            continue;
        if (strcmp(w, "for") == 0 || strcmp(w, "if") == 0) {
            depth++;
        } else if (strcmp(w, "endfor") == 0 || strcmp(w, "endif") == 0) {
            if (depth-- == 0) {
                *end_at = i;
                return 0;
            }
        } else if (strcmp(w, "else") == 0 && depth == 0) {
            *else_at = i;
        }
    }
    diag_error(e->d, (int)open + 1, 1, "block is not closed");
    return -1;
}

static int eval_condition(struct expander *e, size_t lineno, const char *s, size_t len, int *truth)
{
    static const char *const ops[] = {"==", "!=", "<", "<=", ">", ">=", NULL};
    struct word w[3];
    long long lhs, rhs;
    size_t n = split_words(s, len, w, 3);
    size_t op = 0;
    if (n == 3)
        while (ops[op] && !word_is(w[1], ops[op]))
            op++;
    if ((n != 1 && n != 3) || (n == 3 && !ops[op])) {
        diag_error(e->d, (int)lineno + 1, 1, "bad $if condition \"%.*s\"", (int)len, s);
        return -1;
    }
    if (value_of(e, lineno, w[0], &lhs) != 0 || (n == 3 && value_of(e, lineno, w[2], &rhs) != 0))
        return -1;
    if (n == 1) {
        *truth = lhs != 0;
        return 0;
    }
    switch (op) {
    case 0: *truth = lhs == rhs; break;
    case 1: *truth = lhs != rhs; break;
    case 2: *truth = lhs < rhs; break;
    case 3: *truth = lhs <= rhs; break;
    case 4: *truth = lhs > rhs; break;
    default: *truth = lhs >= rhs; break;
    }
    return 0;
}

static int expand_range(struct expander *e, size_t from, size_t to, int depth);

static int expand_for(struct expander *e, size_t at, const char *rest, size_t len, size_t end_at,
                      int depth)
{
    struct word w[4];
    long long lo = 0, hi;
    size_t n = split_words(rest, len, w, 4);
    const char *dots = n == 3 ? memchr(w[2].s, '.', w[2].len) : NULL;
    if (n != 3 || !word_is(w[1], "in") || w[0].len == 0 ||
        (dots && (dots + 1 == w[2].s + w[2].len || dots[1] != '.'))) {
        diag_error(e->d, (int)at + 1, 1, "expected \"$for VAR in A..B\" or \"$for VAR in COUNT\"");
        return -1;
    }
    if (dots) {
        struct word a = {w[2].s, (size_t)(dots - w[2].s)};
        struct word b = {dots + 2, w[2].len - a.len - 2};
        if (value_of(e, at, a, &lo) != 0 || value_of(e, at, b, &hi) != 0)
            return -1;
    } else {
        long long count;
        if (value_of(e, at, w[2], &count) != 0)
            return -1;
        if (count <= 0)
            return 0;
        hi = count - 1;
    }
    if (e->vars.count == TEMPLATE_VARS_MAX) {
        diag_error(e->d, (int)at + 1, 1, "loops nested too deeply");
        return -1;
    }
    char var[64];
    snprintf(var, sizeof var, "%.*s", (int)w[0].len, w[0].s);
    struct template_var *slot = &e->vars.v[e->vars.count++];
    slot->name = var;
    slot->text = NULL;
    int rc = 0;
    /* Written so that i never steps past hi, which may be LLONG_MAX. */
    for (long long i = lo; i <= hi && rc == 0; i++) {
        slot->number = i;
        rc = step(e, at);
        if (rc == 0)
            rc = expand_range(e, at + 1, end_at, depth + 1);
        if (i == hi)
            break;
    }
    e->vars.count--;
    return rc;
}

static int expand_range(struct expander *e, size_t from, size_t to, int depth)
{
    if (depth > TEMPLATE_DEPTH_MAX) {
        diag_error(e->d, (int)from, 1, "blocks nested more than %d deep", TEMPLATE_DEPTH_MAX);
        return -1;
    }
    for (size_t i = from; i < to; i++) {
        const char *rest;
        size_t len;
        if (step(e, i) != 0)
            return -1;
        const char *w = directive(&e->lines[i], &rest, &len);
        if (!w) {
            if (emit_line(e, i) != 0)
                return -1;
            continue;
        }
        if (strcmp(w, "//") == 0)
            continue;
        size_t else_at, end_at;
        if (strcmp(w, "for") == 0 || strcmp(w, "if") == 0) {
            if (block_end(e, i, to, &else_at, &end_at) != 0)
                return -1;
        } else {
            diag_error(e->d, (int)i + 1, 1, "$%s without an opening $for or $if", w);
            return -1;
        }
        if (strcmp(w, "for") == 0) {
            if (else_at) {
                diag_error(e->d, (int)else_at + 1, 1, "$else inside $for");
                return -1;
            }
            if (expand_for(e, i, rest, len, end_at, depth) != 0)
                return -1;
        } else {
            int truth;
            if (eval_condition(e, i, rest, len, &truth) != 0)
                return -1;
            size_t body_end = else_at ? else_at : end_at;
            int rc = truth ? expand_range(e, i + 1, body_end, depth + 1)
                           : else_at ? expand_range(e, else_at + 1, end_at, depth + 1) : 0;
            if (rc != 0)
                return -1;
        }
        i = end_at;
    }
    return 0;
}

int template_expand(const char *source, const struct template_vars *vars, struct diag *d,
                    struct text *out)
{
    if (vars->dropped) {
        diag_error(d, 0, 0, "more than %d template variables: no room for \"%s\"",
                   TEMPLATE_VARS_MAX, vars->dropped);
        return -1;
    }
    struct expander e = {NULL, 0, *vars, d, out, out->len, 0};
    size_t cap = 0;
    const char *p = source;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (e.count == cap) {
            cap = cap ? cap * 2 : 256;
            struct line *grown = realloc(e.lines, cap * sizeof *grown);
            if (!grown) {
                free(e.lines);
                diag_out_of_memory(d);
                return -1;
            }
            e.lines = grown;
        }
        e.lines[e.count].start = p;
        e.lines[e.count].len = len;
        e.count++;
        p += len + (nl ? 1 : 0);
    }
    /* An output that failed before (a caller's header) fails here too: nothing half-made is
     * handed on as a success. */
    int rc = output_ok(&e, 0) == 0 ? expand_range(&e, 0, e.count, 0) : -1;
    free(e.lines);
    return rc;
}
