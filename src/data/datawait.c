/* Waiting for another thread to change a data's copies (docs/COHERENCY.md,
 * locking rule 6): a thread that needs a copy another thread is filling or
 * using queues a waiter record on its own stack in the data, under the
 * data's spinlock, and sleeps on the record's condition; the functions of
 * data.c that end a transfer, a write or a read move the queued records
 * aside (under the lock), and weft_data_unlock signals them once the
 * spinlock is dropped, since a mutex may not be taken under it. */
#include <errno.h>
#include <time.h>

#include "data/data.h"

/* A safety net, not a poll: a change made by a path that does not wake
 * (none is known) still ends the wait this late. */
#define WAIT_NET_NS 50000000L

void weft_data_wake_mark_locked(weft_data_t *d)
{
    if (!d->waiters) return;
    weft_data_waiter_t **tail = &d->wake;
    while (*tail) tail = &(*tail)->next;
    *tail = d->waiters;
    d->waiters = NULL;
}

void weft_data_wake(weft_data_waiter_t *w)
{
    while (w) {
        /* The record lives on its waiter's stack: read the link first. */
        weft_data_waiter_t *next = w->next;
        pthread_mutex_lock(&w->mu);
        w->woken = 1;
        pthread_cond_signal(&w->cond);
        pthread_mutex_unlock(&w->mu);
        w = next;
    }
}

/* Under d's lock: takes w out of the list at *head; 1 when it was there. */
static int unqueue_locked(weft_data_waiter_t **head, weft_data_waiter_t *w)
{
    for (weft_data_waiter_t **p = head; *p; p = &(*p)->next)
        if (*p == w) {
            *p = w->next;
            return 1;
        }
    return 0;
}

/* Sleeps until w is woken, or the safety net's time passed: 1 when woken. */
static int sleep_on(weft_data_waiter_t *w)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += WAIT_NET_NS;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&w->mu);
    int rc = 0;
    while (!w->woken && rc != ETIMEDOUT) rc = pthread_cond_timedwait(&w->cond, &w->mu, &ts);
    int woken = w->woken;
    pthread_mutex_unlock(&w->mu);
    return woken;
}

int weft_data_wait_change(weft_data_t *d)
{
    weft_data_waiter_t w = {.woken = 0, .next = d->waiters};
    pthread_mutex_init(&w.mu, NULL);
    pthread_cond_init(&w.cond, NULL);
    d->waiters = &w;
    weft_data_unlock(d);
    int woken = sleep_on(&w);
    weft_data_lock(d);
    if (!woken && !unqueue_locked(&d->waiters, &w) && !unqueue_locked(&d->wake, &w)) {
        /* An unlocker holds the record to wake it: wait for that. */
        woken = 1;
        weft_data_unlock(d);
        pthread_mutex_lock(&w.mu);
        while (!w.woken) pthread_cond_wait(&w.cond, &w.mu);
        pthread_mutex_unlock(&w.mu);
        weft_data_lock(d);
    }
    pthread_cond_destroy(&w.cond);
    pthread_mutex_destroy(&w.mu);
    return woken;
}
