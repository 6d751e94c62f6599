#include "fork.h"

#include <pthread.h>
#include <stdio.h>

#include "counters.h"
#include "scratch.h"
#include "threads.h"
#include "weight.h"

/* The order every thread takes these in: a weight object's lock (held through a call), then
 * the scratch pool's, the counters' or the worker pool's (never two of those at once). */
static void prepare(void)
{
    gr_weights_fork_prepare();
    gr_scratch_fork_prepare();
    gr_counters_fork_prepare();
    gr_threads_fork_prepare();
}

static void parent(void)
{
    gr_threads_fork_parent();
    gr_counters_fork_parent();
    gr_scratch_fork_parent();
    gr_weights_fork_parent();
}

static void child(void)
{
    gr_threads_fork_child();
    gr_counters_fork_child();
    gr_scratch_fork_child();
    gr_weights_fork_child();
}

static pthread_once_t registered = PTHREAD_ONCE_INIT;

static void register_once(void)
{
    if (pthread_atfork(prepare, parent, child) != 0)
        fputs("gemm_rvv: pthread_atfork failed: a child forked while calls run may hang\n",
              stderr);
}

void gr_fork_register(void) { pthread_once(&registered, register_once); }
