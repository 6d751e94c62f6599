/* GEMM_RVV_DISABLE=1 in the environment sends every call to the fallback from the start;
 * the API switch lets kernels serve again; any value but 1 and 0 is reported and leaves the
 * kernels on. A program of its own: the variable is read once (the refused value in a child
 * forked before the library is used). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "child.h"
#include "gemm_rvv.h"
#include "testdata.h"

/* In a child: GEMM_RVV_DISABLE=false leaves kernels active where the core has V, and says so
 * once on stderr. */
static int child_with_false(void *unused)
{
    (void)unused;
    setenv("GEMM_RVV_DISABLE", "false", 1);
    const char *no_v = getenv("GEMM_RVV_TEST_NO_V");
    int with_v = !(no_v && *no_v == '1');
    uint16_t x[31] = {0x3f80}, w[7 * 31] = {0x4000};
    float y[7];
    gemm_rvv_counter row;
    if (gemm_rvv_kernels_active() != with_v ||
        gemm_rvv_linear_plain(x, 1, 31, w, 7, 31, 31, NULL, y, 7, GEMM_RVV_F32) != GEMM_RVV_OK ||
        gemm_rvv_counters(&row, 1) != 1 || row.kernel_calls != (uint64_t)with_v ||
        !(y[0] == 2.0f && y[1] == 0.0f) || gemm_rvv_kernels_active() != with_v)
        return 2;
    return 0;
}

static void test_refused_value_reported(void **state)
{
    (void)state;
    char err[512];
    assert_int_equal(run_child(child_with_false, NULL, err, sizeof err, 60000), 0);
    assert_string_equal(err, "gemm_rvv: GEMM_RVV_DISABLE=\"false\" ignored: expected 1 or 0; "
                             "kernels stay enabled\n");
}

/* A 7 x 31 GEMV (a planned shape of shapes-test.yaml) on small integers: every product and
 * partial sum is exact, so each output is the integer dot product. */
enum { N = 7, K = 31 };
static void small_integers(uint16_t *x, uint16_t *w)
{
    for (int k = 0; k < K; k++) {
        float xv = (float)(k % 5 - 2), wv;
        uint32_t bits;
        memcpy(&bits, &xv, 4);
        x[k] = (uint16_t)(bits >> 16);
        for (int n = 0; n < N; n++) {
            wv = (float)((3 * n + k) % 7 - 3);
            memcpy(&bits, &wv, 4);
            w[n * K + k] = (uint16_t)(bits >> 16);
        }
    }
}

static void expect_integer_dots(const float *y)
{
    for (int n = 0; n < N; n++) {
        int want = 0;
        for (int k = 0; k < K; k++)
            want += (k % 5 - 2) * ((3 * n + k) % 7 - 3);
        if (y[n] != (float)want)
            fail_msg("y[%d] = %g, want %d", n, (double)y[n], want);
    }
}

static void test_env_forces_fallback(void **state)
{
    (void)state;
    uint16_t x[K], w[N * K];
    float by_fallback[N], by_kernel[N];
    gemm_rvv_counter row;
    small_integers(x, w);
    assert_false(gemm_rvv_kernels_active());
    assert_int_equal(gemm_rvv_linear_plain(x, 1, K, w, N, K, K, NULL, by_fallback, N,
                                           GEMM_RVV_F32), GEMM_RVV_OK);
    assert_int_equal(gemm_rvv_counters(&row, 1), 1);
    assert_int_equal(row.fallback_calls, 1);
    assert_int_equal(row.kernel_calls, 0);
    expect_integer_dots(by_fallback);
    gemm_rvv_force_fallback(0);
    /* Kernels again, where the core has them (the no-V run says it has not), with the same
     * outputs. */
    const char *no_v = getenv("GEMM_RVV_TEST_NO_V");
    assert_int_equal(gemm_rvv_kernels_active(), !(no_v && *no_v == '1'));
    assert_int_equal(gemm_rvv_linear_plain(x, 1, K, w, N, K, K, NULL, by_kernel, N,
                                           GEMM_RVV_F32), GEMM_RVV_OK);
    assert_int_equal(gemm_rvv_counters(&row, 1), 1);
    assert_int_equal(row.kernel_calls, !(no_v && *no_v == '1'));
    expect_integer_dots(by_kernel);
    assert_memory_equal(by_kernel, by_fallback, sizeof by_kernel);
    digest_print("outputs", digest_add(DIGEST_INIT, by_kernel, sizeof by_kernel));
}

int main(void)
{
    setenv("GEMM_RVV_DISABLE", "1", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refused_value_reported), /* first: the library is still unused */
        cmocka_unit_test(test_env_forces_fallback),
    };
    return cmocka_run_group_tests_name("env", tests, NULL, NULL);
}
