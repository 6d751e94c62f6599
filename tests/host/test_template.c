/* The template expander: substitutions, loops, conditions, notes, and its errors. */
#define _GNU_SOURCE /* open_memstream on older glibc headers */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "template.h"

/* Expands src with ROWS=3, NAME=k, ODD=1; returns the output, or the error text. */
static char *expand(const char *src, int *rc)
{
    struct template_vars v = {.count = 0};
    tvars_number(&v, "ROWS", 3);
    tvars_text(&v, "NAME", "k");
    tvars_number(&v, "ODD", 1);
    struct text out = {0};
    char *errors = NULL;
    size_t size;
    FILE *err = open_memstream(&errors, &size);
    struct diag d = {"t.c.in", err, 0};
    *rc = template_expand(src, &v, &d, &out);
    fclose(err);
    if (*rc != 0) {
        text_free(&out);
        return errors;
    }
    free(errors);
    return out.data ? out.data : strdup("");
}

static void test_substitution_and_loops(void **state)
{
    (void)state;
    int rc;
    char *out = expand("void ${NAME}(void)\n"
                       "$// a note for template readers\n"
                       "$for R in 1..ROWS\n"
                       "  $for r in R\n"
                       "acc${R}_${r};\n"
                       "  $endfor\n"
                       "$endfor\n"
                       "cost $5 stays\n",
                       &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(out, "void k(void)\n"
                             "acc1_0;\n"
                             "acc2_0;\nacc2_1;\n"
                             "acc3_0;\nacc3_1;\nacc3_2;\n"
                             "cost $5 stays\n");
    free(out);
}

static void test_conditions(void **state)
{
    (void)state;
    int rc;
    char *out = expand("$if ODD\nodd\n$else\neven\n$endif\n"
                       "$if ROWS > 3\nbig\n$else\nsmall\n$endif\n"
                       "$if ROWS == 3\nthree\n$endif\n"
                       "$for i in 0\nnever\n$endfor\n",
                       &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(out, "odd\nsmall\nthree\n");
    free(out);
}

static void test_errors(void **state)
{
    (void)state;
    int rc;
    char *err = expand("a\n${NOPE}\n", &rc);
    assert_int_equal(rc, -1);
    assert_string_equal(err, "t.c.in:2:1: error: unknown variable \"NOPE\"\n");
    free(err);
    err = expand("$for r in ROWS\nx\n", &rc);
    assert_int_equal(rc, -1);
    assert_string_equal(err, "t.c.in:1:1: error: block is not closed\n");
    free(err);
    err = expand("$endif\n", &rc);
    assert_int_equal(rc, -1);
    assert_string_equal(err, "t.c.in:1:1: error: $endif without an opening $for or $if\n");
    free(err);
    err = expand("$if NAME\nx\n$endif\n", &rc);
    assert_int_equal(rc, -1);
    assert_string_equal(err, "t.c.in:1:1: error: not a number: \"NAME\"\n");
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_substitution_and_loops),
        cmocka_unit_test(test_conditions),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests_name("template", tests, NULL, NULL);
}
