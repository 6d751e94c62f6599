/* The machine a plan is made for (gen/target.c): a shapes file's target: in any order of its
 * fields, the named targets, --target's NAME,FIELD=VALUE. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gen_input.h"
#include "shapes.h"
#include "target.h"

/* The target's fields are checked together, whatever order the file gives them in. */
static void test_target_any_order(void **state)
{
    (void)state;
    static const char *const orders[] = {"target: {dlen: 512, vlen: 1024}\n",
                                         "target: {vlen: 1024, dlen: 512}\n"};
    for (int i = 0; i < 2; i++) {
        char text[256], *messages = NULL;
        snprintf(text, sizeof text, "%slayers:\n  - {name: q, N: 64, K: 64, M: 1}\n", orders[i]);
        struct shapes s;
        if (shapes_from_text("t.yaml", text, &s, &messages) != 0)
            fail_msg("%s rejected: %s", orders[i], messages);
        assert_int_equal(s.target.vlen, 1024);
        assert_int_equal(s.target.dlen, 512);
        shapes_free(&s);
        free(messages);
    }
}

/* `target: NAME` takes a built-in target whole; every name of the list is one; k1 is the
 * default and k3 the X100 cores; --target takes a name followed by fields. */
static void test_target_by_name(void **state)
{
    (void)state;
    char names[128];
    assert_true(strlen(target_names_list) < sizeof names);
    strcpy(names, target_names_list);
    int count = 0;
    for (char *name = strtok(names, ", "); name; name = strtok(NULL, ", "), count++) {
        char text[256], *messages = NULL;
        snprintf(text, sizeof text, "target: %s\nlayers:\n  - {name: q, N: 64, K: 64, M: 1}\n",
                 name);
        struct shapes s;
        struct target want;
        if (shapes_from_text("t.yaml", text, &s, &messages) != 0)
            fail_msg("target %s rejected: %s", name, messages);
        assert_int_equal(target_named(name, &want), 0);
        assert_memory_equal(&s.target, &want, sizeof want);
        assert_string_equal(target_check(&want), "");
        shapes_free(&s);
        free(messages);
    }
    assert_int_equal(count, 5);
    struct target k1, dflt = target_default(), k3, x100, a100, generic, t = target_default();
    assert_int_equal(target_named("k1", &k1), 0);
    assert_memory_equal(&k1, &dflt, sizeof k1);
    assert_int_equal(target_named("k3", &k3), 0);
    assert_int_equal(target_named("k3-x100", &x100), 0);
    assert_memory_equal(&k3, &x100, sizeof k3);
    assert_int_equal(target_named("k3-a100", &a100), 0);
    assert_int_equal(target_named("generic", &generic), 0);
    assert_int_equal(x100.vlen, 256);
    assert_int_equal(x100.mhz, 2400);
    assert_int_equal(a100.vlen, 1024);
    assert_int_equal(a100.mhz, 2000);
    assert_int_equal(generic.vlen, 128);
    assert_int_equal(target_named("K3", &t), -1);
    char err[200];
    assert_int_equal(target_parse(&t, "k3-a100,l2_kib=2048", err, sizeof err), 0);
    assert_int_equal(t.vlen, 1024);
    assert_int_equal(t.l2_kib, 2048);
    assert_int_equal(target_parse(&t, "k4", err, sizeof err), -1);
    assert_string_equal(err, "unknown target \"k4\" (known: k1, k3, k3-x100, k3-a100, generic; "
                             "or FIELD=VALUE)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_target_any_order),
        cmocka_unit_test(test_target_by_name),
    };
    return cmocka_run_group_tests_name("target", tests, NULL, NULL);
}
