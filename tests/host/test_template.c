/* The template expander: substitutions, loops, conditions, notes, and its errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "alloc_fail.h"
#include "gen_input.h"
#include "template.h"

/* Expands src with the variables v; returns the output, or the error text. */
static char *expand_with(const char *src, const struct template_vars *v, int *rc)
{
    struct text out = {0};
    struct messages m;
    messages_open(&m, "t.c.in");
    *rc = template_expand(src, v, &m.d, &out);
    char *errors = messages_close(&m);
    if (*rc != 0) {
        text_free(&out);
        return errors;
    }
    free(errors);
    return out.data ? out.data : strdup("");
}

/* Expands src with ROWS=3, NAME=k, ODD=1. */
static char *expand(const char *src, int *rc)
{
    struct template_vars v = {.count = 0};
    tvars_number(&v, "ROWS", 3);
    tvars_text(&v, "NAME", "k");
    tvars_number(&v, "ODD", 1);
    return expand_with(src, &v, rc);
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

/* Variables past TEMPLATE_VARS_MAX are refused when added and make the expansion fail: a
 * template never sees "unknown variable" for one its caller did pass. */
static void test_too_many_variables(void **state)
{
    (void)state;
    static char names[TEMPLATE_VARS_MAX + 1][8];
    struct template_vars v = {.count = 0};
    for (int i = 0; i < TEMPLATE_VARS_MAX; i++) {
        snprintf(names[i], sizeof names[i], "V%d", i);
        assert_int_equal(tvars_number(&v, names[i], i), 0);
    }
    assert_int_equal(tvars_text(&v, "EXTRA", "x"), -1);
    assert_int_equal(tvars_number(&v, "MORE", 1), -1);
    int rc;
    char *err = expand_with("${V0}\n", &v, &rc);
    assert_int_equal(rc, -1);
    assert_string_equal(err, "t.c.in: error: more than 32 template variables: no room for "
                             "\"EXTRA\"\n");
    free(err);
}

/* Templates that would run away end with an error naming the line, within the bounds. */
static void test_bounds(void **state)
{
    (void)state;
    struct template_vars v = {.count = 0};
    tvars_number(&v, "BIG", 9223372036854775807LL);
    int rc;
    char *err = expand_with("x\n$for i in 100000000\n$endfor\n", &v, &rc);
    assert_int_equal(rc, -1);
    assert_string_equal(err, "t.c.in:2:1: error: expansion takes more than 1000000 steps (a $for "
                             "that runs too often?)\n");
    free(err);
    /* The last value of a range may be the largest long long: the loop stops there. */
    err = expand_with("$for i in BIG..BIG\n${i}\n$endfor\n", &v, &rc);
    assert_int_equal(rc, 0);
    free(err);
    err = expand_with("$for i in 99999999999999999999\n$endfor\n", &v, &rc);
    assert_int_equal(rc, -1);
    assert_string_equal(err, "t.c.in:1:1: error: not a number of at most 18 digits: "
                             "\"99999999999999999999\"\n");
    free(err);
    struct text deep = {0};
    for (int i = 0; i <= TEMPLATE_DEPTH_MAX; i++)
        text_printf(&deep, "$if 1\n");
    for (int i = 0; i <= TEMPLATE_DEPTH_MAX; i++)
        text_printf(&deep, "$endif\n");
    err = expand_with(deep.data, &v, &rc);
    assert_int_equal(rc, -1);
    assert_string_equal(err, "t.c.in:65:1: error: blocks nested more than 64 deep\n");
    free(err);
    text_free(&deep);
    /* Few steps, but each line 64 KiB long: the output bound ends it. */
    static char long_text[64 * 1024 + 1];
    memset(long_text, 'x', sizeof long_text - 1);
    tvars_text(&v, "LONG", long_text);
    err = expand_with("$for i in 1000\n${LONG}\n$endfor\n", &v, &rc);
    assert_int_equal(rc, -1);
    assert_string_equal(err, "t.c.in:2:1: error: expansion writes more than 16777216 bytes\n");
    free(err);
    err = expand_with("$if\nx\n$endif\n", &v, &rc);
    assert_int_equal(rc, -1);
    assert_string_equal(err, "t.c.in:1:1: error: bad $if condition \"\"\n");
    free(err);
}

/* Fails each allocation of an expansion in turn: each ends as out of memory. */
static void test_out_of_memory(void **state)
{
    (void)state;
    struct template_vars v = {.count = 0};
    tvars_number(&v, "ROWS", 40);
    /* Enough output (about 40 KiB) and lines that the buffers grow several times. */
    struct text src = {0};
    for (int i = 0; i < 300; i++)
        text_printf(&src, "line %d ${ROWS}\n", i);
    text_printf(&src, "$for r in ROWS\n$for c in ROWS\nacc${r}_${c} += w * x;\n$endfor\n$endfor\n");
    long n = 0;
    for (;; n++) {
        struct text out = {0};
        struct messages m;
        messages_open(&m, "oom.c.in");
        alloc_fail_at(n);
        int rc = template_expand(src.data, &v, &m.d, &out);
        int fired = alloc_fail_fired();
        alloc_fail_at(-1);
        char *errors = messages_close(&m);
        if (!fired) {
            assert_int_equal(rc, 0);
            assert_false(out.failed);
            assert_non_null(strstr(out.data, "acc39_39 += w * x;\n"));
            text_free(&out);
            free(errors);
            break;
        }
        if (rc != -1 || strcmp(errors, "oom.c.in: error: out of memory\n") != 0)
            fail_msg("allocation %ld failed: status %d, messages \"%s\"", n, rc, errors);
        assert_true(out.failed || out.len == 0);
        text_free(&out);
        free(errors);
    }
    text_free(&src);
    assert_true(n >= 5);
    print_message("each of %ld allocations failed in turn, each reported as out of memory\n", n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_substitution_and_loops),
        cmocka_unit_test(test_conditions),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_too_many_variables),
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests_name("template", tests, NULL, NULL);
}
