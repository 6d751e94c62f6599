/* Where a measuring program puts the caller's buffers, since a call's DRAM traffic depends on
 * it: a block of rows that does not start on a cache line shares its end lines with its
 * neighbours. Chosen by DRAM_PLACEMENT:
 *   aligned   64-byte aligned (aligned_alloc), as an engine's tensors often are (the default)
 *   malloc    plain malloc: glibc puts large blocks 16 bytes past a page boundary
 *   page+B    each buffer in a mapping of its own, B bytes past its first page (B even, below
 *             4096; an FP32 buffer at B rounded down to a multiple of 4), an untouched page
 *             after it, so that the cache model's map shows every buffer on its own */
#ifndef PLACEMENT_H
#define PLACEMENT_H

#include <stddef.h>

enum placement_kind { PLACEMENT_ALIGNED, PLACEMENT_MALLOC, PLACEMENT_PAGE };

struct placement {
    enum placement_kind kind;
    size_t offset; /* page+B: B */
};

/* DRAM_PLACEMENT parsed (unset or empty: aligned); a bad value exits with a message naming
 * `program`. */
struct placement placement_from_env(const char *program);

/* `bytes` for elements of `element` bytes (2: BF16, 4: FP32) where the placement puts them;
 * exits with a message naming `program` when out of memory. */
void *placement_alloc(const struct placement *p, size_t bytes, size_t element, const char *program);

/* A mapping of its own, `offset` bytes into its first page, an untouched page after it. */
void *placement_page(size_t bytes, size_t offset, const char *program);

/* "aligned", "malloc" or "page+B", for the programs' output. */
const char *placement_name(const struct placement *p, char *buf, size_t size);

#endif
