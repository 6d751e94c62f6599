/* Every blocking field the generator writes is the one it chose: for each plan of the shipped
 * shapes.yaml (on several targets), the fields of each of its four blockings in the plan's C
 * data and in manifest.json against blocking_choose's, called here as the plan calls it. The
 * kernels give the same bits at any blocking, so no target test sees a swapped field; this
 * one does. And the emitted gr_contract.h's struct gr_blocking is gen/plan_fields.h's list,
 * member for member, in order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "alloc_fail.h"
#include "emit.h"
#include "files.h"
#include "plan.h"
#include "plan_fields.h"
#include "shapes.h"

/* The expected fields of b, spelled here apart from gen/plan_fields.h on purpose. */
struct field {
    const char *name;
    uint64_t value;
};
enum { FIELDS = 7 };
static void expected_fields(const struct blocking *b, struct field f[FIELDS])
{
    const struct field all[FIELDS] = {
        {"k_block", b->k_block},          {"col_block", b->col_block},
        {"x_copy_rows", b->x_copy.rows},  {"x_copy_cols", b->x_copy.cols},
        {"x_copy_stride", b->x_copy.stride}, {"x_copy_shared", b->x_copy.shared},
        {"col_rounds", b->x_copy.rounds},
    };
    memcpy(f, all, sizeof all);
}

static char *slurp(const char *path)
{
    char *text = file_read(path);
    if (!text)
        fail_msg("cannot read %s", path);
    return text;
}

/* The text from `from` up to the first `end` after it, as a new string; fails when absent. */
static char *between(const char *text, const char *from, const char *end, const char *what)
{
    const char *a = strstr(text, from);
    if (!a)
        fail_msg("%s: \"%s\" not found", what, from);
    const char *b = strstr(a, end);
    if (!b)
        fail_msg("%s: no \"%s\" after \"%s\"", what, end, from);
    char *s = malloc((size_t)(b - a) + 2); /* room for one more character */
    assert_non_null(s);
    memcpy(s, a, (size_t)(b - a));
    s[b - a] = '\0';
    return s;
}

/* Checks that `text` holds each field as `PREFIX NAME SEP VALUE` and the order as given. */
static void expect_fields(const char *text, const struct blocking *b, int json, const char *what)
{
    struct field f[FIELDS];
    expected_fields(b, f);
    char want[96];
    if (json)
        snprintf(want, sizeof want, "\"order\": \"%s\"", b->order == ORDER_STRIPS ? "strips" : "tiles");
    else
        snprintf(want, sizeof want, ".order = %s,",
                 b->order == ORDER_STRIPS ? "GR_ORDER_STRIPS" : "GR_ORDER_TILES");
    if (!strstr(text, want))
        fail_msg("%s: %s missing in: %s", what, want, text);
    for (int i = 0; i < FIELDS; i++) {
        if (json)
            snprintf(want, sizeof want, "\"%s\": %llu,", f[i].name, (unsigned long long)f[i].value);
        else
            snprintf(want, sizeof want, ".%s = %llu%s", f[i].name, (unsigned long long)f[i].value,
                     i == FIELDS - 1 ? "}" : ",");
        if (!strstr(text, want))
            fail_msg("%s: %s expected, in: %s", what, want, text);
    }
}

/* The list and the test's own name the same fields. */
static void test_list_is_the_test_s(void **state)
{
    (void)state;
    struct blocking b = {0};
    struct field f[FIELDS];
    expected_fields(&b, f);
    assert_int_equal(BLOCKING_FIELD_COUNT, FIELDS);
    for (int i = 0; i < FIELDS; i++)
        assert_string_equal(blocking_field_names[i], f[i].name);
}

/* The emitted contract's struct gr_blocking (at path) has `order`, then the list's members. */
static void check_contract(const char *path)
{
    char *contract = slurp(path);
    char *body = between(contract, "struct gr_blocking {", "};", path);
    /* Members: the identifiers after "uint32_t" up to ";", comments skipped. */
    const char *names[16];
    char *copies[16];
    int count = 0;
    for (char *c = body; (c = strstr(c, "uint32_t ")) != NULL;) {
        c += strlen("uint32_t ");
        char *semi = strchr(c, ';');
        assert_non_null(semi);
        for (char *tok = c; tok < semi;) {
            while (*tok == ' ' || *tok == ',')
                tok++;
            size_t len = strspn(tok, "abcdefghijklmnopqrstuvwxyz_0123456789");
            assert_true(len > 0 && count < 16);
            copies[count] = strndup(tok, len);
            names[count] = copies[count];
            count++;
            tok += len;
        }
        c = semi;
    }
    assert_int_equal(count, 1 + FIELDS);
    assert_string_equal(names[0], "order");
    for (int i = 0; i < FIELDS; i++)
        if (strcmp(names[1 + i], blocking_field_names[i]) != 0)
            fail_msg("struct gr_blocking member %d is %s, gen/plan_fields.h says %s", 1 + i,
                     names[1 + i], blocking_field_names[i]);
    for (int i = 0; i < count; i++)
        free(copies[i]);
    free(body);
    free(contract);
}

static void check_target(const char *target_name)
{
    char shapes_path[512], work[256], path[1024];
    snprintf(shapes_path, sizeof shapes_path, "%s/../shapes.yaml", TESTS_DIR);
    temp_dir_make(work, sizeof work, "fields");
    struct diag d = {shapes_path, stderr, 0};
    struct shapes s;
    struct plan p;
    assert_int_equal(shapes_read_file(shapes_path, &d, &s), 0);
    assert_int_equal(target_named(target_name, &s.target), 0);
    assert_int_equal(plan_build(&s, &s.gate, &s.buckets, &s.target, &p), 0);
    struct emit_options o = {"shapes.yaml", GEN_TEMPLATES_DIR, work, &s.gate, &s.buckets, 0};
    assert_int_equal(emit_plan(&s, &p, &o), 0);
    snprintf(path, sizeof path, "%s/gr_contract.h", work);
    check_contract(path);
    snprintf(path, sizeof path, "%s/manifest.json", work);
    char *manifest = slurp(path);
    assert_true(p.row_count > 0);

    const struct target *t = &s.target;
    const unsigned parts[SHARES] = {1, (unsigned)t->l2_cores};
    static const char *const json_keys[2][SHARES] = {{"\"alone\": {", "\"shared\": {"},
                                                     {"\"plain_alone\": {", "\"plain_shared\": {"}};
    static const char *const c_arrays[2] = {".blocking = {", ".plain = {"};
    static const char *const c_shares[SHARES] = {"[GR_L2_ALONE] = {", "[GR_L2_SHARED] = {"};
    size_t checked = 0;
    for (size_t i = 0; i < p.row_count; i++) {
        const struct plan_row *r = &p.rows[i];
        char key[160], what[256];
        snprintf(key, sizeof key, "{\"name\": \"%s\",", r->name);
        char *json_row = between(manifest, key, "}}", r->name); /* up to plain_shared's end */
        strcat(json_row, "}");
        snprintf(path, sizeof path, "%s/%s.c", work, r->name);
        char *c_file = slurp(path);
        for (int plain = 0; plain < 2; plain++) {
            char *c_array = between(c_file, c_arrays[plain], "\n    },", r->name);
            for (int sh = 0; sh < SHARES; sh++) {
                /* The generator's choice, asked again: plain weights below BLOCKING_SET_ROWS
                 * rows run the packed blocking (gen/plan.c). */
                enum weights w = plain && r->bucket >= BLOCKING_SET_ROWS ? WEIGHTS_PLAIN
                                                                        : WEIGHTS_PACKED;
                struct blocking want = blocking_choose(t, r->tile, r->bucket, r->n, r->k,
                                                       t->l2_kib * 1024, parts[sh], w);
                snprintf(what, sizeof what, "%s (%s) manifest %s", r->name, target_name,
                         json_keys[plain][sh]);
                char *json_b = between(json_row, json_keys[plain][sh], "}", what);
                expect_fields(json_b, &want, 1, what);
                free(json_b);
                snprintf(what, sizeof what, "%s (%s) C data %s%s", r->name, target_name,
                         c_arrays[plain], c_shares[sh]);
                char *c_b = between(c_array, c_shares[sh], "}", what);
                strcat(c_b, "}"); /* between stops before it; the last field is followed by it */
                expect_fields(c_b, &want, 0, what);
                free(c_b);
                checked++;
            }
            free(c_array);
        }
        free(c_file);
        free(json_row);
    }
    print_message("target %s: %zu plans, %zu blockings, each field as blocking_choose chose it\n",
                  target_name, p.row_count, checked);
    free(manifest);
    plan_free(&p);
    shapes_free(&s);
    assert_int_equal(temp_dir_remove(work), 0);
}

static void test_fields_as_chosen(void **state)
{
    (void)state;
    check_target("k1");
    check_target("k3-a100");
    check_target("generic");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_is_the_test_s),
        cmocka_unit_test(test_fields_as_chosen),
    };
    return cmocka_run_group_tests_name("plan fields", tests, NULL, NULL);
}
