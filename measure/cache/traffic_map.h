/* DRAM traffic by 4 KiB page of the program's address space, for telling which buffer moves
 * the bytes: measure/cache/cache_model.c's regions=FILE. Pages are kept in a hash table that grows. */
#ifndef TRAFFIC_MAP_H
#define TRAFFIC_MAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cache_sim.h"

struct traffic_page {
    uint64_t page; /* address >> 12, plus 1: 0 marks an empty slot */
    uint64_t lines[CACHE_SIM_MAX_L2][2]; /* per L2: lines filled, lines written back */
};

struct traffic_map {
    struct traffic_page *slot;
    size_t capacity, used;
};

/* Adds one line moved by L2 l2_index; returns -1 when out of memory. */
int traffic_map_add(struct traffic_map *m, size_t l2_index, uint64_t addr, int is_write);

/* Prints runs of consecutive pages with traffic, lowest address first, one a line:
 * "START END KIB" then "l2=SIZE fills=LINES writebacks=LINES" per L2 of sim. */
void traffic_map_print(const struct traffic_map *m, const struct cache_sim *sim, FILE *out);

#endif
