/* config.json through jansson: only the keys the supported architectures define, with the
 * defaults of transformers' configuration classes where a key is absent. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct reader {
    const char *path;
    json_t *root;
    char *err;
    size_t err_size;
    int failed;
} reader;

static void fail(reader *r, const char *fmt, ...)
{
    if (r->failed)
        return;
    r->failed = 1;
    int n = snprintf(r->err, r->err_size, "%s: ", r->path);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < r->err_size)
        vsnprintf(r->err + n, r->err_size - (size_t)n, fmt, ap);
    va_end(ap);
}

/* The value of key as JSON text, for messages. */
static void show(const json_t *v, char *buf, size_t size)
{
    char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    snprintf(buf, size, "%s", text ? text : "?");
    free(text);
}

/* A positive integer key; `fallback` when absent (0: the key is required). */
static int64_t positive(reader *r, json_t *obj, const char *key, int64_t fallback)
{
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v)) {
        if (!fallback)
            fail(r, "\"%s\" is missing", key);
        return fallback;
    }
    if (!json_is_integer(v) || json_integer_value(v) <= 0 ||
        json_integer_value(v) > INT32_MAX) {
        char got[64];
        show(v, got, sizeof got);
        fail(r, "\"%s\" must be a positive integer below 2^31, got %s", key, got);
        return 1;
    }
    return json_integer_value(v);
}

/* A positive number key (integer or real); `fallback` when absent. */
static double number(reader *r, json_t *obj, const char *key, double fallback)
{
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v))
        return fallback;
    if (!json_is_number(v) || !(json_number_value(v) > 0)) {
        char got[64];
        show(v, got, sizeof got);
        fail(r, "\"%s\" must be a positive number, got %s", key, got);
        return fallback;
    }
    return json_number_value(v);
}

static int boolean(reader *r, const char *key, int fallback)
{
    json_t *v = json_object_get(r->root, key);
    if (!v || json_is_null(v))
        return fallback;
    if (!json_is_boolean(v)) {
        char got[64];
        show(v, got, sizeof got);
        fail(r, "\"%s\" must be true or false, got %s", key, got);
        return fallback;
    }
    return json_is_true(v);
}

static void read_architecture(reader *r, model_config *c)
{
    json_t *list = json_object_get(r->root, "architectures");
    json_t *first = json_is_array(list) && json_array_size(list) == 1 ? json_array_get(list, 0) : NULL;
    if (!json_is_string(first)) {
        fail(r, "\"architectures\" must be a list of one name, such as [\"LlamaForCausalLM\"]");
        return;
    }
    const char *name = json_string_value(first);
    snprintf(c->arch_name, sizeof c->arch_name, "%s", name);
    if (!strcmp(name, "LlamaForCausalLM") || !strcmp(name, "MistralForCausalLM"))
        c->arch = ARCH_LLAMA;
    else if (!strcmp(name, "Qwen2ForCausalLM"))
        c->arch = ARCH_QWEN2;
    else if (!strcmp(name, "Qwen3ForCausalLM"))
        c->arch = ARCH_QWEN3;
    else
        fail(r, "architecture \"%s\" is not supported (LlamaForCausalLM, MistralForCausalLM, "
                "Qwen2ForCausalLM, Qwen3ForCausalLM are)", name);
}

/* rope_scaling: null, or {"rope_type": "llama3", "factor", "low_freq_factor",
 * "high_freq_factor", "original_max_position_embeddings"} ("type" in older files). */
static void read_rope_scaling(reader *r, model_config *c)
{
    json_t *s = json_object_get(r->root, "rope_scaling");
    if (!s || json_is_null(s))
        return;
    json_t *type = json_object_get(s, "rope_type");
    if (!type)
        type = json_object_get(s, "type");
    if (!json_is_object(s) || !json_is_string(type)) {
        fail(r, "\"rope_scaling\" must be null or an object with a \"rope_type\"");
        return;
    }
    const char *name = json_string_value(type);
    if (!strcmp(name, "default"))
        return;
    if (strcmp(name, "llama3")) {
        fail(r, "rope_scaling type \"%s\" is not supported (only none and \"llama3\" are)", name);
        return;
    }
    c->rope_llama3 = 1;
    c->rope_factor = number(r, s, "factor", 8.0);
    c->rope_low_freq_factor = number(r, s, "low_freq_factor", 1.0);
    c->rope_high_freq_factor = number(r, s, "high_freq_factor", 4.0);
    c->rope_original_max_positions = positive(r, s, "original_max_position_embeddings", 8192);
    if (!(c->rope_high_freq_factor > c->rope_low_freq_factor))
        fail(r, "rope_scaling: \"high_freq_factor\" must exceed \"low_freq_factor\"");
}

/* Features the engine does not implement are refused by name rather than run wrongly. */
static void refuse_unsupported(reader *r, model_config *c)
{
    json_t *act = json_object_get(r->root, "hidden_act");
    if (act && !(json_is_string(act) && !strcmp(json_string_value(act), "silu")))
        fail(r, "\"hidden_act\" must be \"silu\" (SwiGLU)");
    if (boolean(r, "attention_bias", 0) && c->arch != ARCH_QWEN2)
        fail(r, "\"attention_bias\": true is not supported for %s", c->arch_name);
    if (boolean(r, "mlp_bias", 0))
        fail(r, "\"mlp_bias\": true is not supported");
    /* Mistral's window always applies; Qwen's only with use_sliding_window. */
    int windowed = c->arch == ARCH_LLAMA || boolean(r, "use_sliding_window", 0);
    json_t *w = json_object_get(r->root, "sliding_window");
    if (windowed && w && !json_is_null(w))
        c->sliding_window = positive(r, r->root, "sliding_window", 1);
}

void json_error_report(const char *path, const json_error_t *e, char *err, size_t err_size)
{
    if (e->line < 1)
        snprintf(err, err_size, "%s", e->text);
    else
        snprintf(err, err_size, "%s:%d:%d: %s", path, e->line, e->column, e->text);
}

int open_regular_file(const char *path, struct stat *st, char *err, size_t err_size)
{
    /* O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, err_size, "unable to open %s: %s", path, strerror(errno));
        return -1;
    }
    if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
        snprintf(err, err_size, "%s: not a regular file", path);
        close(fd);
        return -1;
    }
    return fd;
}

json_t *json_load_regular(const char *path, size_t flags, char *err, size_t err_size)
{
    struct stat st;
    int fd = open_regular_file(path, &st, err, err_size);
    if (fd < 0)
        return NULL;
    if (st.st_size > JSON_FILE_MAX) {
        snprintf(err, err_size, "%s: %lld bytes, more than the %d MiB a JSON file of a model may "
                 "hold", path, (long long)st.st_size, JSON_FILE_MAX >> 20);
        close(fd);
        return NULL;
    }
    json_error_t jerr;
    json_t *root = json_loadfd(fd, flags, &jerr);
    close(fd);
    if (!root)
        json_error_report(path, &jerr, err, err_size);
    return root;
}

int model_config_load(const char *path, model_config *out, char *err, size_t err_size)
{
    model_config c = {0};
    reader r = {.path = path, .err = err, .err_size = err_size};
    r.root = json_load_regular(path, JSON_REJECT_DUPLICATES, err, err_size);
    if (!r.root)
        return 1;
    if (!json_is_object(r.root)) {
        fail(&r, "the top level must be an object");
        json_decref(r.root);
        return 1;
    }
    read_architecture(&r, &c);
    json_t *name = json_object_get(r.root, "_name_or_path");
    if (json_is_string(name)) {
        /* A long name is cut where a UTF-8 character starts, so what is kept stays UTF-8. */
        const char *v = json_string_value(name);
        size_t n = strlen(v);
        if (n >= sizeof c.name_or_path)
            for (n = sizeof c.name_or_path - 1; n > 0 && ((unsigned char)v[n] & 0xc0) == 0x80;)
                n--;
        memcpy(c.name_or_path, v, n);
        c.name_or_path[n] = '\0';
    }
    c.hidden = positive(&r, r.root, "hidden_size", 0);
    c.intermediate = positive(&r, r.root, "intermediate_size", 0);
    c.layers = positive(&r, r.root, "num_hidden_layers", 0);
    c.heads = positive(&r, r.root, "num_attention_heads", 0);
    c.kv_heads = positive(&r, r.root, "num_key_value_heads", c.heads);
    c.vocab = positive(&r, r.root, "vocab_size", 0);
    /* Qwen3's configuration class defaults head_dim to 128; the others derive it. */
    int64_t derived = c.heads ? c.hidden / c.heads : 1;
    c.head_dim = positive(&r, r.root, "head_dim", c.arch == ARCH_QWEN3 ? 128 : derived);
    c.rms_eps = number(&r, r.root, "rms_norm_eps", 1e-6);
    c.rope_theta = number(&r, r.root, "rope_theta", 10000.0);
    c.tied_embeddings = boolean(&r, "tie_word_embeddings", 0);
    c.qkv_bias = c.arch == ARCH_QWEN2;
    c.qk_norm = c.arch == ARCH_QWEN3;
    read_rope_scaling(&r, &c);
    refuse_unsupported(&r, &c);
    if (!r.failed && c.heads % c.kv_heads)
        fail(&r, "\"num_attention_heads\" (%lld) must be a multiple of \"num_key_value_heads\" (%lld)",
             (long long)c.heads, (long long)c.kv_heads);
    /* Keeps every product the engine forms (cache sizes, offsets) far inside 64 bits. */
    if (!r.failed && (c.heads * c.head_dim > INT32_MAX || c.layers > 65536))
        fail(&r, "the model is too large: %lld heads of %lld, %lld layers", (long long)c.heads,
             (long long)c.head_dim, (long long)c.layers);
    if (!r.failed && c.head_dim % 2)
        fail(&r, "the head dimension must be even for RoPE, got %lld", (long long)c.head_dim);
    json_decref(r.root);
    if (r.failed)
        return 1;
    *out = c;
    return 0;
}
