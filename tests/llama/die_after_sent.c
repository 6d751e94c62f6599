/* Preloaded into the llama.cpp client that make test-rpc kills while it loads the model
 * (tests/llama/check-rpc.sh): the process kills itself with SIGKILL once it has sent
 * DIE_AFTER_SENT bytes through send(), with which ggml's RPC client sends the weights to its
 * servers. So it dies with the weights part of the way there, on any machine: a kill from
 * outside lands too late where loading takes less time than noticing it (40 ms here). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

static size_t limit; /* 0: never */
static atomic_size_t sent;

__attribute__((constructor)) static void read_limit(void)
{
    const char *v = getenv("DIE_AFTER_SENT");
    limit = v ? strtoull(v, NULL, 10) : 0;
}

ssize_t send(int fd, const void *buf, size_t len, int flags)
{
    ssize_t n = sendto(fd, buf, len, flags, NULL, 0);
    if (n > 0 && limit && atomic_fetch_add(&sent, (size_t)n) + (size_t)n >= limit)
        kill(getpid(), SIGKILL);
    return n;
}
