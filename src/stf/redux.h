/* Reductions (mode WEFT_REDUX): a task's REDUX flow is rewritten at
 * insertion into a read-write flow on a partial result of its rank (a NEW
 * data made once per rank and lane), so that tasks of different lanes run
 * at once; the partials are folded into the data by ordinary combine
 * tasks before the data's next other use and at the taskpool's wait.
 * Every rank makes the same rewrites, so the insertion sequences and the
 * remote inference see only ordinary flows. Main thread. */
#ifndef WEFT_STF_REDUX_H
#define WEFT_STF_REDUX_H

#include "sched/task.h"
#include "stf/taskpool.h"

struct weft_redux;

/* Rewrites the REDUX flows of t, which runs on exec_rank, inserting the
 * init task of each partial used for the first time since its last
 * combine. WEFT_ERR_INVALID (logged) for a data without a reduction or
 * with partials pending in another taskpool. */
int weft_redux_lower(weft_taskpool_t *tp, weft_task_t *t, int exec_rank);

/* WEFT_ERR_INVALID (logged) when a data t reduces into (WEFT_REDUX) is
 * named by another flow of t too; every rank refuses alike. */
int weft_redux_check_flows(const weft_task_t *t);

/* Inserts the combine tasks of the data t reads or writes otherwise (not
 * by REDUX) that have partials pending: before t is inserted. */
int weft_redux_flush_flows(weft_taskpool_t *tp, const weft_task_t *t);

/* At the wait: combines every data of tp with partials pending. */
int weft_redux_flush_pool(weft_taskpool_t *tp);

/* tp is destroyed: forgets its pending data (after a disagreement). */
void weft_redux_drop_pool(weft_taskpool_t *tp);

/* With the data's STF record: drops the partials. */
void weft_redux_free(struct weft_redux *r);

#endif
