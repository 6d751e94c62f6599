/* gemm-rvv-shapes: writes the shapes file of a Hugging Face model from its config.json, for
 * gemm-rvv-gen. Every Linear of a decoder block and the lm_head, with M = the decode batch sizes
 * (--batch) and the prefill lengths (--prefill); the lm_head runs on the last position of a
 * prompt only, so it gets the batch sizes alone. Then the attention entry: head_dim, the query
 * and KV heads, the KV cache's type (--kv, f16 unless given) and n_q = the same row counts.
 *
 *   gemm-rvv-shapes [--batch 1,4] [--prefill 128,512] [--kv f16|bf16] [--model NAME] [-o FILE]
 *                   CONFIG
 *
 * CONFIG is a config.json or the model folder holding one. Exit status: 0 success, 1 bad
 * input, 2 bad usage. With -o, nothing is written on error (the file is renamed into place). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"

enum { MAX_M = 32 };

typedef struct m_list {
    long values[MAX_M];
    int count;
} m_list;

static const char *program = "gemm-rvv-shapes";

static int usage(const char *why)
{
    if (why)
        fprintf(stderr, "%s: %s\n", program, why);
    fprintf(stderr, "usage: %s [--batch 1,4] [--prefill 128,512] [--kv f16|bf16] [--model NAME] "
                    "[-o FILE] CONFIG.json|MODEL_DIR\n", program);
    return 2;
}

/* "1,4,16" into an increasing list of positive sizes; 0 on success. */
static int parse_list(const char *text, m_list *out)
{
    out->count = 0;
    const char *p = text;
    while (*p) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p || errno || v <= 0 || v > 2147483647L || (*end && *end != ',') ||
            out->count == MAX_M || (out->count && v <= out->values[out->count - 1]))
            return 1;
        out->values[out->count++] = v;
        p = *end ? end + 1 : end;
    }
    return out->count == 0;
}

/* The union of two increasing lists, increasing. */
static m_list merge(const m_list *a, const m_list *b)
{
    m_list out = {.count = 0};
    int i = 0, j = 0;
    while ((i < a->count || j < b->count) && out.count < MAX_M) {
        long v;
        if (j == b->count || (i < a->count && a->values[i] < b->values[j]))
            v = a->values[i++];
        else if (i == a->count || b->values[j] < a->values[i])
            v = b->values[j++];
        else
            v = a->values[i++], j++;
        out.values[out.count++] = v;
    }
    return out;
}

static void print_list(FILE *f, const m_list *m)
{
    if (m->count == 1) {
        fprintf(f, "%ld", m->values[0]);
        return;
    }
    fputc('[', f);
    for (int i = 0; i < m->count; i++)
        fprintf(f, "%s%ld", i ? ", " : "", m->values[i]);
    fputc(']', f);
}

/* The code point at s and its length in bytes, or 0 when s does not start with valid UTF-8
 * (overlong forms, surrogates and values past U+10FFFF included). */
static int utf8_next(const unsigned char *s, unsigned *cp)
{
    static const unsigned min[5] = {0, 0, 0x80, 0x800, 0x10000};
    int len = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3
            : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
    if (!len)
        return 0;
    unsigned v = len == 1 ? s[0] : s[0] & (0x7f >> len);
    for (int i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        v = v << 6 | (s[i] & 0x3f);
    }
    if (v < min[len] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return len;
}

static int utf8_valid(const char *text)
{
    unsigned cp;
    for (const unsigned char *s = (const unsigned char *)text; *s;) {
        int n = utf8_next(s, &cp);
        if (!n)
            return 0;
        s += n;
    }
    return 1;
}

/* Whether text reads back the same as a plain YAML scalar: letters, digits and . _ - + /,
 * starting with a letter or digit. */
static int plain_scalar(const char *text)
{
    const char *ok = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-+/";
    return isalnum((unsigned char)text[0]) && strspn(text, ok) == strlen(text);
}

/* Writes valid UTF-8 text as YAML: plain when it reads back the same, else double-quoted with
 * escapes for the quote, the backslash, every line break (a newline would start a key of its
 * own) and what libyaml refuses to read (control characters, U+FEFF, U+FFFE, U+FFFF). Also
 * how untrusted text is shown in comments: it cannot end the comment's line. */
static void yaml_text(FILE *f, const char *text)
{
    if (plain_scalar(text)) {
        fputs(text, f);
        return;
    }
    fputc('"', f);
    unsigned cp;
    for (const unsigned char *s = (const unsigned char *)text; *s;) {
        int n = utf8_next(s, &cp);
        if (cp == '"' || cp == '\\')
            fprintf(f, "\\%c", (int)cp);
        else if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
            fprintf(f, "\\x%02x", cp);
        else if (cp == 0x2028 || cp == 0x2029 || cp == 0xfeff || cp == 0xfffe || cp == 0xffff)
            fprintf(f, "\\u%04x", cp);
        else
            fwrite(s, 1, (size_t)n, f);
        s += n;
    }
    fputc('"', f);
}

static void layer(FILE *f, const char *name, int64_t n, int64_t k, const m_list *m)
{
    char name_part[64], n_part[32], k_part[32];
    snprintf(name_part, sizeof name_part, "%s,", name);
    snprintf(n_part, sizeof n_part, "%lld,", (long long)n);
    snprintf(k_part, sizeof k_part, "%lld,", (long long)k);
    fprintf(f, "  - {name: %-10s N: %-8s K: %-6s M: ", name_part, n_part, k_part);
    print_list(f, m);
    fputs("}\n", f);
}

/* The attention entry (gen/shapes_yaml.c's `attention:`), or a comment saying why there is
 * none: the call takes head_dim in multiples of 8 up to 1024. tools/gguf-shapes writes the same
 * lines. */
static void attention(FILE *f, const model_config *c, const char *kv, const m_list *all)
{
    if (c->head_dim % 8 || c->head_dim > 1024) {
        fprintf(f, "\n# attention: head_dim %lld is not a multiple of 8 up to 1024, which "
                   "gemm_rvv_attention takes\n", (long long)c->head_dim);
        return;
    }
    fprintf(f, "\nattention:\n  - {name: attn, head_dim: %lld, q_heads: %lld, kv_heads: %lld, "
               "kv: %s, n_q: ", (long long)c->head_dim, (long long)c->heads,
            (long long)c->kv_heads, kv);
    print_list(f, all);
    fputs("}\n", f);
}

static void write_shapes(FILE *f, const model_config *c, const char *model, const char *source,
                         const char *batch_text, const char *prefill_text, const char *kv_type,
                         const m_list *batch, const m_list *all)
{
    fputs("# ", f);
    yaml_text(f, *model ? model : "This model");
    fprintf(f, ": %s, hidden %lld, intermediate %lld, %lld layers,\n"
               "# %lld query heads and %lld key/value heads of %lld, vocabulary %lld.\n",
            c->arch_name, (long long)c->hidden, (long long)c->intermediate,
            (long long)c->layers, (long long)c->heads, (long long)c->kv_heads,
            (long long)c->head_dim, (long long)c->vocab);
    fputs("# Written from ", f);
    yaml_text(f, source);
    fputs(", do not edit: regenerate with\n#   gemm-rvv-shapes", f);
    if (*model) {
        fputs(" --model ", f);
        yaml_text(f, model);
    }
    int kv_given = strcmp(kv_type, "f16") != 0;
    fprintf(f, " --batch %s%s%s%s%s ", batch_text, *prefill_text ? " --prefill " : "",
            prefill_text, kv_given ? " --kv " : "", kv_given ? kv_type : "");
    yaml_text(f, source);
    fputs("\n# M: the decode batch sizes and the prefill lengths; the lm_head runs on the last\n"
          "# position of a prompt only, so it gets the batch sizes. Attention: n_q the same row\n"
          "# counts, kv the KV cache's element type (--kv; f16 unless given, llama.cpp's default).\n",
          f);
    if (*model) {
        fputs("model: ", f);
        yaml_text(f, model);
        fputc('\n', f);
    }
    fputs("\nlayers:\n", f);
    int64_t q = model_q_dim(c), kv = model_kv_dim(c);
    layer(f, "q_proj", q, c->hidden, all);
    layer(f, "k_proj", kv, c->hidden, all);
    layer(f, "v_proj", kv, c->hidden, all);
    layer(f, "o_proj", c->hidden, q, all);
    layer(f, "gate_proj", c->intermediate, c->hidden, all);
    layer(f, "up_proj", c->intermediate, c->hidden, all);
    layer(f, "down_proj", c->hidden, c->intermediate, all);
    if (c->tied_embeddings)
        fputs("  # lm_head: tied to embed_tokens (tie_word_embeddings), packed from that matrix\n", f);
    layer(f, "lm_head", c->vocab, c->hidden, batch);
    attention(f, c, kv_type, all);
}

int main(int argc, char **argv)
{
    const char *batch_text = "1", *prefill_text = "", *model = NULL, *output = NULL, *input = NULL;
    const char *kv = "f16";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has_value = i + 1 < argc;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(NULL);
            return 0;
        } else if (!strcmp(a, "--batch") && has_value) {
            batch_text = argv[++i];
        } else if (!strcmp(a, "--prefill") && has_value) {
            prefill_text = argv[++i];
        } else if (!strcmp(a, "--kv") && has_value) {
            kv = argv[++i];
        } else if (!strcmp(a, "--model") && has_value) {
            model = argv[++i];
        } else if (!strcmp(a, "-o") && has_value) {
            output = argv[++i];
        } else if (a[0] == '-' || input) {
            char why[300];
            snprintf(why, sizeof why, "unexpected argument \"%s\"%s", a,
                     a[0] == '-' && !has_value ? " (or its value is missing)" : "");
            return usage(why);
        } else {
            input = a;
        }
    }
    if (!input)
        return usage("no config.json given");
    m_list batch, prefill = {.count = 0};
    if (parse_list(batch_text, &batch))
        return usage("--batch takes increasing positive sizes, such as 1,4");
    if (*prefill_text && parse_list(prefill_text, &prefill))
        return usage("--prefill takes increasing positive lengths, such as 128,512");
    if (strcmp(kv, "f16") && strcmp(kv, "bf16"))
        return usage("--kv takes f16 or bf16, the KV cache's element type");

    char path[4096];
    struct stat st;
    int is_dir = stat(input, &st) == 0 && S_ISDIR(st.st_mode);
    snprintf(path, sizeof path, is_dir ? "%s/config.json" : "%s", input);
    model_config c;
    char err[512];
    if (model_config_load(path, &c, err, sizeof err)) {
        fprintf(stderr, "%s: error: %s\n", program, err);
        return 1;
    }
    /* The model's name: --model, else the last part of "_name_or_path". */
    if (!model) {
        const char *slash = strrchr(c.name_or_path, '/');
        model = slash ? slash + 1 : c.name_or_path;
    }
    m_list all = merge(&batch, &prefill);
    /* YAML holds UTF-8 only; jansson has checked the config's own strings. */
    if (!utf8_valid(model))
        return usage("--model takes UTF-8 text");
    if (!utf8_valid(path)) {
        fprintf(stderr, "%s: error: the path %s is not UTF-8, which the shapes file cannot "
                        "name\n", program, path);
        return 1;
    }

    char tmp[4200];
    FILE *f = stdout;
    if (output) {
        snprintf(tmp, sizeof tmp, "%s.tmp", output);
        f = fopen(tmp, "w");
        if (!f) {
            fprintf(stderr, "%s: error: cannot write %s: %s\n", program, tmp, strerror(errno));
            return 1;
        }
    }
    write_shapes(f, &c, model, path, batch_text, prefill_text, kv, &batch, &all);
    if (output) {
        if (fclose(f) || rename(tmp, output)) {
            fprintf(stderr, "%s: error: cannot write %s: %s\n", program, output, strerror(errno));
            remove(tmp);
            return 1;
        }
    } else if (fflush(stdout)) {
        return 1;
    }
    return 0;
}
