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
    int out;            /* takes not put back yet (under lock): a scan in progress */
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
 * number taken. Each take is followed by one put_back, however many it
 * took: until then the list counts a scan in progress. Any thread. */
int weft_upcoming_take(weft_upcoming_t *u, weft_task_t **out, int max);
/* Lists again tasks taken out (their references given back); ends the
 * take's scan. */
void weft_upcoming_put_back(weft_upcoming_t *u, weft_task_t *const *tasks, int n);
/* 1 when t no longer needs its inputs staged ahead: it finished, or a
 * device started it. Any thread; not with a data lock held. */
int weft_upcoming_gone(weft_task_t *t);

/* Drops the finished and started tasks wherever they are in the heap
 * (the end of a taskpool: their data may be released then), after a scan
 * in progress put its tasks back: a scan holds tasks out of the heap,
 * where the prune cannot see them, and may start copies for them
 * (devmgr/devahead.c). Any thread but the one that takes. */
void weft_upcoming_prune(weft_upcoming_t *u);

#endif
