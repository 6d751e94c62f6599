/* The profitability gate at its edges and the M buckets (gen/gate.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "gate.h"

static struct decision decide(uint64_t m, uint64_t n, uint64_t k)
{
    struct gate g = gate_default();
    struct buckets b = buckets_default();
    return gate_decide(&g, &b, m, n, k);
}

static void test_n_edge(void **state)
{
    (void)state;
    struct decision d = decide(1, 1023, 4096);
    assert_int_equal(d.verdict, VERDICT_FALLBACK);
    assert_string_equal(d.reason, "N=1023 < 1024");
    d = decide(1, 1024, 4096);
    assert_int_equal(d.verdict, VERDICT_KERNEL);
    assert_int_equal(d.bucket, 1);
    assert_string_equal(d.reason, "");
}

static void test_k_edge(void **state)
{
    (void)state;
    struct decision d = decide(8, 4096, 1023);
    assert_int_equal(d.verdict, VERDICT_FALLBACK);
    assert_string_equal(d.reason, "K=1023 < 1024");
    d = decide(8, 4096, 1024);
    assert_int_equal(d.verdict, VERDICT_KERNEL);
    assert_int_equal(d.bucket, 8);
}

static void test_m_edge(void **state)
{
    (void)state;
    struct decision d = decide(128, 4096, 4096);
    assert_int_equal(d.verdict, VERDICT_KERNEL);
    assert_int_equal(d.bucket, 128);
    assert_int_equal(d.row_blocks, 1);
    /* Above max_m the runtime runs the largest bucket in blocks of rows: so says the gate. */
    d = decide(129, 4096, 4096);
    assert_int_equal(d.verdict, VERDICT_KERNEL);
    assert_int_equal(d.bucket, 128);
    assert_int_equal(d.row_blocks, 2);
    assert_string_equal(d.reason, "M=129 > 128: 2 row blocks of M <= 128");
    d = decide(512, 4096, 4096);
    assert_int_equal(d.row_blocks, 4);
}

/* Under the defaults N, K >= 1024 already give M*N*K >= 1,048,576, so the M*N*K edge is
 * tested with the N and K minimums lowered. */
static void test_mnk_edge(void **state)
{
    (void)state;
    struct gate g = gate_default();
    struct buckets b = buckets_default();
    g.min_n = 1;
    g.min_k = 1;
    struct decision d = gate_decide(&g, &b, 1, 999, 1001); /* 999,999 */
    assert_int_equal(d.verdict, VERDICT_FALLBACK);
    assert_string_equal(d.reason, "M*N*K=999999 < 1000000");
    d = gate_decide(&g, &b, 1, 1000, 1000); /* 1,000,000 */
    assert_int_equal(d.verdict, VERDICT_KERNEL);
    d = gate_decide(&g, &b, 2, 500, 1000);
    assert_int_equal(d.verdict, VERDICT_KERNEL);
    assert_int_equal(d.bucket, 2);
}

static void test_every_reason_listed(void **state)
{
    (void)state;
    struct decision d = decide(200, 896, 100);
    assert_string_equal(d.reason, "N=896 < 1024, K=100 < 1024, M=200 > 128");
}

static void test_bucket_every_m(void **state)
{
    (void)state;
    struct buckets b = buckets_default();
    for (uint64_t m = 1; m <= 129; m++) {
        uint32_t want = m == 1 ? 1 : m <= 2 ? 2 : m <= 4 ? 4 : m <= 8 ? 8 : m <= 16 ? 16
                      : m <= 32 ? 32 : m <= 64 ? 64 : m <= 128 ? 128 : 0;
        assert_int_equal(bucket_for(&b, m), want);
    }
}

static void test_custom_buckets(void **state)
{
    (void)state;
    struct gate g = gate_default();
    struct buckets b = {{3, 12}, 2};
    assert_int_equal(bucket_for(&b, 1), 1);
    assert_int_equal(bucket_for(&b, 2), 3);
    assert_int_equal(bucket_for(&b, 3), 3);
    assert_int_equal(bucket_for(&b, 4), 12);
    assert_int_equal(bucket_for(&b, 13), 0);
    struct decision d = gate_decide(&g, &b, 13, 4096, 4096);
    assert_int_equal(d.verdict, VERDICT_KERNEL);
    assert_int_equal(d.bucket, 12);
    assert_string_equal(d.reason, "M=13 > largest bucket 12: 2 row blocks of M <= 12");
    /* No GEMM bucket within max_m: M > 1 has no kernel. */
    g.max_m = 2;
    d = gate_decide(&g, &b, 5, 4096, 4096);
    assert_int_equal(d.verdict, VERDICT_FALLBACK);
    assert_string_equal(d.reason, "M=5 > 2, no bucket within M <= 2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_n_edge),
        cmocka_unit_test(test_k_edge),
        cmocka_unit_test(test_m_edge),
        cmocka_unit_test(test_mnk_edge),
        cmocka_unit_test(test_every_reason_listed),
        cmocka_unit_test(test_bucket_every_m),
        cmocka_unit_test(test_custom_buckets),
    };
    return cmocka_run_group_tests_name("gate", tests, NULL, NULL);
}
