/* The stall watchdog and progress line of a taskpool wait: the wait
 * (stf/taskpool.c) calls the check each time it wakes. */
#ifndef WEFT_STF_WATCHDOG_H
#define WEFT_STF_WATCHDOG_H

#include <stdint.h>

#include "stf/taskpool.h"

typedef struct weft_watchdog {
    weft_taskpool_t *tp;
    int stall_s;      /* watchdog_s: 0 off */
    int show;         /* print the progress line (rank 0) */
    double t0;        /* when the wait began */
    double last_move; /* when progress was last seen */
    int64_t mark;     /* the progress counters at last_move */
    int reported;     /* this stall was reported */
} weft_watchdog_t;

/* Whether this rank prints the progress line (rank 0, parameter progress). */
int weft_watchdog_shows(const weft_context_t *ctx);
/* Prints the progress line when due (tp->progress_due), from the
 * inserting thread: insertion, and the tasks it runs when far ahead of the
 * workers, can take most of a run (main thread). */
void weft_watchdog_progress(weft_taskpool_t *tp);
/* Reads the parameters for a wait on tp (main thread). */
void weft_watchdog_start(weft_watchdog_t *w, weft_taskpool_t *tp);
/* 1 when the wait must wake up now and then to call the check. */
int weft_watchdog_on(const weft_watchdog_t *w);
/* Notes progress, prints the progress line when due, reports a stall
 * (and ends the run when watchdog_abort asks). Called with tp->lock held. */
void weft_watchdog_check(weft_watchdog_t *w);
/* The level of a stall's lines: a warning, since the run may go on (a
 * rank that arrives late), an error when watchdog_abort ends the run. */
int weft_watchdog_level(const weft_context_t *ctx);

/* Says, once a rank, that watchdog_abort was set with no watchdog to
 * fire it (watchdog_s 0): the run would not end on a stall, silently. */
void weft_watchdog_say_unused(const weft_context_t *ctx);
/* Ends the run for a stall (watchdog_abort): MPI_Abort, exit status 3. */
void weft_watchdog_abort(weft_context_t *ctx) __attribute__((noreturn));

#endif
