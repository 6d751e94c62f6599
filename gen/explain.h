/* gemm-rvv-gen --explain: what the generator decided, as console tables. */
#ifndef GEN_EXPLAIN_H
#define GEN_EXPLAIN_H

#include <stdio.h>

#include "plan.h"
#include "shapes.h"

/* One row per (layer, M) with its verdict and reason, then one per plan with its blockings
 * and their modelled DRAM traffic and vector work, then one per (attention entry, n_q) with
 * its verdict, plan and pairs or reason. */
void print_explain(FILE *out, const struct shapes *s, const struct plan *p);

#endif
