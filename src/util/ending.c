/* The files an end without weft_fini unlinks (ending.h). */
#include "util/ending.h"

#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

/* Zones (one a device and context) and trace files a process has at once. */
#define ENDING_PATHS 192

/* A slot is claimed by its pid (0: free), then holds the path. */
static atomic_long path_pid[ENDING_PATHS];
static _Atomic(const char *) paths[ENDING_PATHS];

void weft_ending_unlink(const char *path)
{
    long me = (long)getpid();
    for (int i = 0; i < ENDING_PATHS; i++) {
        long none = 0;
        if (!atomic_compare_exchange_strong(&path_pid[i], &none, me)) continue;
        atomic_store(&paths[i], path);
        return;
    }
}

void weft_ending_forget(const char *path)
{
    long me = (long)getpid();
    for (int i = 0; i < ENDING_PATHS; i++)
        if (atomic_load(&paths[i]) == path && atomic_load(&path_pid[i]) == me) {
            atomic_store(&paths[i], NULL);
            atomic_store(&path_pid[i], 0);
            return;
        }
}

void weft_ending_run(void)
{
    long me = (long)getpid();
    for (int i = 0; i < ENDING_PATHS; i++) {
        const char *p = atomic_load(&paths[i]);
        if (p && atomic_load(&path_pid[i]) == me) unlink(p);
    }
}

static atomic_int aborting; /* 0, or the code weft_abort_job ends the job with, plus one */

int weft_ending_aborting(void) { return atomic_load(&aborting); }

void weft_abort_job(MPI_Comm comm, int code)
{
    atomic_store(&aborting, code + 1);
    weft_ending_run();
    MPI_Abort(comm, code);
    fflush(NULL);
    _exit(code);
}
