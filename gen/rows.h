/* Plan rows made from the shapes file's entries: sorted, repeats dropped (the GEMM plans of
 * plan.c and the attention plans of attn_plan.c both). */
#ifndef GEN_ROWS_H
#define GEN_ROWS_H

#include <stddef.h>

/* Sorts `count` rows of `size` bytes by cmp and drops repeats (rows cmp finds equal): every
 * entry's row, made into the plans. Returns how many are left. */
size_t sort_unique_rows(void *rows, size_t count, size_t size,
                        int (*cmp)(const void *, const void *));

#endif
