/* The upcoming tasks of a device (upcoming.h). */
#include "sched/upcoming.h"

#include <sched.h>
#include <stdlib.h>

/* A device started it: its own stage-in takes over. */
int weft_upcoming_gone(weft_task_t *t)
{
    weft_spin_lock(&t->lock);
    int done = t->done;
    weft_spin_unlock(&t->lock);
    return done || atomic_load_explicit(&t->dev_started, memory_order_relaxed);
}

int weft_upcoming_init(weft_upcoming_t *u)
{
    if (weft_heap_init(&u->heap, 64) != 0) return WEFT_ERR_NOMEM;
    pthread_mutex_init(&u->lock, NULL);
    atomic_init(&u->pushed, 0);
    u->out = 0;
    return WEFT_SUCCESS;
}

void weft_upcoming_fini(weft_upcoming_t *u)
{
    weft_task_t *t;
    while ((t = weft_heap_pop(&u->heap)) != NULL) weft_task_unref(t);
    weft_heap_fini(&u->heap);
    pthread_mutex_destroy(&u->lock);
}

int weft_upcoming_push(weft_upcoming_t *u, weft_task_t *t)
{
    weft_task_retain(t);
    pthread_mutex_lock(&u->lock);
    int rc = weft_heap_push(&u->heap, t);
    pthread_mutex_unlock(&u->lock);
    if (rc != 0) {
        weft_task_unref(t);
        return WEFT_ERR_NOMEM;
    }
    atomic_fetch_add_explicit(&u->pushed, 1, memory_order_relaxed);
    return WEFT_SUCCESS;
}

int weft_upcoming_take(weft_upcoming_t *u, weft_task_t **out, int max)
{
    int n = 0;
    weft_task_t *drop[64];
    int ndrop = 0;
    pthread_mutex_lock(&u->lock);
    while (n < max && ndrop < 64) {
        weft_task_t *t = weft_heap_pop(&u->heap);
        if (!t) break;
        if (weft_upcoming_gone(t))
            drop[ndrop++] = t;
        else
            out[n++] = t;
    }
    u->out++;
    pthread_mutex_unlock(&u->lock);
    /* The last reference may free the task's data: not under the mutex. */
    for (int i = 0; i < ndrop; i++) weft_task_unref(drop[i]);
    return n;
}

void weft_upcoming_put_back(weft_upcoming_t *u, weft_task_t *const *tasks, int n)
{
    int rc = 0;
    pthread_mutex_lock(&u->lock);
    /* Taken out a moment ago: the heap has the room still. */
    for (int i = 0; i < n; i++) rc |= weft_heap_push(&u->heap, tasks[i]);
    u->out--;
    pthread_mutex_unlock(&u->lock);
    (void)rc;
}

void weft_upcoming_prune(weft_upcoming_t *u)
{
    weft_vec_t gone_tasks;
    weft_vec_init(&gone_tasks, sizeof(weft_task_t *), 0);
    pthread_mutex_lock(&u->lock);
    while (u->out > 0) {
        /* A scan takes a few tasks' copies ahead: short, unless it writes
         * a victim back first (as long as one copy). */
        pthread_mutex_unlock(&u->lock);
        sched_yield();
        pthread_mutex_lock(&u->lock);
    }
    weft_task_t **a = u->heap.v.data;
    size_t n = u->heap.v.n, keep = 0;
    for (size_t i = 0; i < n; i++) {
        if (!weft_upcoming_gone(a[i])) {
            a[keep++] = a[i];
        } else if (weft_vec_push(&gone_tasks, &a[i]) != WEFT_SUCCESS) {
            a[keep++] = a[i]; /* dropped at a later pass */
        }
    }
    u->heap.v.n = 0;
    /* Rebuilt in place: pushes of the kept prefix never outgrow it. */
    for (size_t i = 0; i < keep; i++) {
        int rc = weft_heap_push(&u->heap, a[i]);
        (void)rc;
    }
    pthread_mutex_unlock(&u->lock);
    weft_task_t **g = gone_tasks.data;
    for (size_t i = 0; i < gone_tasks.n; i++) weft_task_unref(g[i]);
    weft_vec_fini(&gone_tasks);
}
