/* The parts of weft_init and weft_fini kept in files of their own: MPI,
 * one a process for every context (procmpi.c), and the parameters that
 * may change after weft_init (ctxquery.c). */
#ifndef WEFT_RUNTIME_LIFECYCLE_H
#define WEFT_RUNTIME_LIFECYCLE_H

#include "context/context.h"

/* MPI started (or found started) for ctx, ctx's duplicate of
 * MPI_COMM_WORLD and the ranks' nodes; WEFT_ERR_MPI after an error line
 * when MPI was finalized already or cannot start. */
int weft_runtime_start_mpi(weft_context_t *ctx, int *argc, char ***argv);
/* Undoes weft_runtime_start_mpi; MPI_Finalize with the last live context
 * when weft started MPI. */
void weft_runtime_stop_mpi(weft_context_t *ctx);
/* Copies the parameters weft_param_set may change into ctx. */
void weft_runtime_apply_live_params(weft_context_t *ctx);

#endif
