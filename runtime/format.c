/* The formats' descriptors by id (enum gr_format). */
#include "format.h"

const struct gr_format_desc *gr_format_of(uint32_t format)
{
    return format == GR_FORMAT_Q8_0 ? &gr_format_q8_0 : &gr_format_bf16;
}
