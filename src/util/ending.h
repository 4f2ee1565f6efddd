/* What a process does when it ends without weft_fini: MPI_Abort (which
 * leaves by _exit), the launcher's SIGTERM, an exit with a live context, a
 * fatal signal in emulated device memory. Files other processes can still
 * see, as the emulated devices' zones in /dev/shm and the trace's .part
 * files, would outlive it: the modules that make them name them here, and
 * every such end unlinks them. */
#ifndef WEFT_UTIL_ENDING_H
#define WEFT_UTIL_ENDING_H

#include <mpi.h>

/* path is unlinked by weft_ending_run until weft_ending_forget: the
 * caller keeps the string alive until then. Noted with the calling
 * process's pid: a child the application forks inherits the list, and its
 * end leaves its parent's files. Past the list's room a path is left to
 * whoever sweeps such files. */
void weft_ending_unlink(const char *path);
void weft_ending_forget(const char *path);

/* Async-signal-safe: unlinks the paths the calling process named. */
void weft_ending_run(void);

/* Ends the job from a rank that cannot go on: weft_ending_run, then
 * MPI_Abort(comm, code), then _exit(code) should MPI_Abort return. From
 * then on weft_ending_aborting() is code + 1: an exit on the way (Open
 * MPI's abort itself failing for lack of memory calls exit) is weft's own
 * end, with that code, not an application's that forgot weft_fini. */
void weft_abort_job(MPI_Comm comm, int code) __attribute__((noreturn));
int weft_ending_aborting(void);

#endif
