/* The collectives weft makes between its ranks once an agreement put them
 * in step (a wait's question whether a task failed, the recovery of good
 * versions and the key sets it gathers, a graph's wait telling the ranks
 * which NEW data it wrote (ptg/ptgsettle.c: its key gather and reduction),
 * the failure exchange, weft_fini's last exchange, and the one an
 * agreement adds when the ranks disagree: the failing rank's words or the
 * points each rank reached, stf/agree.c): MPI's return code
 * checked in one place, which
 * fault_inject's site mpi_coll can fail, so that these paths are tested. */
#ifndef WEFT_CONTEXT_COLL_H
#define WEFT_CONTEXT_COLL_H

#include "context/context.h"

/* What one collective ended with, mpi_rc being the MPI call's return code:
 * WEFT_SUCCESS; for an error MPI returned, weft_coll_failed_end; for one
 * fault_inject's mpi_coll made (on every rank alike, as a broken
 * communicator would), WEFT_ERR_MPI after an error line naming `what`, the
 * context diverged (weft_context_diverge: no collective follows on it).
 * The caller makes no further collective and returns the status. The
 * context's thread, or the one whose MPI_Finalize ends it (mpiend.c). */
int weft_coll_check(weft_context_t *ctx, int mpi_rc, const char *what)
    __attribute__((warn_unused_result));

/* An error MPI returned on this rank for collective `what`: MPI reports it
 * on the rank that met it, and the other ranks may wait in that collective
 * for ever (a rank whose schedule could not be built never joined it:
 * found under a memory limit). Says so with MPI's words and ends the job
 * (weft_abort_job). Returns only when MPI was finalized under the call (a
 * body or another thread called MPI_Finalize, mpiend.c: nothing may call
 * MPI), with WEFT_ERR_MPI and the context diverged. (A body finalizing
 * MPI just after that check makes MPI_Abort meet a finalized MPI, which
 * Open MPI ends the process for: the end comes either way.) */
int weft_coll_failed_end(weft_context_t *ctx, const char *what, int mpi_rc);

/* Whether every rank can go on: *ok becomes the minimum of every rank's
 * (a rank without its buffers must not leave the others in the next
 * collective; the lowest of the ranks that set theirs, leak.c). The status
 * as weft_coll_check's. */
int weft_coll_all(weft_context_t *ctx, int *ok, const char *what)
    __attribute__((warn_unused_result));

/* One rank's failure told to every rank: root's *status and its text (len
 * bytes at most, WEFT_LOG_LINE kept) replace every rank's, NUL-terminated.
 * On a failed broadcast neither changes. The status as weft_coll_check's. */
int weft_coll_share_failure(weft_context_t *ctx, int root, int *status, char *text, size_t len,
                            const char *what) __attribute__((warn_unused_result));

#endif
