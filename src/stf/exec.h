/* Running a ready task: choose its copies, call its body, publish what it
 * wrote, release its successors. */
#ifndef WEFT_STF_EXEC_H
#define WEFT_STF_EXEC_H

#include "sched/task.h"

/* The scheduler's exec callback (arg is the context). */
void weft_exec_task(void *arg, weft_task_t *t, int worker);
/* Sends a task whose predecessors are done where it runs (any thread). */
void weft_exec_ready(void *arg, weft_task_t *t);

#endif
