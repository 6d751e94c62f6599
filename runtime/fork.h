/* The library across fork(): handlers registered with pthread_atfork hold every lock of the
 * library while the process forks, so the child's copy of each structure is whole, and give
 * the child a library of its own: no worker threads (it starts its own on its first call), no
 * scratch in use, weight objects unlocked. A fork waits for the calls and weight updates
 * running on weight objects to finish. */
#ifndef GEMM_RVV_FORK_H
#define GEMM_RVV_FORK_H

/* Registers the handlers once; called when the library is loaded. */
void gr_fork_register(void);

#endif
