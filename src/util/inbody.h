/* The task body the calling thread runs, if any, and whether the thread
 * made a live context. A body may only call the weft_task_* accessors
 * (weft.h): a wait inside a body deadlocks (the body holds the worker or
 * device thread the wait needs), an insertion, a creation or a release
 * races with the main thread's. So does any such call from a thread of the
 * application that did not call weft_init: the context's sequences, its
 * lists and its taskpools are the main thread's, without locks. The code
 * that calls a body marks the thread for its duration, weft_init and
 * weft_fini mark the main thread; the public calls that belong to the
 * main thread ask weft_inbody_refuse first. */
#ifndef WEFT_UTIL_INBODY_H
#define WEFT_UTIL_INBODY_H

#include <stdatomic.h>

typedef struct weft_inbody {
    const char *cls;        /* the task's class name; NULL: no body runs */
    unsigned long long seq; /* its sequence number on this rank */
    const int *idx;         /* a graph's task: its indices (util/tname.h) */
    int nidx;
    atomic_int *misuse; /* set to 1 on a refused call: the task fails */
} weft_inbody_t;

/* Marks this thread as running the body `now` names; *saved gets the
 * previous mark (the main thread runs bodies inside an insertion when the
 * window is full: marks nest). */
void weft_inbody_enter(weft_inbody_t *saved, const weft_inbody_t *now);
void weft_inbody_leave(const weft_inbody_t *saved);

/* The calling thread made a context (the end of a successful weft_init)
 * or ended one (weft_fini, which only that thread may call). */
void weft_inbody_main_begin(void);
void weft_inbody_main_end(void);

/* 0 on a thread that made a live context, outside a body; inside a body,
 * logs "CALL called from the body of task NAME: ..." (util/tname.h), marks the task
 * failed and returns 1; on another thread while a context lives, logs
 * "CALL called from a thread that did not call weft_init: ..." and returns
 * 1. With no live context it returns 0: the handle check then names an
 * ended context's handle as such. */
int weft_inbody_refuse(const char *call);

#endif
