#include "rows.h"

#include <stdlib.h>
#include <string.h>

size_t sort_unique_rows(void *rows, size_t count, size_t size,
                        int (*cmp)(const void *, const void *))
{
    char *r = rows;
    qsort(r, count, size, cmp);
    size_t unique = 0;
    for (size_t i = 0; i < count; i++)
        if (unique == 0 || cmp(r + (unique - 1) * size, r + i * size) != 0)
            memmove(r + unique++ * size, r + i * size, size);
    return unique;
}
