/* Where a ready task goes (comm engine, a device manager, the workers),
 * and its run on a worker: host copies, body, written flows published. */
#ifndef WEFT_EXEC_EXEC_H
#define WEFT_EXEC_EXEC_H

#include "sched/task.h"

/* The scheduler's exec callback (arg is the context). */
void weft_exec_task(void *arg, weft_task_t *t, int worker);
/* Sends a task whose predecessors are done where it runs (any thread):
 * the context's ready hook. */
void weft_exec_ready(void *arg, weft_task_t *t);

#endif
