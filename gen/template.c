#include "template.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tvars_number(struct template_vars *t, const char *name, long long value)
{
    struct template_var v = {name, NULL, value};
    if (t->count < TEMPLATE_VARS_MAX)
        t->v[t->count++] = v;
}

void tvars_text(struct template_vars *t, const char *name, const char *value)
{
    struct template_var v = {name, value, 0};
    if (t->count < TEMPLATE_VARS_MAX)
        t->v[t->count++] = v;
}

void text_append(struct text *t, const char *s, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (cap < t->len + n + 1)
            cap *= 2;
        char *p = realloc(t->data, cap);
        if (!p) {
            fprintf(stderr, "gemm-rvv-gen: out of memory\n");
            exit(1);
        }
        t->data = p;
        t->cap = cap;
    }
    memcpy(t->data + t->len, s, n);
    t->len += n;
    t->data[t->len] = '\0';
}

void text_printf(struct text *t, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        text_append(t, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big)
        return;
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    text_append(t, big, (size_t)n);
    free(big);
}

void text_free(struct text *t)
{
    free(t->data);
    t->data = NULL;
    t->len = t->cap = 0;
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
};

static const struct template_var *lookup(const struct expander *e, const char *name, size_t len)
{
    for (size_t i = e->vars.count; i-- > 0;)
        if (strlen(e->vars.v[i].name) == len && strncmp(e->vars.v[i].name, name, len) == 0)
            return &e->vars.v[i];
    return NULL;
}

/* A number, or a variable holding one. */
static int value_of(struct expander *e, size_t lineno, const char *word, size_t len,
                    long long *out)
{
    if (len > 0 && (isdigit((unsigned char)word[0]) || word[0] == '-')) {
        char buf[32];
        snprintf(buf, sizeof buf, "%.*s", (int)len, word);
        *out = strtoll(buf, NULL, 10);
        return 0;
    }
    const struct template_var *v = lookup(e, word, len);
    if (!v || v->text) {
        diag_error(e->d, (int)lineno + 1, 1, "%s \"%.*s\"", v ? "not a number:" : "unknown variable",
                   (int)len, word);
        return -1;
    }
    *out = v->number;
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
    return 0;
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
    char buf[128], name[64], op[3];
    long long rhs, lhs;
    snprintf(buf, sizeof buf, "%.*s", (int)len, s);
    int n = sscanf(buf, "%63s %2s %lld", name, op, &rhs);
    if (value_of(e, lineno, name, strlen(name), &lhs) != 0)
        return -1;
    if (n == 1) {
        *truth = lhs != 0;
        return 0;
    }
    if (n == 3) {
        if (!strcmp(op, "==")) { *truth = lhs == rhs; return 0; }
        if (!strcmp(op, "!=")) { *truth = lhs != rhs; return 0; }
        if (!strcmp(op, "<")) { *truth = lhs < rhs; return 0; }
        if (!strcmp(op, "<=")) { *truth = lhs <= rhs; return 0; }
        if (!strcmp(op, ">")) { *truth = lhs > rhs; return 0; }
        if (!strcmp(op, ">=")) { *truth = lhs >= rhs; return 0; }
    }
    diag_error(e->d, (int)lineno + 1, 1, "bad $if condition \"%s\"", buf);
    return -1;
}

static int expand_range(struct expander *e, size_t from, size_t to);

static int expand_for(struct expander *e, size_t at, const char *rest, size_t len, size_t end_at)
{
    char var[32], lo_s[32], hi_s[32], buf[128];
    long long lo, hi;
    snprintf(buf, sizeof buf, "%.*s", (int)len, rest);
    char *dots = strstr(buf, "..");
    if (dots) {
        *dots = ' ';
        dots[1] = ' ';
        if (sscanf(buf, "%31s in %31s %31s", var, lo_s, hi_s) != 3) {
            diag_error(e->d, (int)at + 1, 1, "expected \"$for VAR in A..B\"");
            return -1;
        }
        if (value_of(e, at, lo_s, strlen(lo_s), &lo) || value_of(e, at, hi_s, strlen(hi_s), &hi))
            return -1;
    } else {
        if (sscanf(buf, "%31s in %31s", var, hi_s) != 2) {
            diag_error(e->d, (int)at + 1, 1, "expected \"$for VAR in COUNT\"");
            return -1;
        }
        if (value_of(e, at, hi_s, strlen(hi_s), &hi))
            return -1;
        lo = 0;
        hi -= 1;
    }
    if (e->vars.count == TEMPLATE_VARS_MAX) {
        diag_error(e->d, (int)at + 1, 1, "loops nested too deeply");
        return -1;
    }
    struct template_var *slot = &e->vars.v[e->vars.count++];
    slot->name = var;
    slot->text = NULL;
    int rc = 0;
    for (long long i = lo; i <= hi && rc == 0; i++) {
        slot->number = i;
        rc = expand_range(e, at + 1, end_at);
    }
    e->vars.count--;
    return rc;
}

static int expand_range(struct expander *e, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++) {
        const char *rest;
        size_t len;
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
            if (expand_for(e, i, rest, len, end_at) != 0)
                return -1;
        } else {
            int truth;
            if (eval_condition(e, i, rest, len, &truth) != 0)
                return -1;
            size_t body_end = else_at ? else_at : end_at;
            int rc = truth ? expand_range(e, i + 1, body_end)
                           : else_at ? expand_range(e, else_at + 1, end_at) : 0;
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
    struct expander e = {NULL, 0, *vars, d, out};
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
                return -1;
            }
            e.lines = grown;
        }
        e.lines[e.count].start = p;
        e.lines[e.count].len = len;
        e.count++;
        p += len + (nl ? 1 : 0);
    }
    int rc = expand_range(&e, 0, e.count);
    free(e.lines);
    return rc;
}
