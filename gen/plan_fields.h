/* The fields of a plan's blocking, once: the emitter's C data, the manifest, the comparison of
 * two blockings and the host tests take them from this list (X-macros), and test_plan_fields
 * checks it against struct gr_blocking of templates/contract.h.in, member for member.
 *
 * BLOCKING_FIELDS(X) calls X(NAME, VALUE, BREAK) for each number field after `order` (an
 * enum, written by name: GR_ORDER_* in C, "strips" or "tiles" in the manifest), in
 * struct gr_blocking's order: NAME is the member of struct gr_blocking and the manifest's
 * key, VALUE reads it from a `const struct blocking *b` (gen/blocking.h), BREAK is 1 where
 * the C data starts a new line before it. */
#ifndef GEN_PLAN_FIELDS_H
#define GEN_PLAN_FIELDS_H

#include <stdint.h>

#include "blocking.h"

#define BLOCKING_FIELDS(X)                  \
    X(k_block, b->k_block, 0)               \
    X(col_block, b->col_block, 0)           \
    X(x_copy_rows, b->x_copy.rows, 1)       \
    X(x_copy_cols, b->x_copy.cols, 0)       \
    X(x_copy_stride, b->x_copy.stride, 0)   \
    X(x_copy_shared, b->x_copy.shared, 1)   \
    X(col_rounds, b->x_copy.rounds, 0)

#define BLOCKING_FIELD_ONE_(name, value, brk) +1
enum { BLOCKING_FIELD_COUNT = 0 BLOCKING_FIELDS(BLOCKING_FIELD_ONE_) };
#undef BLOCKING_FIELD_ONE_

/* The names, in the list's order. */
static const char *const blocking_field_names[BLOCKING_FIELD_COUNT] = {
#define BLOCKING_FIELD_NAME_(name, value, brk) #name,
    BLOCKING_FIELDS(BLOCKING_FIELD_NAME_)
#undef BLOCKING_FIELD_NAME_
};

/* The values of b's fields, in the list's order. */
static inline void blocking_values(const struct blocking *b, uint64_t v[BLOCKING_FIELD_COUNT])
{
    int i = 0;
#define BLOCKING_FIELD_VALUE_(name, value, brk) v[i++] = (value);
    BLOCKING_FIELDS(BLOCKING_FIELD_VALUE_)
#undef BLOCKING_FIELD_VALUE_
}

#endif
