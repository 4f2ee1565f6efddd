/* What a process does when it ends without weft_fini: MPI_Abort (which
 * leaves by _exit), the launcher's SIGTERM, an exit with a live context, a
 * fatal signal in emulated device memory. Resources other processes can
 * still see, as the emulated devices' files in /dev/shm, would outlive it:
 * the modules that make them add a clean-up here, and every such end runs
 * them. */
#ifndef WEFT_UTIL_ENDING_H
#define WEFT_UTIL_ENDING_H

#include <mpi.h>

/* Adds fn (async-signal-safe: it may run in a signal handler); adding one
 * already there does nothing. */
void weft_ending_add(void (*fn)(void));

/* Runs the clean-ups (async-signal-safe). */
void weft_ending_run(void);

/* Ends the job from a rank that cannot go on: the clean-ups, then
 * MPI_Abort(comm, code). */
void weft_abort_job(MPI_Comm comm, int code);

#endif
