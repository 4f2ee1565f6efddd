/* Running a ready task: choose its copies, call its body, publish what it
 * wrote, release its successors. */
#ifndef WEFT_EXEC_EXEC_H
#define WEFT_EXEC_EXEC_H

#include "sched/task.h"

/* The scheduler's exec callback (arg is the context). */
void weft_exec_task(void *arg, weft_task_t *t, int worker);
/* Sends a task whose predecessors are done where it runs (any thread). */
void weft_exec_ready(void *arg, weft_task_t *t);

/* Ends a task that ran (or failed): successors released, references
 * dropped, taskpool told. Any thread. */
struct weft_context;
void weft_exec_finish(struct weft_context *ctx, weft_task_t *t, int rc);
/* Runs t->body_fn, or fails it when fault_inject says so; the result is
 * kept in t->body_rc for the failure report. Host and device launches. */
int weft_exec_call_body(weft_task_t *t);
/* The comm engine's completion callback for SEND/RECV tasks. */
void weft_exec_action_done(void *arg, weft_task_t *t, int status);

#endif
