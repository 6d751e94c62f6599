/* The variant descriptor table (templates/variants.txt): the shipped one, and its errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "files.h"
#include "gen_input.h"
#include "variants.h"

/* Parses text; returns the messages ("" when none), *rc the result. */
static char *parse(const char *text, struct variants *v, int *rc)
{
    struct messages m;
    messages_open(&m, "v.txt");
    *rc = variants_parse(text, &m.d, v);
    return messages_close(&m);
}

/* The shipped table: base and zvfbfwma for the target, two plain C ones for the host, each
 * runtime slot once per build. */
static void test_shipped(void **state)
{
    (void)state;
    struct variants v;
    int rc;
    char *table = file_read(TESTS_DIR "/../templates/variants.txt");
    assert_non_null(table);
    char *err = parse(table, &v, &rc);
    free(table);
    assert_int_equal(rc, 0);
    assert_string_equal(err, "");
    free(err);
    assert_int_equal(v.count, 4);
    assert_string_equal(v.v[0].name, "base");
    assert_string_equal(v.v[0].march, "rv64gcv");
    assert_int_equal(v.v[0].layout_rows, 0);
    assert_string_equal(v.v[1].name, "zvfbfwma");
    assert_string_equal(v.v[1].march, "rv64gcv_zvfbfwma");
    assert_int_equal(v.v[1].layout_rows, 1);
    assert_int_equal(v.v[1].x_bf16, 1);
    for (int i = 0; i < 4; i++)
        assert_int_equal(variant_is_host(&v.v[i]), i >= 2);
}

static void test_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text, *message;
    } cases[] = {
        {"# only a comment\n", "v.txt: error: no variant listed\n"},
        {"base base rv64gcv pairs f32 base\n",
         "v.txt:1:33: error: 7 columns expected (name slot march layout activations folder "
         "ends), got 6\n"},
        {"\nb base rv64gcv pairs f32 base - extra\n",
         "v.txt:2:33: error: more than 7 columns (name slot march layout activations folder "
         "ends)\n"},
        {"b other rv64gcv pairs f32 base -\n",
         "v.txt:1:3: error: slot must be base or zvfbfwma, got \"other\"\n"},
        {"b base rv64gcv words f32 base -\n",
         "v.txt:1:16: error: layout must be pairs or rows, got \"words\"\n"},
        {"b base rv64gcv rows f16 base -\n",
         "v.txt:1:21: error: activations must be f32 or bf16, got \"f16\"\n"},
        {"B-1 base rv64gcv rows f32 base -\n",
         "v.txt:1:1: error: a variant's name must be a C identifier in lower case, got \"B-1\"\n"},
        {"b base rv64gcv rows f32 ../x -\n", "v.txt:1:27: error: unexpected character '/'\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct variants v;
        int rc;
        char *err = parse(cases[i].text, &v, &rc);
        assert_int_equal(rc, -1);
        assert_string_equal(err, cases[i].message);
        free(err);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shipped),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
