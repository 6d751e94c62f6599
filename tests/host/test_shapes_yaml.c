/* Reading shapes files (gen/shapes_yaml.c): the bad-input corpus in tests/bad (each file's
 * first line says the exact error it must produce), what good files turn into, and out of
 * memory at each allocation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "alloc_fail.h"
#include "gen_input.h"
#include "shapes.h"

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
        char expected[512] = "";
        FILE *f = fopen(ent->d_name, "r");
        assert_non_null(f);
        assert_non_null(fgets(expected, sizeof expected, f));
        fclose(f);
        assert_true(strncmp(expected, "# expect: ", 10) == 0);

        struct messages m;
        messages_open(&m, ent->d_name);
        struct shapes s;
        int rc = shapes_read_file(ent->d_name, &m.d, &s);
        char *messages = messages_close(&m);
        if (rc != -1 || m.d.errors == 0)
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
    assert_int_equal(shapes_from_text("good.yaml", text, &s, &messages), 0);
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
    assert_int_equal(shapes_from_text("list.yaml", "- {name: a, N: 8, K: 8, M: 3}\n", &s, &messages), 0);
    assert_int_equal(s.count, 1);
    assert_int_equal(s.layers[0].m[0], 3);
    assert_false(s.buckets_set);
    assert_int_equal(s.buckets.count, 7); /* the defaults */
    shapes_free(&s);
    free(messages);
}

/* Attention entries: their fields, kv: for both caches or k: and v: apart (f16 without
 * either, llama.cpp's default), n_q sorted with repeats dropped, a file of attention entries
 * alone, and the widest head and the largest counts that fit. */
static void test_attention_entries(void **state)
{
    (void)state;
    struct shapes s;
    char *messages = NULL;
    const char *text =
        "attention:\n"
        "  - {name: attn, head_dim: 128, q_heads: 16, kv_heads: 8, kv: bf16, n_q: [512, 1, 128, 1]}\n"
        "  - name: layers.0/self_attn\n"
        "    head_dim: 64\n"
        "    q_heads: 14\n"
        "    kv_heads: 2\n"
        "    v: bf16\n"
        "    n_q: 1\n"
        "  - {name: x, head_dim: 1024, q_heads: 2147483647, kv_heads: 1, k: bf16, v: f16, "
        "n_q: 4194303}\n";
    assert_int_equal(shapes_from_text("attn.yaml", text, &s, &messages), 0);
    assert_string_equal(messages, "");
    assert_int_equal(s.count, 0);
    assert_int_equal(s.attention_count, 3);
    const struct attention *a = &s.attention[0];
    assert_string_equal(a->name, "attn");
    assert_int_equal(a->head_dim, 128);
    assert_int_equal(a->q_heads, 16);
    assert_int_equal(a->kv_heads, 8);
    assert_int_equal(a->k_type, KV_bf16);
    assert_int_equal(a->v_type, KV_bf16);
    assert_int_equal(a->n_q_count, 3);
    assert_int_equal(a->n_q[0], 1);
    assert_int_equal(a->n_q[2], 512);
    assert_int_equal(a->line, 2);
    a = &s.attention[1];
    assert_string_equal(a->name, "layers.0/self_attn");
    assert_int_equal(a->k_type, KV_f16);
    assert_int_equal(a->v_type, KV_bf16);
    assert_int_equal(a->n_q_count, 1);
    assert_int_equal(a->line, 3);
    a = &s.attention[2];
    assert_int_equal(a->k_type, KV_bf16);
    assert_int_equal(a->v_type, KV_f16);
    assert_int_equal(a->n_q[0], 4194303); /* 4194303 * (2^31 - 1) * 1024 < 2^63 */
    shapes_free(&s);
    free(messages);
    /* Every bad entry is reported; the good one is not kept. */
    text = "layers:\n  - {name: q, N: 8, K: 8, M: 1}\nattention:\n"
           "  - {name: a, head_dim: 0, q_heads: 2, kv_heads: 1, n_q: 1}\n"
           "  - {name: b, head_dim: 8, q_heads: 2, kv_heads: 1, n_q: 1}\n"
           "  - [name, c]\n";
    assert_int_equal(shapes_from_text("bad.yaml", text, &s, &messages), -1);
    assert_string_equal(messages,
                        "bad.yaml:4:25: error: head_dim must be a positive integer, got 0\n"
                        "bad.yaml:6:5: error: each attention entry must be a mapping with name, "
                        "head_dim, q_heads, kv_heads and n_q, got a list\n");
    assert_null(s.attention);
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
    assert_int_equal(shapes_from_text("two.yaml", text, &s, &messages), -1);
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
    assert_int_equal(shapes_from_text("max.yaml", fits, &s, &messages), 0);
    assert_int_equal(s.layers[0].n, 2147483647u);
    assert_int_equal(s.layers[0].m[1], 2);
    shapes_free(&s);
    free(messages);
    const char *over = "layers:\n"
                       "  - {name: a, N: 2147483647, K: 2147483647, M: [3]}\n";
    assert_int_equal(shapes_from_text("max.yaml", over, &s, &messages), -1);
    assert_string_equal(messages, "max.yaml:2:48: error: layer \"a\": M*N*K = "
                                  "3*2147483647*2147483647 does not fit 63 bits\n");
    free(messages);
}

static void test_missing_file(void **state)
{
    (void)state;
    struct messages m;
    messages_open(&m, "no/such.yaml");
    struct shapes s;
    assert_int_equal(shapes_read_file("no/such.yaml", &m.d, &s), -1);
    char *messages = messages_close(&m);
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
                       "  - {name: a, N: 64, K: 64, M: [8, 1]}\n"
                       "attention:\n"
                       "  - {name: x, head_dim: 64, q_heads: 4, kv_heads: 2, n_q: [1, 8]}\n"
                       "  - {name: y, head_dim: 64, q_heads: 4, kv_heads: 4, n_q: 1}\n"
                       "  - {name: z, head_dim: 64, q_heads: 4, kv_heads: 1, n_q: 1}\n"
                       "  - {name: w, head_dim: 64, q_heads: 4, kv_heads: 1, kv: bf16, n_q: 2}\n"
                       "  - {name: v, head_dim: 64, q_heads: 4, kv_heads: 1, n_q: 3}\n";
    long n = 0;
    for (;; n++) {
        struct shapes s;
        struct messages m;
        messages_open(&m, "oom.yaml");
        alloc_fail_at(n);
        int rc = shapes_read_buffer(text, strlen(text), &m.d, &s);
        int fired = alloc_fail_fired();
        alloc_fail_at(-1);
        char *messages = messages_close(&m);
        if (!fired) { /* every allocation was failed once: the last run read it all */
            assert_int_equal(rc, 0);
            assert_int_equal(s.count, 2);
            assert_int_equal(s.layers[0].m_count, 3);
            assert_int_equal(s.attention_count, 5);
            assert_int_equal(s.attention[0].n_q_count, 2);
            shapes_free(&s);
            free(messages);
            break;
        }
        if (rc != -1 || strcmp(messages, "oom.yaml: error: out of memory\n") != 0)
            fail_msg("allocation %ld failed: status %d, messages \"%s\"", n, rc, messages);
        assert_null(s.layers);
        assert_null(s.model);
        assert_null(s.attention);
        free(messages);
    }
    assert_true(n >= 20);
    print_message("each of %ld allocations failed in turn, each reported as out of memory\n", n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_corpus),
        cmocka_unit_test(test_good_file),
        cmocka_unit_test(test_bare_list),
        cmocka_unit_test(test_attention_entries),
        cmocka_unit_test(test_all_errors_reported),
        cmocka_unit_test(test_size_limits),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests_name("shapes_yaml", tests, NULL, NULL);
}
