/* Local part of insertion: dependencies among the tasks of this rank. */
#ifndef WEFT_STF_INSERT_H
#define WEFT_STF_INSERT_H

#include "sched/task.h"
#include "stf/taskpool.h"

/* Numbers t, orders it after the local tasks it depends on and releases
 * it when nothing precedes it. Takes over the caller's reference. */
int weft_insert_local(weft_taskpool_t *tp, weft_task_t *t);

/* Numbers t (its insertion number) and notes it as a pending use of its
 * data (device eviction by next use); the first half of
 * weft_insert_local, for front-ends that order tasks themselves. Their
 * numbers need not follow dependencies: t's uses are noted unordered
 * (data/nextuse.h), so no version is taken for final by its number. */
int weft_insert_number(weft_taskpool_t *tp, weft_task_t *t);
/* Parses an argument array as weft_insert_task_array does into the walked
 * task w (no structure, no reference taken); *aff: its affinity flow or -1. */
int weft_insert_parse(weft_taskpool_t *tp, const weft_task_class_t *cls, const weft_arg_t *args,
                      int nargs, weft_task_t *w, int *aff);
/* weft_insert_task_array for the tasks weft inserts itself (a reduction's
 * init and combine tasks): a data argument may also be a data the user
 * released since the tasks that need these were inserted (the data lives
 * on until the taskpool's wait runs them); the checks are otherwise the
 * same. */
int weft_insert_by_weft(weft_taskpool_t *tp, const weft_task_class_t *cls, const weft_arg_t *args,
                        int nargs);
/* weft_insert_by_weft, but the rank that runs the task keeps it as class
 * `kept`, each flow it writes read-written (the body updates what the data
 * holds); every other rank, and the comparison of the ranks' sequences,
 * sees the task as inserted. For a task whose effect depends on what only
 * the rank that runs it has (a host write of a NEW data on its owner). */
int weft_insert_by_weft_kept_as(weft_taskpool_t *tp, const weft_task_class_t *cls,
                                const weft_arg_t *args, int nargs, const weft_task_class_t *kept);
/* A task structure for the walked task w, its data retained. NULL: no memory. */
weft_task_t *weft_insert_keep(weft_taskpool_t *tp, const weft_task_t *w);
/* Whether cls gives a body for some device type (a batch body alone
 * cannot run a task that does not batch): a class without one is refused
 * by insertion and by a graph alike. */
int weft_insert_class_has_body(const weft_task_class_t *cls);
/* The taskpool that inserted a task naming d and was not waited for
 * since, NULL when none: the same answer on every rank, whichever rank
 * runs those tasks (a data is used by one taskpool at a time). */
const weft_taskpool_t *weft_insert_open_pool(const weft_data_t *d);
/* A taskpool that uses d and was not waited for since (its graph, a task
 * of it on this rank, or one inserted on any rank: a reduction's partials
 * still to combine included), NULL when there is none; _name: its name.
 * Main thread. */
const weft_taskpool_t *weft_insert_busy_pool(const weft_data_t *d);
const char *weft_insert_busy_pool_name(const weft_data_t *d);

#endif
