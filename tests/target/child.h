/* Running a check in a child process of its own: for settings read once per process, and for
 * code that must be seen to return (a hang is killed after a deadline). */
#ifndef TEST_CHILD_H
#define TEST_CHILD_H

#include <stddef.h>

/* Runs fn(arg) in a forked child whose stderr goes to err (size bytes, NUL-terminated, the rest
 * dropped) and whose exit status is fn's result. Returns that status, 100 + N when signal N
 * ended it, or -1 when it was killed after timeout_ms. */
int run_child(int (*fn)(void *arg), void *arg, char *err, size_t size, int timeout_ms);

#endif
