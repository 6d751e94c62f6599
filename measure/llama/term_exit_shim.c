/* Preloaded into a program that only ends by a signal (ggml-rpc-server) under QEMU 7.2 with
 * a counting plugin: SIGTERM makes it exit (exit_group), so that QEMU runs the plugin's exit
 * callback and the counts are written; a signal's default action would end it without. */
#define _GNU_SOURCE
#include <signal.h>
#include <unistd.h>

static void term(int sig)
{
    (void)sig;
    _exit(0);
}

__attribute__((constructor)) static void install(void)
{
    signal(SIGTERM, term);
}
