/* Reading shapes files: the bad-input corpus in tests/bad (each file's first line says the
 * exact error it must produce), and what good files turn into. */
#define _GNU_SOURCE /* open_memstream on older glibc headers */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "alloc_fail.h"
#include "shapes.h"

/* Reads `text` as a file named `name`; returns the status, the messages go to *messages. */
static int read_text(const char *name, const char *text, struct shapes *s, char **messages)
{
    size_t size;
    FILE *out = open_memstream(messages, &size);
    assert_non_null(out);
    struct diag d = {name, out, 0};
    int rc = shapes_read_buffer(text, strlen(text), &d, s);
    fclose(out);
    return rc;
}

static void test_bad_corpus(void **state)
{
    (void)state;
    assert_int_equal(chdir(TESTS_DIR "/bad"), 0);
    DIR *dir = opendir(".");
    assert_non_null(dir);
    size_t files = 0;
    struct dirent *ent;
    while ((ent = readdir(dir)) != NULL) {
        size_t len = strlen(ent->d_name);
        if (len < 6 || strcmp(ent->d_name + len - 5, ".yaml") != 0)
            continue;
        char expected[512] = "", *messages = NULL;
        FILE *f = fopen(ent->d_name, "r");
        assert_non_null(f);
        assert_non_null(fgets(expected, sizeof expected, f));
        fclose(f);
        assert_true(strncmp(expected, "# expect: ", 10) == 0);

        size_t size;
        FILE *out = open_memstream(&messages, &size);
        struct diag d = {ent->d_name, out, 0};
        struct shapes s;
        int rc = shapes_read_file(ent->d_name, &d, &s);
        fclose(out);
        if (rc != -1 || d.errors == 0)
            fail_msg("%s was accepted", ent->d_name);
        /* The first message is the one the file names, to the letter. */
        char *newline = strchr(messages, '\n');
        if (newline)
            *newline = '\0';
        if (strncmp(messages, expected + 10, strlen(messages)) != 0 ||
            strlen(expected + 10) != strlen(messages) + 1)
            fail_msg("%s:\n  expected: %s  got:      %s", ent->d_name, expected + 10, messages);
        assert_null(s.layers); /* nothing half-read is handed back */
        free(messages);
        files++;
    }
    closedir(dir);
    assert_true(files >= 20);
    print_message("%zu bad files, each rejected with its exact message\n", files);
}

static void test_good_file(void **state)
{
    (void)state;
    struct shapes s;
    char *messages = NULL;
    const char *text =
        "model: tiny\n"
        "gate: {min_n: 16, max_m: 64}\n"
        "buckets: [3, 9]\n"
        "layers:\n"
        "  - name: model.layers.0.q_proj\n"
        "    N: 4096\n"
        "    K: 2048\n"
        "    M: [16, 1, 4, 16]\n"
        "  - {name: lm_head, N: 32000, K: 4096, M: 1}\n"
        "  - {name: model.layers.0.q_proj, N: 4096, K: 2048, M: [2, 128]}\n";
    assert_int_equal(read_text("good.yaml", text, &s, &messages), 0);
    assert_string_equal(messages, "");
    assert_string_equal(s.model, "tiny");
    assert_int_equal(s.gate.min_n, 16);
    assert_int_equal(s.gate.min_k, 1024); /* not set: the default */
    assert_int_equal(s.gate.max_m, 64);
    assert_true(s.gate_set[0] && !s.gate_set[1] && s.gate_set[2] && !s.gate_set[3]);
    assert_true(s.buckets_set);
    assert_int_equal(s.buckets.count, 2);
    assert_int_equal(s.buckets.m[1], 9);
    /* The repeated layer is merged into the first: M values sorted, repeats dropped. */
    assert_int_equal(s.count, 2);
    assert_string_equal(s.layers[0].name, "model.layers.0.q_proj");
    assert_int_equal(s.layers[0].line, 5);
    assert_int_equal(s.layers[0].m_count, 5);
    const uint64_t want[] = {1, 2, 4, 16, 128};
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(s.layers[0].m[i], want[i]);
    assert_int_equal(s.layers[1].n, 32000);
    assert_int_equal(s.layers[1].m_count, 1);
    shapes_free(&s);
    free(messages);
}

static void test_bare_list(void **state)
{
    (void)state;
    struct shapes s;
    char *messages = NULL;
    assert_int_equal(read_text("list.yaml", "- {name: a, N: 8, K: 8, M: 3}\n", &s, &messages), 0);
    assert_int_equal(s.count, 1);
    assert_int_equal(s.layers[0].m[0], 3);
    assert_false(s.buckets_set);
    assert_int_equal(s.buckets.count, 7); /* the defaults */
    shapes_free(&s);
    free(messages);
}

/* Every problem of a file is reported, not just the first. */
static void test_all_errors_reported(void **state)
{
    (void)state;
    struct shapes s;
    char *messages = NULL;
    const char *text = "layers:\n"
                       "  - {name: a, N: 0, K: 8, M: 1}\n"
                       "  - {name: b, N: 8, K: x, M: 1}\n";
    assert_int_equal(read_text("two.yaml", text, &s, &messages), -1);
    assert_string_equal(messages,
                        "two.yaml:2:18: error: N must be a positive integer, got 0\n"
                        "two.yaml:3:24: error: K must be a positive integer, got \"x\"\n");
    free(messages);
}

/* The largest sizes that still fit are accepted, and one more is not: M*N*K must stay below
 * 2^63, and 2 * (2^31 - 1)^2 does while 3 * (2^31 - 1)^2 does not. */
static void test_size_limits(void **state)
{
    (void)state;
    struct shapes s;
    char *messages = NULL;
    const char *fits = "layers:\n"
                       "  - {name: a, N: 2147483647, K: 2147483647, M: [1, 2]}\n";
    assert_int_equal(read_text("max.yaml", fits, &s, &messages), 0);
    assert_int_equal(s.layers[0].n, 2147483647u);
    assert_int_equal(s.layers[0].m[1], 2);
    shapes_free(&s);
    free(messages);
    const char *over = "layers:\n"
                       "  - {name: a, N: 2147483647, K: 2147483647, M: [3]}\n";
    assert_int_equal(read_text("max.yaml", over, &s, &messages), -1);
    assert_string_equal(messages, "max.yaml:2:48: error: layer \"a\": M*N*K = "
                                  "3*2147483647*2147483647 does not fit 63 bits\n");
    free(messages);
}

static void test_missing_file(void **state)
{
    (void)state;
    char *messages = NULL;
    size_t size;
    FILE *out = open_memstream(&messages, &size);
    struct diag d = {"no/such.yaml", out, 0};
    struct shapes s;
    assert_int_equal(shapes_read_file("no/such.yaml", &d, &s), -1);
    fclose(out);
    assert_string_equal(messages, "no/such.yaml: error: cannot open: No such file or directory\n");
    free(messages);
}

/* Fails each allocation of a read in turn, libyaml's included: every one ends with the one
 * out-of-memory message and nothing handed back (ASan's leak check sees what was freed). */
static void test_out_of_memory(void **state)
{
    (void)state;
    const char *text = "model: tiny\n"
                       "gate: {min_n: 16}\n"
                       "buckets: [4, 8]\n"
                       "layers:\n"
                       "  - {name: a, N: 64, K: 64, M: [1, 4]}\n"
                       "  - {name: b, N: 64, K: 32, M: 2}\n"
                       "  - {name: a, N: 64, K: 64, M: [8, 1]}\n";
    long n = 0;
    for (;; n++) {
        struct shapes s;
        char *messages = NULL;
        size_t size;
        FILE *out = open_memstream(&messages, &size);
        assert_non_null(out);
        struct diag d = {"oom.yaml", out, 0};
        alloc_fail_at(n);
        int rc = shapes_read_buffer(text, strlen(text), &d, &s);
        int fired = alloc_fail_fired();
        alloc_fail_at(-1);
        fclose(out);
        if (!fired) { /* every allocation was failed once: the last run read it all */
            assert_int_equal(rc, 0);
            assert_int_equal(s.count, 2);
            assert_int_equal(s.layers[0].m_count, 3);
            shapes_free(&s);
            free(messages);
            break;
        }
        if (rc != -1 || strcmp(messages, "oom.yaml: error: out of memory\n") != 0)
            fail_msg("allocation %ld failed: status %d, messages \"%s\"", n, rc, messages);
        assert_null(s.layers);
        assert_null(s.model);
        free(messages);
    }
    assert_true(n >= 20);
    print_message("each of %ld allocations failed in turn, each reported as out of memory\n", n);
}

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
        if (read_text("t.yaml", text, &s, &messages) != 0)
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
        if (read_text("t.yaml", text, &s, &messages) != 0)
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

/* A growing text for the bounds tests. */
struct big {
    char *data;
    size_t len, cap;
};

static void big_add(struct big *b, const char *text, size_t times)
{
    size_t n = strlen(text);
    for (size_t i = 0; i < times; i++) {
        if (b->len + n + 1 > b->cap) {
            b->cap = 2 * (b->len + n + 1);
            b->data = realloc(b->data, b->cap);
            assert_non_null(b->data);
        }
        memcpy(b->data + b->len, text, n + 1);
        b->len += n;
    }
}

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* Reads `text` and expects exactly `message`, within a second (the amplified files took
 * minutes and gigabytes before the bounds). */
static void expect_bounded(const char *text, const char *message)
{
    struct shapes s;
    char *messages = NULL;
    double start = seconds();
    assert_int_equal(read_text("big.yaml", text, &s, &messages), -1);
    double took = seconds() - start;
    if (strcmp(messages, message) != 0)
        fail_msg("expected: %s  got:      %s", message, messages);
    if (took > 1.0)
        fail_msg("took %.2f s for: %s", took, message);
    assert_null(s.layers);
    free(messages);
}

/* Small files that expand, nest or alias past the bounds, made here rather than kept in git. */
static void test_bounds(void **state)
{
    (void)state;
    char line[64];
    /* One layer of 20,000 M values, aliased 20,000 times (249 KB). */
    struct big b = {0};
    big_add(&b, "layers:\n  - &l {name: a, N: 4096, K: 4096, M: [1", 1);
    for (int i = 2; i <= 20000; i++) {
        snprintf(line, sizeof line, ", %d", i);
        big_add(&b, line, 1);
    }
    big_add(&b, "]}\n", 1);
    big_add(&b, "  - *l\n", 20000);
    expect_bounded(b.data, "big.yaml:201:5: error: the file holds more than 4000000 values, "
                           "lists and mappings with its aliases expanded (the most a shapes "
                           "file may)\n");
    /* 400 KB of [. */
    b.len = 0;
    big_add(&b, "[", 400000);
    expect_bounded(b.data, "big.yaml:1:33: error: lists and mappings nest deeper than 32 levels "
                           "here (a shapes file needs 4)\n");
    /* More anchors than the loader can search in time, and more aliases. */
    b.len = 0;
    big_add(&b, "layers:\n  - {name: a, N: 64, K: 64, M: [", 1);
    for (int i = 0; i < 1025; i++) {
        snprintf(line, sizeof line, "&a%d 1, ", i);
        big_add(&b, line, 1);
    }
    big_add(&b, "1]}\n", 1);
    expect_bounded(b.data, "big.yaml:2:9163: error: more than 1024 anchors (&name) in one "
                           "document\n");
    b.len = 0;
    big_add(&b, "layers:\n  - {name: a, N: 64, K: 64, M: [&one 1", 1);
    big_add(&b, ", *one", 65537);
    big_add(&b, "]}\n", 1);
    expect_bounded(b.data, "big.yaml:2:393257: error: more than 65536 aliases (*name) in the "
                           "file\n");
    free(b.data);
}

/* A file over 32 MiB is refused where it crosses the bound, before it is parsed. */
static void test_file_too_large(void **state)
{
    (void)state;
    char path[] = "/tmp/gemm-rvv-big-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fputs("layers:\n", f);
    for (int i = 0; ftell(f) < (33l << 20); i++)
        fprintf(f, "  - {name: layer%d, N: 4096, K: 4096, M: [1, 16]}\n", i);
    fclose(f);
    char *messages = NULL;
    size_t size;
    FILE *out = open_memstream(&messages, &size);
    struct diag d = {"big.yaml", out, 0};
    struct shapes s;
    assert_int_equal(shapes_read_file(path, &d, &s), -1);
    fclose(out);
    unlink(path);
    assert_string_equal(messages, "big.yaml:623437:45: error: the file goes on past 32 MiB here, "
                                  "more than a shapes file may hold\n");
    assert_null(s.layers);
    free(messages);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_corpus),
        cmocka_unit_test(test_good_file),
        cmocka_unit_test(test_bare_list),
        cmocka_unit_test(test_all_errors_reported),
        cmocka_unit_test(test_size_limits),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_out_of_memory),
        cmocka_unit_test(test_target_any_order),
        cmocka_unit_test(test_target_by_name),
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_file_too_large),
    };
    return cmocka_run_group_tests_name("shapes", tests, NULL, NULL);
}
