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
