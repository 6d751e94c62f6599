#include "child.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int run_child(int (*fn)(void *arg), void *arg, char *err, size_t size, int timeout_ms)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -2;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -2;
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 2);
        _exit(fn(arg));
    }
    close(fds[1]);
    size_t got = 0;
    int waited = 0, open = 1, status;
    struct pollfd p = {fds[0], POLLIN, 0};
    for (; open && waited < timeout_ms; waited += 10) {
        if (poll(&p, 1, 10) <= 0)
            continue;
        char sink[256];
        char *to = got < size - 1 ? err + got : sink;
        size_t room = got < size - 1 ? size - 1 - got : sizeof sink;
        ssize_t n = read(fds[0], to, room);
        if (n > 0 && to != sink)
            got += (size_t)n;
        else if (n <= 0)
            open = 0; /* the child closed its end: it is exiting */
    }
    err[got] = '\0';
    close(fds[0]);
    for (; waited < timeout_ms; waited += 5) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
        nanosleep(&(struct timespec){0, 5 * 1000 * 1000}, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}
