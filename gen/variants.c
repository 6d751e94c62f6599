#include "variants.h"

#include <stdio.h>
#include <string.h>

#define COLUMNS "name slot march layout activations folder ends"

int variant_is_host(const struct variant *v) { return strcmp(v->march, "host") == 0; }

static int is_word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.' || c == '-';
}

/* One of `choices` (NULL-terminated): its index, or -1. */
static int choice(const char *word, const char *const *choices)
{
    for (int i = 0; choices[i]; i++)
        if (strcmp(word, choices[i]) == 0)
            return i;
    return -1;
}

static int name_ok(const char *w)
{
    if (!((w[0] >= 'a' && w[0] <= 'z') || w[0] == '_'))
        return 0;
    for (; *w; w++)
        if (!((*w >= 'a' && *w <= 'z') || (*w >= '0' && *w <= '9') || *w == '_'))
            return 0;
    return 1;
}

/* Checks one line's words; returns 0 or reports the first bad one. */
static int fill(struct variant *v, char words[7][VARIANT_WORD_MAX], const int col[7],
                struct diag *d, int line)
{
    static const char *const slots[] = {"base", "zvfbfwma", NULL};
    static const char *const layouts[] = {"pairs", "rows", NULL};
    static const char *const acts[] = {"f32", "bf16", NULL};
    if (!name_ok(words[0]) || !name_ok(words[5])) {
        int bad = name_ok(words[0]) ? 5 : 0;
        diag_error(d, line, col[bad], "a variant's %s must be a C identifier in lower case, got \"%s\"",
                   bad ? "folder" : "name", words[bad]);
        return -1;
    }
    if (choice(words[1], slots) < 0) {
        diag_error(d, line, col[1], "slot must be base or zvfbfwma, got \"%s\"", words[1]);
        return -1;
    }
    if ((v->layout_rows = choice(words[3], layouts)) < 0) {
        diag_error(d, line, col[3], "layout must be pairs or rows, got \"%s\"", words[3]);
        return -1;
    }
    if ((v->x_bf16 = choice(words[4], acts)) < 0) {
        diag_error(d, line, col[4], "activations must be f32 or bf16, got \"%s\"", words[4]);
        return -1;
    }
    memcpy(v->name, words[0], VARIANT_WORD_MAX);
    memcpy(v->slot, words[1], VARIANT_WORD_MAX);
    memcpy(v->march, words[2], VARIANT_WORD_MAX);
    memcpy(v->folder, words[5], VARIANT_WORD_MAX);
    memcpy(v->ends, words[6], VARIANT_WORD_MAX);
    return 0;
}

int variants_parse(const char *text, struct diag *d, struct variants *out)
{
    int before = d->errors;
    out->count = 0;
    for (int line = 1; *text; line++) {
        const char *end = strchr(text, '\n');
        size_t len = end ? (size_t)(end - text) : strlen(text);
        char words[7][VARIANT_WORD_MAX];
        int col[7], n = 0, bad = 0;
        for (size_t i = 0; i < len && text[i] != '#' && !bad;) {
            if (text[i] == ' ' || text[i] == '\t' || text[i] == '\r') {
                i++;
                continue;
            }
            size_t start = i;
            while (i < len && is_word_char(text[i]))
                i++;
            if (i == start)
                diag_error(d, line, (int)start + 1, "unexpected character '%c'", text[i]);
            else if (i - start >= VARIANT_WORD_MAX)
                diag_error(d, line, (int)start + 1, "a word longer than %d characters",
                           VARIANT_WORD_MAX - 1);
            else if (n == 7)
                diag_error(d, line, (int)start + 1, "more than 7 columns (%s)", COLUMNS);
            if (i == start || i - start >= VARIANT_WORD_MAX || n == 7) {
                bad = 1;
                break;
            }
            col[n] = (int)start + 1;
            memcpy(words[n], text + start, i - start);
            words[n++][i - start] = '\0';
        }
        if (!bad && n > 0 && n < 7) {
            diag_error(d, line, (int)len + 1, "7 columns expected (%s), got %d", COLUMNS, n);
            bad = 1;
        }
        if (!bad && n == 7) {
            if (out->count == VARIANTS_MAX)
                diag_error(d, line, 1, "more than %d variants", VARIANTS_MAX);
            else if (fill(&out->v[out->count], words, col, d, line) == 0)
                out->count++;
        }
        text += len + (end != NULL);
    }
    if (d->errors == before && out->count == 0)
        diag_error(d, 0, 0, "no variant listed");
    return d->errors == before ? 0 : -1;
}
