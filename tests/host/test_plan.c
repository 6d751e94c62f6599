/* The plan: which kernels a shapes file needs, how layers share them, and that it does not
 * depend on the order of the layers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "plan.h"

static void plan_text(const char *text, struct shapes *s, struct plan *p)
{
    struct diag d = {"plan.yaml", stderr, 0};
    assert_int_equal(shapes_read_buffer(text, strlen(text), &d, s), 0);
    assert_int_equal(plan_build(s, &s->gate, &s->buckets, p), 0);
}

static const char *const llama =
    "layers:\n"
    "  - {name: q_proj,    N: 4096,  K: 4096,  M: [1, 3, 4, 16]}\n"
    "  - {name: k_proj,    N: 4096,  K: 4096,  M: [1, 4]}\n"
    "  - {name: up_proj,   N: 11008, K: 4096,  M: [1, 200]}\n"
    "  - {name: down_proj, N: 4096,  K: 11008, M: [1]}\n"
    "  - {name: tiny,      N: 896,   K: 896,   M: [1]}\n";

static void test_sharing(void **state)
{
    (void)state;
    struct shapes s;
    struct plan p;
    plan_text(llama, &s, &p);
    /* 10 (layer, M) entries; up_proj M=200 and tiny go to the fallback. */
    assert_int_equal(p.count, 10);
    assert_int_equal(p.fallback_count, 2);
    /* Kernels by (K, bucket): gemv k4096, gemm m4 k4096, gemm m16 k4096, gemv k11008. */
    assert_int_equal(p.kernel_count, 4);
    assert_string_equal(p.kernels[0].name, "bf16_gemv_m1_k4096");
    assert_string_equal(p.kernels[1].name, "bf16_gemm_m4_k4096");
    assert_string_equal(p.kernels[2].name, "bf16_gemm_m16_k4096");
    assert_string_equal(p.kernels[3].name, "bf16_gemv_m1_k11008");
    /* gemv k4096 serves q, k and up at M=1; M=3 and M=4 share the bucket-4 kernel. */
    assert_int_equal(p.kernels[0].users, 3);
    assert_int_equal(p.kernels[1].users, 3);
    /* Registry rows by (N, K, bucket): one per distinct shape key. */
    assert_int_equal(p.row_count, 5);
    assert_int_equal(p.rows[0].n, 4096);
    assert_int_equal(p.rows[0].k, 4096);
    assert_int_equal(p.rows[0].bucket, 1);
    assert_int_equal(p.rows[3].k, 11008);
    assert_int_equal(p.rows[4].n, 11008);
    assert_int_equal(p.rows[4].kernel, 0);
    /* The fallback entries carry their reason; the kernel entries their bucket. */
    assert_int_equal(p.entries[1].m, 3);
    assert_int_equal(p.entries[1].decision.bucket, 4);
    assert_int_equal(p.entries[7].kernel, NO_KERNEL);
    assert_string_equal(p.entries[7].decision.reason, "M=200 > 128");
    assert_string_equal(p.entries[9].decision.reason,
                        "N=896 < 1024, K=896 < 1024, M*N*K=802816 < 1000000");
    plan_free(&p);
    shapes_free(&s);
}

static void test_order_does_not_matter(void **state)
{
    (void)state;
    const char *reversed =
        "layers:\n"
        "  - {name: tiny,      N: 896,   K: 896,   M: [1]}\n"
        "  - {name: down_proj, N: 4096,  K: 11008, M: [1]}\n"
        "  - {name: up_proj,   N: 11008, K: 4096,  M: [200, 1]}\n"
        "  - {name: k_proj,    N: 4096,  K: 4096,  M: [4, 1]}\n"
        "  - {name: q_proj,    N: 4096,  K: 4096,  M: [16, 4, 3, 1]}\n";
    struct shapes s1, s2;
    struct plan p1, p2;
    plan_text(llama, &s1, &p1);
    plan_text(reversed, &s2, &p2);
    assert_int_equal(p1.kernel_count, p2.kernel_count);
    for (size_t i = 0; i < p1.kernel_count; i++)
        assert_string_equal(p1.kernels[i].name, p2.kernels[i].name);
    assert_int_equal(p1.row_count, p2.row_count);
    assert_memory_equal(p1.rows, p2.rows, p1.row_count * sizeof *p1.rows);
    plan_free(&p1);
    plan_free(&p2);
    shapes_free(&s1);
    shapes_free(&s2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sharing),
        cmocka_unit_test(test_order_does_not_matter),
    };
    return cmocka_run_group_tests_name("plan", tests, NULL, NULL);
}
