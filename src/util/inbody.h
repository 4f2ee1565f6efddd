/* The task body the calling thread runs, if any, and the thread's number.
 * A body may only call the weft_task_* accessors (weft.h): a wait inside a
 * body deadlocks (the body holds the worker or device thread the wait
 * needs), an insertion, a creation or a release races with the main
 * thread's. So does any such call from a thread of the application other
 * than the one that made the context: the context's sequences, its lists
 * and its taskpools are that thread's, without locks. The code that calls
 * a body marks the thread for its duration; the public calls that belong
 * to the main thread ask weft_inbody_refuse first, then the context's
 * thread check (context/context.h). */
#ifndef WEFT_UTIL_INBODY_H
#define WEFT_UTIL_INBODY_H

#include <stdatomic.h>

typedef struct weft_inbody {
    const char *cls;        /* the task's class name; NULL: no body runs */
    unsigned long long seq; /* its sequence number on this rank */
    const int *idx;         /* a graph's task: its indices (util/tname.h) */
    int nidx;
    atomic_int *misuse; /* set to 1 on a refused call: the task fails */
    /* A user function weft calls back that is not a body (an init, stage
     * or distribution function), held to the same rule: cls then names
     * it ("the init function of data"), seq its data key when keyed, and
     * fails says what the refusal fails ("the insertion"). */
    const char *fails;
    int keyed;
    const char *of; /* a called-back function: the name that follows fn, NULL: none */
} weft_inbody_t;

/* Marks this thread as running the body `now` names; *saved gets the
 * previous mark (the main thread runs bodies inside an insertion when the
 * window is full: marks nest). */
void weft_inbody_enter(weft_inbody_t *saved, const weft_inbody_t *now);
void weft_inbody_leave(const weft_inbody_t *saved);
/* The same for a called-back function: fn names it ("the init function
 * of data"), keyed says whether key follows fn in the refusal's words,
 * fails what the refusal fails ("the copy"); *misuse set on a refusal.
 * Ended by weft_inbody_leave. */
void weft_inbody_enter_callback(weft_inbody_t *saved, atomic_int *misuse, const char *fn, int keyed,
                                unsigned long long key, const char *fails);
/* The same with a name after fn ("the flops function of task class" and
 * the class's name), formatted only for a refusal. */
void weft_inbody_enter_named_callback(weft_inbody_t *saved, atomic_int *misuse, const char *fn,
                                      const char *of, const char *fails);

/* The calling thread made a context (the end of a successful weft_init)
 * or ended one (weft_fini, which only that thread may call); how many it
 * made and did not end. */
void weft_inbody_main_begin(void);
void weft_inbody_main_end(void);
int weft_inbody_contexts_made(void);

/* The blocking calls (weft_taskpool_wait, weft_fini): a signal handler
 * that calls one while the thread is inside one reenters weft mid-call (a
 * weft_fini from a SIGALRM handler during a wait hung, in MPI collectives
 * inside collectives). weft_inbody_call_refuse: 1 after an error line
 * when call is refused, from a body or a called-back function
 * (weft_inbody_refuse) or inside a blocking call other than inside_ok
 * (NULL: none; weft_fini's own waits are inside it). call_enter marks the
 * thread inside call unless it is inside one already, and returns the
 * mark before, for call_leave. */
int weft_inbody_call_refuse(const char *call, const char *inside_ok);
const char *weft_inbody_call_enter(const char *call);
void weft_inbody_call_leave(const char *was);

/* The calling thread's number: 1, 2, ... in the order threads first ask,
 * never reused in the process (a thread that ends leaves its number
 * unused), so a context can name the thread that made it. */
unsigned long weft_inbody_thread(void);

/* 0 outside a body; inside one, logs "CALL called from the body of task
 * NAME: ..." (util/tname.h; inside a called-back function, "CALL called
 * from the init function of data KEY: ..."), marks the task (or the
 * function's caller) failed and returns 1. Whether the thread
 * is the one that made the context is context.h's check. */
int weft_inbody_refuse(const char *call);
/* Whether the calling thread runs a task body now (not a called-back
 * function, not outside any). */
int weft_inbody_in_task(void);
/* Inside a body, marks its task failed (an accessor called with a NULL
 * task, which cannot mark the task it names) and returns 1; 0 outside. */
int weft_inbody_fail_task(void);

#endif
