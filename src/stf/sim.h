/* Simulation mode (parameters sim_nranks, sim_rank; docs/SCALE.md): one
 * process acts as one rank of many. Insertion and remote inference run as
 * in a real run; the tasks this rank keeps are held, as they would be
 * while bodies run, and retired without running at the taskpool's wait;
 * no SEND or RECV reaches a network and no tile gets memory. */
#ifndef WEFT_STF_SIM_H
#define WEFT_STF_SIM_H

#include <stddef.h>

#include "context/context.h"

/* Reads sim_nranks and sim_rank after the parameters are loaded and, when
 * they ask for a simulation, makes ctx act as that rank (ctx->sim set).
 * WEFT_ERR_PARAM when MPI runs more than one process or the rank is out
 * of range. Main thread, before any other step of weft_init. */
int weft_sim_setup(weft_context_t *ctx);
/* Takes over ctx->ready: released tasks are held for the wait. */
void weft_sim_take_ready(weft_context_t *ctx);
/* Retires every held task and those they release, in order (main thread,
 * at a taskpool's wait). */
void weft_sim_drain(weft_context_t *ctx);
/* Host memory standing in for a tile's (bytes at least), shared by every
 * tile: what an application writes there is not kept. Valid until the
 * context ends, though a later call for more bytes returns another block.
 * NULL when out of memory. */
void *weft_sim_scratch(weft_context_t *ctx, size_t bytes);
/* The line "weft sim: rank r of n: walked ..." (weft_fini). */
void weft_sim_report(weft_context_t *ctx);
void weft_sim_free(weft_context_t *ctx);

#endif
