/* The tile choice (gen/tile.c): what fits the vector registers, and the cheapest. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../runtime/row_steps.h"
#include "tile.h"

/* Every bucket's tile fits the 32 vector registers, never has more rows than the bucket, and
 * is the cheapest of all that fit under the model. */
static void test_tiles_fit_and_are_cheapest(void **state)
{
    (void)state;
    for (unsigned bucket = 1; bucket <= 128; bucket++) {
        struct tile t = tile_choose(bucket);
        assert_true(tile_fits(t));
        assert_true(tile_vregs(t) + t.lmul <= VREGS);
        assert_true(t.rows >= 1 && t.rows <= bucket && t.rows <= TILE_MAX_ROWS);
        assert_true(t.lmul == 1 || t.lmul == 2 || t.lmul == 4 || t.lmul == 8);
        double score = tile_score(tile_cost(t, bucket));
        for (unsigned lmul = 1; lmul <= 8; lmul *= 2)
            for (unsigned rows = 1; rows <= bucket && rows <= TILE_MAX_ROWS; rows++) {
                struct tile o = {rows, lmul};
                if (!tile_fits(o))
                    continue;
                assert_true(score <= tile_score(tile_cost(o, bucket)) + 1e-12);
            }
    }
    /* The GEMV: one row at LMUL 8, 5 vector ops of LMUL 8 per 128 MACs at VLEN 256. */
    struct tile g = tile_choose(1);
    assert_int_equal(g.rows, 1);
    assert_int_equal(g.lmul, 8);
    assert_true(tile_cost(g, 1).vwork_per_mac == 5.0 / 16.0);
}

/* A call of one row tile: the LMUL whose tile of exactly its rows fits and is cheapest; the
 * widest that fits, as wider strips share each k's loads and steps among more columns. */
static void test_one_tile_lmul(void **state)
{
    (void)state;
    static const unsigned want[TILE_MAX_ROWS] = {8, 4, 4, 4, 4, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1};
    for (unsigned rows = 1; rows <= TILE_MAX_ROWS; rows++) {
        const unsigned lmul = tile_one_lmul(rows);
        assert_int_equal(lmul, want[rows - 1]);
        const struct tile t = {rows, lmul};
        assert_true(tile_fits(t));
        for (unsigned l = 1; l <= 8; l *= 2) {
            const struct tile o = {rows, l};
            if (tile_fits(o))
                assert_true(tile_score(tile_cost(t, rows)) <=
                            tile_score(tile_cost(o, rows)) + 1e-12);
        }
    }
}

/* A row tile of the plan's rows runs at the plan's LMUL, one of fewer at tile_one_lmul; on
 * the plans of 8x2 and 13x2 tiles, 3 .. 5 rows at LMUL 4. */
static void test_row_tile_lmul(void **state)
{
    (void)state;
    for (unsigned bucket = 1; bucket <= 128; bucket++) {
        const struct tile t = tile_choose(bucket);
        assert_int_equal(tile_row_lmul(t, t.rows), t.lmul);
        for (unsigned rows = 1; rows < t.rows; rows++)
            assert_int_equal(tile_row_lmul(t, rows), tile_one_lmul(rows));
    }
    const struct tile t8 = tile_choose(16), t13 = tile_choose(128);
    assert_true(t8.rows == 8 && t8.lmul == 2 && t13.rows == 13 && t13.lmul == 2);
    for (unsigned rows = 3; rows <= 5; rows++)
        assert_true(tile_row_lmul(t8, rows) == 4 && tile_row_lmul(t13, rows) == 4);
}

/* Every row tile the driver runs for any call on a bucket's plan (runtime/driver.c: row
 * blocks of the bucket cut into row tiles, runtime/row_steps.h, each at tile_row_lmul) is
 * among the tiles tile_rows_run says to emit; a tile the build lacks would be a NULL call. */
static void test_rows_run_cover_the_driver(void **state)
{
    (void)state;
    for (unsigned bucket = 1; bucket <= 128; bucket++) {
        const struct tile t = tile_choose(bucket);
        unsigned from[9] = {0}, most[9] = {0};
        tile_rows_run(t, bucket, from, most);
        const unsigned least = tile_rows_least(t);
        for (uint64_t m = 1; m <= 3 * (uint64_t)bucket + 2; m++) {
            for (uint64_t row = 0, block_end; row < m; row = block_end) {
                block_end = gr_row_step_end(row, bucket, least, m);
                const uint64_t rows = block_end - row;
                for (uint64_t r = 0, end; r < rows; r = end) {
                    end = gr_row_step_end(r, t.rows, least, rows);
                    const unsigned l = tile_row_lmul(t, (unsigned)(end - r));
                    assert_true(from[l] >= 1 && from[l] <= end - r && end - r <= most[l]);
                }
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tiles_fit_and_are_cheapest),
        cmocka_unit_test(test_one_tile_lmul),
        cmocka_unit_test(test_row_tile_lmul),
        cmocka_unit_test(test_rows_run_cover_the_driver),
    };
    return cmocka_run_group_tests_name("tile", tests, NULL, NULL);
}
