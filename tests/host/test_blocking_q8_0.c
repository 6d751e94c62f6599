/* The blocking of a Q8_0 plan (gen/blocking_q8_0.c): its K block and column block, and its
 * modelled traffic and vector work, against figures worked out by hand on the K1 (VLEN 256:
 * panels of 32 columns; 32 KiB L1D; a column's 32-k block of weights is 34 bytes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "blocking.h"

static const uint64_t l2_k1 = 512 * 1024;

/* The GEMV: one K block of all K, one panel, each weight read once. N = 100 pads to 4 panels
 * of 32 columns (128): the model moves the padded panels (128 x 64 / 32 x 34 = 8704 bytes)
 * where the minimum counts the 100 real columns (6800), then X in FP32 (4 x 64) and Y (4 x
 * 100). Vector work per MAC, one row, one tile a strip: the row's 144 (16 vwmul + 16 vwmacc
 * at 2, 16 vwadd.wv at 4, 4 more at 4) + the tile's 32 loads + 26 to convert the scales (their
 * load 2, two e16 m2 operations at 2, two widening at 4, three at m4), over 32 x 32 MACs. */
static void test_gemv(void **state)
{
    (void)state;
    struct target t = target_default();
    struct blocking b = blocking_q8_0(&t, 2, 1, 100, 64, l2_k1);
    assert_int_equal(b.order, ORDER_STRIPS);
    assert_int_equal(b.k_block, 64);
    assert_int_equal(b.col_block, 128); /* every column: 100 padded to 4 panels */
    assert_true(b.dram_bytes == 8704 + 256 + 400);
    assert_true(b.min_bytes == 6800 + 256 + 400);
    assert_true(b.vwork_per_mac == 202.0 / 1024);
    /* All of K in one block however long K is: the sums stay in registers. */
    b = blocking_q8_0(&t, 2, 1, 4096, 4096, l2_k1);
    assert_int_equal(b.k_block, 4096);
    assert_int_equal(b.col_block, 4096);
    assert_true(b.dram_bytes == b.min_bytes);
}

/* Where everything stays in the L2, the K block is as many k as fill half the L1 with a
 * strip's weights: 16 KiB / (32 columns x 34 bytes) = 15 blocks of 32, 480 k; the column block
 * one panel (nothing to gain from more). M = 16, 4096 x 4096: a column block's weights and
 * the quantised X (16 x 4096 x 1.125 bytes) take 212,992 bytes, a K block's pass 27,008, both
 * within three quarters of the L2 (393,216): nothing moves beside the weights, X and Y once.
 * Work per MAC with 2-row tiles over 16 rows: 144 + (32 + 4) / 2 for the tile's loads and
 * its widened scales' load, + (26 + 4) / 16 for the strip's widening and store, over 1024. */
static void test_kc_fills_half_the_l1(void **state)
{
    (void)state;
    struct target t = target_default();
    struct blocking b = blocking_q8_0(&t, 2, 16, 4096, 4096, l2_k1);
    assert_int_equal(b.k_block, 480);
    assert_int_equal(b.col_block, 32);
    const double weights = 4096.0 * 4096 / 32 * 34, x = 16.0 * 4096 * 4, y = 16.0 * 4096 * 4;
    assert_true(b.min_bytes == weights + x + y);
    assert_true(b.dram_bytes == b.min_bytes);
    assert_true(b.vwork_per_mac == (144 + 36.0 / 2 + 30.0 / 16) / 1024);
    /* Never more than K: K = 256 is one block. */
    b = blocking_q8_0(&t, 2, 4, 4096, 256, l2_k1);
    assert_int_equal(b.k_block, 256);
    assert_int_equal(b.col_block, 32);
    /* An L1 too small for 64 k (1 KiB: 0 blocks of 32) still gets K blocks of 64. */
    t.l1d_kib = 1;
    b = blocking_q8_0(&t, 2, 16, 4096, 4096, l2_k1);
    assert_int_equal(b.k_block, 64);
}

/* M = 16, N = 4096, K = 16384: a column block's weights over all K (32 x 16384 x 34 / 32 =
 * 557,056 bytes) never stay in 393,216, so the quantised X (16 x 16384 x 1.125 = 294,912) is
 * read again for every column block after the first. The partial sums (16 x NC x 4 bytes)
 * make a round trip per K block unless one K block's pass stays: NC x (KC x 34 / 32 + 64) +
 * 16 x KC x 1.125 <= 393,216, i.e. NC <= 670 at KC 480, 1156 at 256, 1954 at 128, 2970 at 64.
 * So the best column block at each K block: 512 (7 more reads of X), 1024 (3), 1024 (3),
 * 2048 (1): K blocks of 64 and column blocks of 2048 cost one more read of X, 294,912 bytes. */
static void test_kc_and_nc_by_traffic(void **state)
{
    (void)state;
    struct target t = target_default();
    struct blocking b = blocking_q8_0(&t, 2, 16, 4096, 16384, l2_k1);
    assert_int_equal(b.order, ORDER_STRIPS);
    assert_int_equal(b.k_block, 64);
    assert_int_equal(b.col_block, 2048);
    const double weights = 4096.0 * 16384 / 32 * 34, x = 16.0 * 16384 * 4, y = 16.0 * 4096 * 4;
    assert_true(b.min_bytes == weights + x + y);
    assert_true(b.dram_bytes == weights + x + y + 294912);
    /* Modelled time: the vector work at DLEN 128 (2 cycles per LMUL unit of VLEN 256) at
     * 1.6 GHz, then the bytes at 6 GB/s. */
    const double macs = 16.0 * 4096 * 16384;
    const double seconds = b.vwork_per_mac * macs * 2 / 1.6e9 + b.dram_bytes / 6e9;
    assert_true(b.seconds > seconds * (1 - 1e-12) && b.seconds < seconds * (1 + 1e-12));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemv),
        cmocka_unit_test(test_kc_fills_half_the_l1),
        cmocka_unit_test(test_kc_and_nc_by_traffic),
    };
    return cmocka_run_group_tests_name("blocking_q8_0", tests, NULL, NULL);
}
