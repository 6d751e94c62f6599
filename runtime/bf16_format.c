/* BF16 plans in the driver: X read in place (or from a copy the blocking asks for) and arranged
 * per K block by the driver for the variant's tiles, so no X hook of its own; panels of
 * k-pairs, 4 bytes a column in either layout. */
#include "format.h"

static const gr_tile_fn *bf16_tiles(const struct gr_variant *variant, uint32_t lmul)
{
    return variant->tiles[__builtin_ctz(lmul)];
}

const struct gr_format_desc gr_format_bf16 = {
    .name = "bf16",
    .x_bytes = sizeof(uint16_t),
    .k_unit = 2,
    .unit_bytes = 4,
    .tiles = bf16_tiles,
};
