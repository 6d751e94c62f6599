/* The plugin's messages, through ggml's log callback (llama.cpp's -v shows INFO), or stderr
 * where ggml has none: the bottom of the plugin, used by every other file. */
#include <stdarg.h>
#include <stdio.h>

#include "plugin.h"

void grg_log(enum ggml_log_level level, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    ggml_log_callback cb = NULL;
    void *user = NULL;
    ggml_log_get(&cb, &user);
    if (cb)
        cb(level, text, user);
    else
        fputs(text, stderr);
}
