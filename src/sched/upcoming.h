/* The tasks a device will run, known from their insertion on (home device
 * chosen, predecessors maybe unfinished) until the device starts them: what
 * the device manager stages in ahead of time (devmgr/devahead.c). A heap in
 * run order (sched/heap.h: priority, then insertion) under its own mutex,
 * holding a reference on each task; started and finished tasks leave it
 * when they come to its top, or at the end of a taskpool (prune). */
#ifndef WEFT_SCHED_UPCOMING_H
#define WEFT_SCHED_UPCOMING_H

#include <pthread.h>
#include <stdatomic.h>

#include "sched/heap.h"

typedef struct weft_upcoming {
    pthread_mutex_t lock;
    weft_heap_t heap;
    atomic_long pushed; /* tasks ever listed: the manager looks again when it moves */
} weft_upcoming_t;

/* WEFT_ERR_NOMEM when the heap cannot be allocated. */
int weft_upcoming_init(weft_upcoming_t *u) __attribute__((warn_unused_result));
/* Drops every listed task's reference and frees the heap. */
void weft_upcoming_fini(weft_upcoming_t *u);

/* Lists t (a reference taken). Main thread, at insertion; a failure to grow
 * only loses the prefetch of t (returns WEFT_ERR_NOMEM). */
int weft_upcoming_push(weft_upcoming_t *u, weft_task_t *t) __attribute__((warn_unused_result));

/* Takes out up to max tasks in run order into out[] (references with
 * them), first dropping those finished or started on a device: the
 * number taken. Any thread. */
int weft_upcoming_take(weft_upcoming_t *u, weft_task_t **out, int max);
/* Lists again tasks taken out (their references given back). */
void weft_upcoming_put_back(weft_upcoming_t *u, weft_task_t *const *tasks, int n);

/* Drops the finished and started tasks wherever they are in the heap
 * (the end of a taskpool: their data may be released then). Any thread. */
void weft_upcoming_prune(weft_upcoming_t *u);

#endif
