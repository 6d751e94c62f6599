/* libFuzzer target: any bytes (up to the first NUL) as a template, expanded with variables like
 * the ones the generator passes. It must end with output or with errors, never both, never
 * neither; its bounds (template.h) keep each run short. ASan and UBSan catch the rest. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "template.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    if (!sink)
        sink = fopen("/dev/null", "w");
    char *source = malloc(size + 1);
    if (!source)
        return 0;
    memcpy(source, data, size);
    source[size] = '\0';

    struct template_vars v = {.count = 0};
    tvars_text(&v, "NAME", "bf16_gemm_m8_k4096");
    tvars_text(&v, "VM", "m2");
    tvars_text(&v, "VH", "m1");
    tvars_number(&v, "LMUL", 2);
    tvars_number(&v, "ROWS", 7);
    tvars_number(&v, "ROWS_LESS", 6);
    tvars_number(&v, "K", 4097);
    tvars_number(&v, "FIRST_ODD", 1);
    tvars_number(&v, "MORE_PAIRS", 1);
    tvars_number(&v, "LAST_ODD", 1);
    tvars_number(&v, "BUCKET", 8);
    tvars_number(&v, "BIG", INT64_MAX);
    tvars_number(&v, "SMALL", INT64_MIN);

    struct text out = {0};
    struct diag d = {"fuzz.c.in", sink, 0};
    int rc = template_expand(source, &v, &d, &out);
    if ((rc == 0) != (d.errors == 0) || (rc == 0 && out.failed))
        abort();
    if (rc == 0 && out.len > TEMPLATE_OUTPUT_MAX)
        abort();
    text_free(&out);
    free(source);
    return 0;
}
