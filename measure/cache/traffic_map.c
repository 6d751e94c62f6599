/* See traffic_map.h. */
#include "traffic_map.h"

#include <inttypes.h>
#include <stdlib.h>

static size_t home(uint64_t page, size_t capacity)
{
    return (size_t)((page * 0x9e3779b97f4a7c15ull) >> 32) & (capacity - 1);
}

static struct traffic_page *find_or_insert(struct traffic_map *m, uint64_t page)
{
    size_t i = home(page, m->capacity);
    while (m->slot[i].page && m->slot[i].page != page)
        i = (i + 1) & (m->capacity - 1);
    if (!m->slot[i].page) {
        m->slot[i].page = page;
        m->used++;
    }
    return &m->slot[i];
}

static int grow(struct traffic_map *m)
{
    struct traffic_map bigger = {calloc(m->capacity ? 2 * m->capacity : 4096,
                                        sizeof *bigger.slot), m->capacity ? 2 * m->capacity : 4096,
                                 0};
    if (!bigger.slot)
        return -1;
    for (size_t i = 0; i < m->capacity; i++)
        if (m->slot[i].page)
            *find_or_insert(&bigger, m->slot[i].page) = m->slot[i];
    free(m->slot);
    *m = bigger;
    return 0;
}

int traffic_map_add(struct traffic_map *m, size_t l2_index, uint64_t addr, int is_write)
{
    if (2 * (m->used + 1) > m->capacity && grow(m) != 0)
        return -1;
    find_or_insert(m, (addr >> 12) + 1)->lines[l2_index][is_write != 0]++;
    return 0;
}

static int by_page(const void *a, const void *b)
{
    uint64_t x = ((const struct traffic_page *)a)->page, y = ((const struct traffic_page *)b)->page;
    return (x > y) - (x < y);
}

void traffic_map_print(const struct traffic_map *m, const struct cache_sim *sim, FILE *out)
{
    struct traffic_page *pages = malloc((m->used ? m->used : 1) * sizeof *pages);
    if (!pages) {
        fprintf(out, "out of memory\n");
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i < m->capacity; i++)
        if (m->slot[i].page)
            pages[n++] = m->slot[i];
    qsort(pages, n, sizeof *pages, by_page);
    for (size_t first = 0, last; first < n; first = last + 1) {
        struct traffic_page run = pages[first];
        for (last = first; last + 1 < n && pages[last + 1].page == pages[last].page + 1; last++)
            for (size_t l = 0; l < sim->l2_count; l++)
                for (int w = 0; w < 2; w++)
                    run.lines[l][w] += pages[last + 1].lines[l][w];
        fprintf(out, "0x%" PRIx64 " 0x%" PRIx64 " %" PRIu64, (pages[first].page - 1) << 12,
                pages[last].page << 12, (pages[last].page - pages[first].page + 1) * 4);
        for (size_t l = 0; l < sim->l2_count; l++)
            fprintf(out, " l2=%" PRIu64 " fills=%" PRIu64 " writebacks=%" PRIu64, sim->l2[l].size,
                    run.lines[l][0], run.lines[l][1]);
        fputc('\n', out);
    }
    free(pages);
}
