/* GEMM_RVV_DISABLE=1 in the environment sends every call to the fallback from the start;
 * the API switch lets kernels serve again. A program of its own: the variable is read once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "gemm_rvv.h"

static void test_env_forces_fallback(void **state)
{
    (void)state;
    uint16_t x[31] = {0x3f80}, w[7 * 31] = {0x4000};
    float y[7];
    gemm_rvv_counter row;
    assert_false(gemm_rvv_kernels_active());
    assert_int_equal(gemm_rvv_linear_plain(x, 1, 31, w, 7, 31, 31, NULL, y, 7, GEMM_RVV_F32),
                     GEMM_RVV_OK);
    assert_int_equal(gemm_rvv_counters(&row, 1), 1);
    assert_int_equal(row.fallback_calls, 1);
    assert_int_equal(row.kernel_calls, 0);
    assert_true(y[0] == 2.0f && y[1] == 0.0f);
    gemm_rvv_force_fallback(0);
    /* Kernels again, where the core has them (the no-V run says it has not). */
    const char *no_v = getenv("GEMM_RVV_TEST_NO_V");
    assert_int_equal(gemm_rvv_kernels_active(), !(no_v && *no_v == '1'));
    assert_int_equal(gemm_rvv_linear_plain(x, 1, 31, w, 7, 31, 31, NULL, y, 7, GEMM_RVV_F32),
                     GEMM_RVV_OK);
    assert_int_equal(gemm_rvv_counters(&row, 1), 1);
    assert_int_equal(row.kernel_calls, 1);
}

int main(void)
{
    setenv("GEMM_RVV_DISABLE", "1", 1);
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_env_forces_fallback)};
    return cmocka_run_group_tests_name("env", tests, NULL, NULL);
}
