/* The tile choice (gen/tile.c): what fits the vector registers, and the cheapest. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tiles_fit_and_are_cheapest),
    };
    return cmocka_run_group_tests_name("tile", tests, NULL, NULL);
}
