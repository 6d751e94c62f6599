/* The host build's variants. The generated ones (RVV intrinsics) cannot be built for the host,
 * and on a core without V the runtime must never call into them: the fallback serves every
 * call, and only the linker needs the symbols (cpu.c reads the panel width through the base
 * one). Each function here stops the test program, naming what was called. */
#include <stdio.h>
#include <stdlib.h>

#include "gr_contract.h"

static void called(const char *what)
{
    fprintf(stderr, "error: the runtime called a variant's %s on a core without V: "
                    "only the fallback may run here\n", what);
    abort();
}

static size_t no_vlenb(void)
{
    called("vlenb");
    return 0;
}

static void no_arrange(const uint16_t *x, size_t ldx, size_t rows, size_t kc, void *x_out,
                       size_t x_stride)
{
    (void)x, (void)ldx, (void)rows, (void)kc, (void)x_out, (void)x_stride;
    called("arrange");
}

static void no_pack(const uint16_t *w, size_t ldw, size_t cols, size_t kc, void *out,
                    size_t out_stride)
{
    (void)w, (void)ldw, (void)cols, (void)kc, (void)out, (void)out_stride;
    called("pack");
}

const struct gr_variant gr_variant_base = {
    "none (host)", no_vlenb, sizeof(float), GR_LAYOUT_PAIRS, no_arrange, no_pack,
    {NULL, NULL, NULL, NULL}};
const struct gr_variant gr_variant_zvfbfwma = {
    "none (host)", no_vlenb, sizeof(uint16_t), GR_LAYOUT_ROWS, no_arrange, no_pack,
    {NULL, NULL, NULL, NULL}};
