/* The generator's error messages (gen/diag.c): FILE:LINE:COL: where a place is known, FILE:
 * alone where not, each counted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "gen_input.h"

static void test_messages_and_count(void **state)
{
    (void)state;
    struct messages m;
    messages_open(&m, "s.yaml");
    diag_error(&m.d, 3, 14, "N must be %s, got %d", "positive", -1);
    diag_error(&m.d, 0, 9, "cannot open: %s", "No such file");
    diag_out_of_memory(&m.d);
    char *text = messages_close(&m);
    assert_string_equal(text, "s.yaml:3:14: error: N must be positive, got -1\n"
                              "s.yaml: error: cannot open: No such file\n"
                              "s.yaml: error: out of memory\n");
    assert_int_equal(m.d.errors, 3);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_messages_and_count),
    };
    return cmocka_run_group_tests_name("diag", tests, NULL, NULL);
}
