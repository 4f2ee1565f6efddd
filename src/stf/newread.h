/* What an insertion checks of a flow that reads a NEW data (weft_data_new)
 * before any task wrote it: whether the rank that runs the task makes
 * its initial contents (weft_data_set_init), or why it is refused alike on
 * every rank, each rank knowing only what it was told (docs/SEMANTICS.md
 * section 1). Main thread. */
#ifndef WEFT_STF_NEWREAD_H
#define WEFT_STF_NEWREAD_H

#include "sched/task.h"

/* A NEW data that no task wrote yet (in this run, on any rank) and this
 * rank holds no contents of: a host write on its owner counts there only. */
int weft_insert_never_written(const weft_data_t *d);

/* Flow i of t: 1 when the rank that runs t makes the data's initial
 * contents, 0 when it reads contents that exist, WEFT_ERR_INVALID after
 * logging why it is refused. by_weft: t is weft's own (a reduction's fold
 * into its data reads the owner's contents where they are). */
int weft_newread_check(const weft_task_t *t, int i, int by_weft);

/* Simulation: d, a NEW data never written here, was made before a graph,
 * which may have written it on another simulated rank unseen here; `what`
 * (the call) is said once a context. 0 in a real run or otherwise. */
int weft_newread_sim_unseen(const weft_data_t *d, const char *what);

#endif
