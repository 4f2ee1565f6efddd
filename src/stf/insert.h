/* Local part of insertion: dependencies among the tasks of this rank. */
#ifndef WEFT_STF_INSERT_H
#define WEFT_STF_INSERT_H

#include "sched/task.h"
#include "stf/taskpool.h"

/* Numbers t, orders it after the local tasks it depends on and releases
 * it when nothing precedes it. Takes over the caller's reference. */
int weft_insert_local(weft_taskpool_t *tp, weft_task_t *t);

/* A NEW data that no task wrote yet (in this run, on any rank). */
int weft_insert_never_written(const weft_data_t *d);

#endif
