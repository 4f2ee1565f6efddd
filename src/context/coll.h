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
 * WEFT_SUCCESS, or WEFT_ERR_MPI after an error line naming `what` and
 * MPI's words, the context diverged (weft_context_diverge: the other
 * ranks' views are unknown, so no collective follows on it). The caller
 * makes no further collective and returns the status. Main thread. */
int weft_coll_check(weft_context_t *ctx, int mpi_rc, const char *what)
    __attribute__((warn_unused_result));

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
