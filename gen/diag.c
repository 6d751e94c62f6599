#include "diag.h"

#include <stdarg.h>

void diag_error(struct diag *d, int line, int col, const char *fmt, ...)
{
    va_list ap;

    if (line > 0)
        fprintf(d->out, "%s:%d:%d: error: ", d->file, line, col);
    else
        fprintf(d->out, "%s: error: ", d->file);
    va_start(ap, fmt);
    vfprintf(d->out, fmt, ap);
    va_end(ap);
    fputc('\n', d->out);
    d->errors++;
}

void diag_out_of_memory(struct diag *d)
{
    diag_error(d, 0, 0, "out of memory");
}
