/* The marker functions measure/cache/cache_model.c recognises by name: it empties its caches when
 * cache_model_start runs and writes back and counts when cache_model_stop runs, so a program
 * brackets the code whose DRAM traffic it wants measured. Without the plugin they do nothing.
 * The program must be linked statically, so that QEMU knows the symbols. */
#ifndef CACHE_MARKER_H
#define CACHE_MARKER_H

void cache_model_start(void);
void cache_model_stop(void);

#endif
