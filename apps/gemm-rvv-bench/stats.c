#include "stats.h"

#include <stdlib.h>

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

struct timing timing_of(double *samples, int count)
{
    qsort(samples, (size_t)count, sizeof *samples, compare_double);
    double median = count % 2 ? samples[count / 2]
                              : (samples[count / 2 - 1] + samples[count / 2]) / 2;
    return (struct timing){median, samples[0], samples[count - 1], count};
}

double timing_spread(const struct timing *t)
{
    return t->median_s > 0 ? (t->max_s - t->min_s) / t->median_s : 0;
}
