/* Workers and ready queues: one priority heap per worker, idle workers
 * steal the best task of another worker, and sleep when nothing is ready.
 * No global lock on the hot path: a push takes one worker's spinlock. */
#ifndef WEFT_SCHED_SCHED_H
#define WEFT_SCHED_SCHED_H

#include <hwloc.h>

#include "sched/task.h"

typedef struct weft_sched weft_sched_t;

/* Runs one ready task on the calling worker thread. */
typedef void (*weft_sched_exec_fn)(void *arg, weft_task_t *t, int worker);

typedef struct weft_sched_config {
    int nworkers;
    int steal;
    hwloc_topology_t topo;       /* NULL: no binding */
    hwloc_const_cpuset_t cpuset; /* PUs of this rank; worker i on the i-th core */
    weft_sched_exec_fn exec;
    void *exec_arg;
} weft_sched_config_t;

int weft_sched_create(const weft_sched_config_t *cfg, weft_sched_t **out)
    __attribute__((warn_unused_result));
/* Stops and joins the workers (once); s stays valid: a task pushed later
 * (another thread completing its predecessor) is queued and never run.
 * For teardown after the ranks disagreed, while the comm thread still
 * completes transfers. */
void weft_sched_stop(weft_sched_t *s);
/* Stops the workers if not stopped yet and frees s; queues must be empty
 * unless s was stopped. */
void weft_sched_destroy(weft_sched_t *s);

/* Makes t runnable. worker_hint: the worker whose queue takes it (the
 * releasing worker keeps its successors: they read what it just wrote);
 * -1 spreads pushes from non-worker threads round robin. */
void weft_sched_push(weft_sched_t *s, weft_task_t *t, int worker_hint);

/* Runs one ready task on the calling (non-worker) thread if there is one:
 * the inserting thread helps when too many tasks are pending. Returns 1 if
 * it ran a task. */
int weft_sched_help(weft_sched_t *s);

/* Index of the calling worker, -1 on any other thread. */
int weft_sched_self(void);

#endif
