/* weft_fini's handling of the taskpools left in the context. */
#ifndef WEFT_RUNTIME_LIVEPOOLS_H
#define WEFT_RUNTIME_LIVEPOOLS_H

#include "context/context.h"

/* weft_fini's first step: an error naming each live taskpool with tasks
 * not waited for, then a wait for each in creation order (collective, as
 * the user's waits). Returns WEFT_ERR_INVALID when there was one. */
int weft_context_wait_forgotten(weft_context_t *ctx);
/* Frees the taskpools the user did not free: those the ranks agreed on
 * (mismatched 0) once the workers stopped, then (mismatched 1) those whose
 * tasks may still be held by a device or the comm engine, once every
 * thread is stopped. */
void weft_context_free_taskpools(weft_context_t *ctx, int mismatched);

#endif
