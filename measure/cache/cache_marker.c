/* See cache_marker.h. Out of line and with different bodies, so that the compiler neither
 * inlines them nor folds the two into one symbol. */
#include "cache_marker.h"

__attribute__((noinline)) void cache_model_start(void) { __asm__ volatile("nop"); }

__attribute__((noinline)) void cache_model_stop(void) { __asm__ volatile("nop\n\tnop"); }
