/* The fields of a plan's blocking, once: struct gr_blocking's members in the emitted
 * gr_contract.h (templates/contract.h.in's ${BLOCKING_MEMBERS}), the emitter's C data, the
 * manifest, the comparison of two blockings, the replay and the host tests take them from this
 * list (X-macros).
 *
 * BLOCKING_FIELDS(X) calls X(NAME, VALUE, BREAK, DOC) for each number field after `order` (an
 * enum, written by name: GR_ORDER_* in C, "strips" or "tiles" in the manifest), in
 * struct gr_blocking's order: NAME is the member of struct gr_blocking (a uint32_t) and the
 * manifest's key, VALUE reads it from a `const struct blocking *b` (gen/blocking.h), BREAK is
 * 1 where the C data starts a new line before it, DOC the member's comment in the contract. */
#ifndef GEN_PLAN_FIELDS_H
#define GEN_PLAN_FIELDS_H

#include <stdint.h>

#include "blocking.h"

#define BLOCKING_FIELDS(X)                                                                         \
    X(k_block, b->k_block, 0,                                                                      \
      "k per block: even, or >= K for a single block")                                             \
    X(col_block, b->col_block, 0,                                                                  \
      "columns per block; the runtime rounds it up to whole panels")                               \
    X(x_copy_rows, b->x_copy.rows, 1,                                                              \
      "X read from a copy by row blocks of this many rows or more (0: never)")                     \
    X(x_copy_cols, b->x_copy.cols, 0,                                                              \
      "... over a piece of this many columns or more")                                             \
    X(x_copy_stride, b->x_copy.stride, 0,                                                          \
      "... when X's rows are a multiple of this many bytes apart")                                 \
    X(x_copy_shared, b->x_copy.shared, 1,                                                          \
      "1: one copy of X for the call, made by all its participants")                               \
    X(col_rounds, b->x_copy.rounds, 0,                                                             \
      "participants a round of column blocks is planned for (0: no rounds)")

/* The weights' formats a plan may serve, the plan's `format` field (struct gr_plan's, an enum
 * gr_format written by name: GR_FORMAT_* in C, the shapes file's and the manifest's word, and
 * the plan names' prefix). WEIGHT_FORMATS(X) calls X(WORD, CONSTANT, BLOCK_BYTES, BLOCK, DOC):
 * WORD as the shapes file's `weights:` says it, CONSTANT the contract's enum gr_format value,
 * BLOCK_BYTES bytes per BLOCK weights along K (the least DRAM a call can move: every weight
 * once), DOC what it is. In enum weight_format's order (FORMAT_BF16 = 0, ...). */
#define WEIGHT_FORMATS(X)                                                                          \
    X(bf16, GR_FORMAT_BF16, 2, 1, "BF16 weights, gemm_rvv_linear")                                 \
    X(q8_0, GR_FORMAT_Q8_0, 34, 32, "GGUF Q8_0 blocks, gemm_rvv_linear_f32x")

enum weight_format {
#define WEIGHT_FORMAT_ENUM_(word, constant, bytes, block, doc) FORMAT_##word,
    WEIGHT_FORMATS(WEIGHT_FORMAT_ENUM_)
#undef WEIGHT_FORMAT_ENUM_
    WEIGHT_FORMAT_COUNT
};

/* Each format's word, its C constant, and its bytes per weight at least. */
static const char *const weight_format_words[WEIGHT_FORMAT_COUNT] = {
#define WEIGHT_FORMAT_WORD_(word, constant, bytes, block, doc) #word,
    WEIGHT_FORMATS(WEIGHT_FORMAT_WORD_)
#undef WEIGHT_FORMAT_WORD_
};
static const char *const weight_format_constants[WEIGHT_FORMAT_COUNT] = {
#define WEIGHT_FORMAT_CONSTANT_(word, constant, bytes, block, doc) #constant,
    WEIGHT_FORMATS(WEIGHT_FORMAT_CONSTANT_)
#undef WEIGHT_FORMAT_CONSTANT_
};
static const unsigned weight_format_block[WEIGHT_FORMAT_COUNT] = {
#define WEIGHT_FORMAT_BLOCK_(word, constant, bytes, block, doc) block,
    WEIGHT_FORMATS(WEIGHT_FORMAT_BLOCK_)
#undef WEIGHT_FORMAT_BLOCK_
};
static inline double weight_format_bytes(enum weight_format f)
{
    static const double bytes[WEIGHT_FORMAT_COUNT] = {
#define WEIGHT_FORMAT_BYTES_(word, constant, bytes, block, doc) (double)(bytes) / (block),
        WEIGHT_FORMATS(WEIGHT_FORMAT_BYTES_)
#undef WEIGHT_FORMAT_BYTES_
    };
    return bytes[f];
}

/* The element types of a KV cache an attention plan serves (struct gr_attn_plan's k_type and
 * v_type, the contract's enum gr_kv_type): KV_TYPES(X) calls X(WORD, CONSTANT), WORD as the
 * shapes file's `kv:`, `k:` and `v:` say it (and the plan names' part), CONSTANT the
 * contract's value. In enum kv_type's order (KV_F16 = 0 = GR_KV_F16, ...). */
#define KV_TYPES(X) X(f16, GR_KV_F16) X(bf16, GR_KV_BF16)

enum kv_type {
#define KV_TYPE_ENUM_(word, constant) KV_##word,
    KV_TYPES(KV_TYPE_ENUM_)
#undef KV_TYPE_ENUM_
    KV_TYPE_COUNT
};
static const char *const kv_type_words[KV_TYPE_COUNT] = {
#define KV_TYPE_WORD_(word, constant) #word,
    KV_TYPES(KV_TYPE_WORD_)
#undef KV_TYPE_WORD_
};
static const char *const kv_type_constants[KV_TYPE_COUNT] = {
#define KV_TYPE_CONSTANT_(word, constant) #constant,
    KV_TYPES(KV_TYPE_CONSTANT_)
#undef KV_TYPE_CONSTANT_
};

#define BLOCKING_FIELD_ONE_(name, value, brk, doc) +1
enum { BLOCKING_FIELD_COUNT = 0 BLOCKING_FIELDS(BLOCKING_FIELD_ONE_) };
#undef BLOCKING_FIELD_ONE_

/* The names, in the list's order. */
static const char *const blocking_field_names[BLOCKING_FIELD_COUNT] = {
#define BLOCKING_FIELD_NAME_(name, value, brk, doc) #name,
    BLOCKING_FIELDS(BLOCKING_FIELD_NAME_)
#undef BLOCKING_FIELD_NAME_
};

/* The values of b's fields, in the list's order. */
static inline void blocking_values(const struct blocking *b, uint64_t v[BLOCKING_FIELD_COUNT])
{
    int i = 0;
#define BLOCKING_FIELD_VALUE_(name, value, brk, doc) v[i++] = (value);
    BLOCKING_FIELDS(BLOCKING_FIELD_VALUE_)
#undef BLOCKING_FIELD_VALUE_
}

#endif
