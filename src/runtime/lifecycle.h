/* The parts of weft_init and weft_fini kept in files of their own: MPI,
 * one a process for every context (procmpi.c), the agreement after each
 * step of weft_init (initagree.c), the parameters that may change after
 * weft_init (ctxquery.c), and the rank's threads (threads.c). */
#ifndef WEFT_RUNTIME_LIFECYCLE_H
#define WEFT_RUNTIME_LIFECYCLE_H

#include "context/context.h"

/* MPI started (or found started) for ctx, ctx's duplicate of
 * MPI_COMM_WORLD (user NULL: weft_init) or of *user (weft_init_comm: MPI
 * must be started) and the ranks' nodes; WEFT_ERR_MPI after an error line
 * when MPI was finalized already, cannot start, or *user is unusable. */
int weft_runtime_start_mpi(weft_context_t *ctx, int *argc, char ***argv, const MPI_Comm *user);
/* Undoes weft_runtime_start_mpi; MPI_Finalize with the last live context
 * when weft started MPI. */
void weft_runtime_stop_mpi(weft_context_t *ctx);
/* The application finalizes MPI under ctx (inside its MPI_Finalize): ctx
 * lets its communicator go and is no longer counted; weft will not call
 * MPI_Finalize. */
void weft_runtime_mpi_ended(weft_context_t *ctx);
/* Watches for an MPI_Finalize of the application while ctx lives (an
 * MPI_COMM_SELF attribute whose deletion MPI_Finalize runs first): it
 * stops ctx's threads there, while MPI still works, names the mistake and
 * leaves ctx to a weft_fini that makes no MPI call. unwatch: at weft_fini,
 * before weft's own MPI_Finalize. */
void weft_runtime_watch_mpi_end(weft_context_t *ctx);
void weft_runtime_unwatch_mpi_end(weft_context_t *ctx);
/* After each step of weft_init every rank learns whether any rank failed,
 * and all print the failing rank's own words (rc: this rank's outcome of
 * step `step`, named `what`). Step 1 also compares the parameters that
 * must be equal on every rank. Collective; WEFT_SUCCESS or the error. */
int weft_runtime_init_agree(weft_context_t *ctx, int step, const char *what, int rc);
/* Copies the parameters weft_param_set may change into ctx. */
void weft_runtime_apply_live_params(weft_context_t *ctx);
/* The PUs this rank's workers may use (ctx->cpuset): its binding when
 * mpiexec bound it, otherwise its share of the node's cores. */
int weft_runtime_choose_cpuset(weft_context_t *ctx);
/* weft_init's step 4: the workers, then the comm thread; undoes itself on
 * failure, naming what could not start. */
int weft_runtime_start_threads(weft_context_t *ctx);
/* Undoes weft_runtime_start_threads (weft_init's undo). */
void weft_runtime_stop_threads(weft_context_t *ctx);
/* weft_fini's stop of the comm engine (once every rank's transfers are
 * over) and of the scheduler's workers (joined, not freed); returns
 * whether the ranks were in step. */
int weft_runtime_fini_stop_threads(weft_context_t *ctx);

#endif
