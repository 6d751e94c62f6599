/* A Hugging Face model's config.json, as far as the engine and the shapes writer need it: the
 * architecture, the sizes of every Linear, and the numbers of RMSNorm and RoPE. */
#ifndef ENGINE_CONFIG_H
#define ENGINE_CONFIG_H

#include <stddef.h>
#include <stdint.h>

typedef enum model_arch {
    ARCH_LLAMA, /* LlamaForCausalLM, MistralForCausalLM */
    ARCH_QWEN2, /* Qwen2ForCausalLM: biases on q, k and v */
    ARCH_QWEN3  /* Qwen3ForCausalLM: RMSNorm on q and k per head */
} model_arch;

typedef struct model_config {
    model_arch arch;
    char arch_name[64];
    char name_or_path[256]; /* "_name_or_path", or "" */
    int64_t hidden, intermediate, layers, heads, kv_heads, head_dim, vocab;
    double rms_eps, rope_theta;
    int tied_embeddings;   /* lm_head shares embed_tokens' matrix */
    int qkv_bias, qk_norm; /* from the architecture */
    /* rope_scaling "llama3" (rope_llama3 = 1): the long-wavelength frequencies scaled down. */
    int rope_llama3;
    double rope_factor, rope_low_freq_factor, rope_high_freq_factor;
    int64_t rope_original_max_positions;
    int64_t sliding_window; /* attention window when one applies, else 0 */
} model_config;

/* Reads `path` into *out. On error returns nonzero with a message naming the file and the key
 * in err (for example `config.json: "hidden_size" must be a positive integer, got "1024"`). */
int model_config_load(const char *path, model_config *out, char *err, size_t err_size);

/* A jansson load error as "FILE:LINE:COLUMN: what", or jansson's own words (which name the
 * file) when it could not be opened at all. */
struct json_error_t;
void json_error_report(const char *path, const struct json_error_t *e, char *err, size_t err_size);

/* Opens `path` for reading if it is a regular file (a FIFO or device would block or never
 * end), filling *st. Returns the descriptor, or -1 with a message in err. */
struct stat;
int open_regular_file(const char *path, struct stat *st, char *err, size_t err_size);

/* A JSON file (config.json, an index) of at most JSON_FILE_MAX bytes, through
 * open_regular_file. Returns NULL with a message in err. */
enum { JSON_FILE_MAX = 16 << 20 };
struct json_t;
struct json_t *json_load_regular(const char *path, size_t flags, char *err, size_t err_size);

/* Query and key/value widths: heads * head_dim and kv_heads * head_dim. */
static inline int64_t model_q_dim(const model_config *c) { return c->heads * c->head_dim; }
static inline int64_t model_kv_dim(const model_config *c) { return c->kv_heads * c->head_dim; }

#endif
