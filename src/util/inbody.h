/* The task body the calling thread runs, if any. A body may only call the
 * weft_task_* accessors (weft.h): a wait inside a body deadlocks (the body
 * holds the worker or device thread the wait needs), an insertion, a
 * creation or a release races with the main thread's. The code that calls
 * a body marks the thread for its duration; the public calls that belong
 * to the main thread ask weft_inbody_refuse first. */
#ifndef WEFT_UTIL_INBODY_H
#define WEFT_UTIL_INBODY_H

#include <stdatomic.h>

typedef struct weft_inbody {
    const char *cls;        /* the task's class name; NULL: no body runs */
    unsigned long long seq; /* its sequence number on this rank */
    atomic_int *misuse;     /* set to 1 on a refused call: the task fails */
} weft_inbody_t;

/* Marks this thread as running the body of task cls #seq; *saved gets
 * the previous mark (the main thread runs bodies inside an insertion when
 * the window is full: marks nest). */
void weft_inbody_enter(weft_inbody_t *saved, const char *cls, unsigned long long seq,
                       atomic_int *misuse);
void weft_inbody_leave(const weft_inbody_t *saved);

/* 0 outside a body; inside one, logs "CALL called from the body of task
 * CLS #SEQ: ...", marks the task failed and returns 1. */
int weft_inbody_refuse(const char *call);

#endif
