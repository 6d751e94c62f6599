/* The build's manifest.json (gen/manifest.c): strings escaped as JSON wants them, the gate, the
 * buckets and the target as given, an entry for each (layer, M) with null where the fallback
 * has no plan, and plain weights' blockings for BF16 plans only; the attention entries and
 * plans. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gen_input.h"
#include "manifest.h"

static char *manifest_of(const char *shapes_text, const char *source)
{
    struct shapes s;
    struct plan p;
    plan_from_text(shapes_text, &s, &p);
    struct text out = {0};
    manifest_write(&out, &s, &p, source, &s.gate, &s.buckets);
    assert_false(out.failed);
    plan_free(&p);
    shapes_free(&s);
    return out.data;
}

static void expect(const char *text, const char *want)
{
    if (!strstr(text, want))
        fail_msg("expected %s in:\n%s", want, text);
}

/* Quotes and backslashes are escaped with a backslash, bytes below 0x20 as \u00XX; the rest
 * (DEL, UTF-8) as it is. The model and the shapes file's path may hold any of them (a layer's
 * name may not: gen/shapes_yaml.c). */
static void test_strings_escaped(void **state)
{
    (void)state;
    char *json = manifest_of("model: \"say \\\"hi\\\"\\tC:\\\\x\"\n"
                             "layers:\n  - {name: q, N: 4096, K: 4096, M: 1}\n",
                             "in\x01/\x7f\xc3\xa9\n.yaml");
    expect(json, "\"source\": \"in\\u0001/\x7f\xc3\xa9\\u000a.yaml\",\n");
    expect(json, "\"model\": \"say \\\"hi\\\"\\u0009C:\\\\x\",\n");
    free(json);
}

/* Settings as given; no model is null; an entry of a plan, one of the fallback; a Q8_0 plan
 * without plain weights' blockings, a BF16 one with them. */
static void test_settings_and_entries(void **state)
{
    (void)state;
    char *json = manifest_of("gate: {min_n: 100, min_k: 200, max_m: 64, min_mnk: 5}\n"
                             "buckets: [4, 64]\ntarget: k3-a100\nlayers:\n"
                             "  - {name: q, N: 4096, K: 4096, M: [1, 3], weights: q8_0}\n"
                             "  - {name: o, N: 4096, K: 4096, M: 2}\n"
                             "  - {name: t, N: 50, K: 4096, M: 1}\n",
                             "s.yaml");
    expect(json, "\"model\": null,\n");
    expect(json, "\"gate\": {\"min_n\": 100, \"min_k\": 200, \"max_m\": 64, \"min_mnk\": 5},\n");
    expect(json, "\"buckets\": [1, 4, 64],\n");
    expect(json, "\"target\": {\"vlen\": 1024, ");
    expect(json, "{\"name\": \"q\", \"M\": 3, \"N\": 4096, \"K\": 4096, \"weights\": \"q8_0\", "
                 "\"verdict\": \"kernel\", \"bucket\": 4, \"plan\": \"q8_0_gemm_m4_n4096_k4096\", "
                 "\"row_blocks\": 1, \"reason\": null}");
    expect(json, "{\"name\": \"t\", \"M\": 1, \"N\": 50, \"K\": 4096, \"weights\": \"bf16\", "
                 "\"verdict\": \"fallback\", \"bucket\": null, \"plan\": null, "
                 "\"row_blocks\": null, \"reason\": \"N=50 < 100\"}");
    const char *q8 = strstr(json, "{\"name\": \"q8_0_gemm_m4_n4096_k4096\", \"N\": 4096, "
                                  "\"K\": 4096, \"format\": \"q8_0\", \"bucket\": 4, ");
    const char *bf16 = strstr(json, "{\"name\": \"bf16_gemm_m4_n4096_k4096\", \"N\": 4096, "
                                    "\"K\": 4096, \"format\": \"bf16\", \"bucket\": 4, ");
    assert_non_null(q8);
    assert_non_null(bf16);
    /* The plans are sorted by format within (N, K): BF16 first, then Q8_0, the last plan. */
    assert_true(bf16 < q8);
    assert_non_null(strstr(bf16, "\"plain_alone\": {\"order\": "));
    assert_true(strstr(bf16, "\"plain_alone\"") < q8);
    assert_null(strstr(q8, "\"plain_"));
    assert_non_null(strstr(q8, "}\n  ],\n  \"attention\": [],\n  \"attention_plans\": []\n}\n"));
    free(json);
}

/* An item per (attention entry, n_q), its plan or the fallback with the reason; an item per
 * attention plan with its shape, bucket, pairs and why; the file ends after them. */
static void test_attention(void **state)
{
    (void)state;
    char *json = manifest_of("attention:\n"
                             "  - {name: gqa, head_dim: 64, q_heads: 6, kv_heads: 2, k: bf16, "
                             "n_q: [1, 64]}\n"
                             "  - {name: wide, head_dim: 1024, q_heads: 1, kv_heads: 1, n_q: 1}\n",
                             "s.yaml");
    expect(json, "\"entries\": [\n  ],\n");
    expect(json, "  \"attention\": [\n"
                 "    {\"name\": \"gqa\", \"n_q\": 1, \"head_dim\": 64, \"q_heads\": 6, "
                 "\"kv_heads\": 2, \"k\": \"bf16\", \"v\": \"f16\", \"verdict\": \"kernel\", "
                 "\"plan\": \"attn_kbf16_vf16_d64_h6_kv2_q1\", \"reason\": null},\n"
                 "    {\"name\": \"gqa\", \"n_q\": 64, ");
    expect(json, "    {\"name\": \"wide\", \"n_q\": 1, \"head_dim\": 1024, \"q_heads\": 1, "
                 "\"kv_heads\": 1, \"k\": \"f16\", \"v\": \"f16\", \"verdict\": \"fallback\", "
                 "\"plan\": null, \"reason\": \"head_dim=1024 > 256: the score tile's scratch "
                 "(head_dim x 32 floats) would pass 32 KiB\"}\n  ],\n");
    expect(json, "  \"attention_plans\": [\n"
                 "    {\"name\": \"attn_kbf16_vf16_d64_h6_kv2_q1\", \"head_dim\": 64, "
                 "\"q_heads\": 6, \"kv_heads\": 2, \"k\": \"bf16\", \"v\": \"f16\", "
                 "\"n_q\": 1, \"pairs\": 3, \"shared\": 1, \"why\": \"3 pairs a tile: "
                 "decoding, the group's 3 query heads share each K and V block read\"},\n"
                 "    {\"name\": \"attn_kbf16_vf16_d64_h6_kv2_q64\", ");
    expect(json, "\"n_q\": 64, \"pairs\": 4, \"shared\": 16, \"why\": \"4 pairs a tile: rows x "
                 "the group's 3 heads, row then head, share each K and V block read; 16 tiles a "
                 "thread widen each K block once (their sums within 16 KiB)\"}\n  ]\n}\n");
    free(json);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strings_escaped),
        cmocka_unit_test(test_settings_and_entries),
        cmocka_unit_test(test_attention),
    };
    return cmocka_run_group_tests_name("manifest", tests, NULL, NULL);
}
