/* The bounds a shapes file must keep (gen/yaml_bounds.c): small files that expand, nest or
 * alias past them are refused at once with the bound they break, and a file over 32 MiB where
 * it crosses the bound. */
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

#include "gen_input.h"
#include "shapes.h"

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
    assert_int_equal(shapes_from_text("big.yaml", text, &s, &messages), -1);
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
    struct messages m;
    messages_open(&m, "big.yaml");
    struct shapes s;
    assert_int_equal(shapes_read_file(path, &m.d, &s), -1);
    char *messages = messages_close(&m);
    unlink(path);
    assert_string_equal(messages, "big.yaml:623437:45: error: the file goes on past 32 MiB here, "
                                  "more than a shapes file may hold\n");
    assert_null(s.layers);
    free(messages);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_file_too_large),
    };
    return cmocka_run_group_tests_name("yaml_bounds", tests, NULL, NULL);
}
