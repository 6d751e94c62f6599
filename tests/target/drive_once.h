/* A plan's loops (runtime/driver.c, plan_call.c) outside the API: the kernel tests drive a
 * plan with a chosen variant, blocking and weight layout. */
#ifndef DRIVE_ONCE_H
#define DRIVE_ONCE_H

#include <stddef.h>
#include <stdint.h>

#include "gr_contract.h"
#include "operands.h"

/* Computes Y's columns [col_begin, col_end) of c's first row block (c->m <= the plan's bucket)
 * with the variant's tiles and the blocking of L2 share `share`, in scratch of its own (fails
 * the test when it cannot allocate it). Returns whether the driver read X from its copy
 * (gr_drive_copies_x). */
int drive_once(const struct gr_plan *plan, const struct gr_variant *variant, int share,
               const struct gr_call *c, size_t col_begin, size_t col_end);

/* Computes c as runtime/plan_call.c does, through its gr_drive_call, with `pieces` column
 * pieces (run by the pool's threads). Returns whether the row blocks' X was prepared once for
 * all the pieces (gr_drive_shares_x: a shared copy). */
int drive_pieces(const struct gr_plan *plan, const struct gr_variant *variant, int share,
                 const struct gr_call *c, size_t pieces);

/* The variants this core runs, into out: base, and Zvfbfwma where the core has it; only those
 * GEMM_RVV_TEST_VARIANTS names when it is set (fails the test when none is left). Returns how
 * many. */
size_t runnable_variants(const struct gr_variant *out[2]);

#endif
