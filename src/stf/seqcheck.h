/* Every rank must insert the same sequence. A running hash of the
 * sequence is compared across ranks when a taskpool is waited for, before
 * waiting on any transfer: a divergence is reported naming the first task
 * that differs, instead of a receive that never comes. */
#ifndef WEFT_STF_SEQCHECK_H
#define WEFT_STF_SEQCHECK_H

#include "sched/task.h"
#include "stf/taskpool.h"

/* Folds t (class name, data keys, modes) into tp's running hash. */
int weft_seqcheck_log(weft_taskpool_t *tp, const weft_task_t *t);
/* Collective over the context's ranks. WEFT_ERR_MISMATCH on divergence. */
int weft_seqcheck_verify(weft_taskpool_t *tp);
/* Forgets the log (after a successful wait). */
void weft_seqcheck_reset(weft_taskpool_t *tp);

#endif
