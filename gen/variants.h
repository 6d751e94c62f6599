/* The kernel variants (templates/variants.txt): one descriptor each, read by the generator
 * and by make, so that a new variant is a template folder and one line. */
#ifndef GEN_VARIANTS_H
#define GEN_VARIANTS_H

#include "diag.h"

#define VARIANTS_MAX 16
#define VARIANT_WORD_MAX 48

struct variant {
    char name[VARIANT_WORD_MAX];   /* symbols end _NAME; the file is bf16_tiles_NAME.c */
    char slot[VARIANT_WORD_MAX];   /* "base" or "zvfbfwma": the gr_variant_SLOT it defines */
    char march[VARIANT_WORD_MAX];  /* -march of its objects, or "host" */
    int layout_rows;               /* 0: GR_LAYOUT_PAIRS, 1: GR_LAYOUT_ROWS */
    int x_bf16;                    /* 0: FP32 activations, 1: BF16 */
    char folder[VARIANT_WORD_MAX]; /* templates/FOLDER/support.c.in, tiles.c.in */
    char ends[VARIANT_WORD_MAX];   /* the shared starts and ends template, or "-" */
};

struct variants {
    struct variant v[VARIANTS_MAX];
    int count;
};

/* Parses a descriptor table (d->file names it in messages): 0, or -1 after reporting each bad
 * line as FILE:LINE:COL: error: ... */
int variants_parse(const char *text, struct diag *d, struct variants *out);

/* Whether a variant is plain C for the host build. */
int variant_is_host(const struct variant *v);

#endif
