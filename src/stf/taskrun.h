/* What every task's run shares, wherever it runs (a worker, a device
 * manager, the comm engine): calling its body and ending it. */
#ifndef WEFT_STF_TASKRUN_H
#define WEFT_STF_TASKRUN_H

#include "context/context.h"
#include "sched/task.h"

/* Calls t->body_fn (or returns the failure fault_inject asks for), keeps
 * its return value in t->body_rc; WEFT_SUCCESS or WEFT_ERR_TASK. Called
 * between weft_taskrun_enter and weft_taskrun_leave. */
int weft_taskrun_body(weft_task_t *t);

/* A task's run begins (1) or, the context diverged, may not (0, nothing
 * to undo: the caller ends the task cancelled); a 1 is paired with
 * weft_taskrun_leave once the body returned. Once per task (per batch
 * call): bodies_in counts the bodies inside their call. */
int weft_taskrun_enter(weft_context_t *ctx);
void weft_taskrun_leave(weft_context_t *ctx);

/* After a divergence (weft_context_diverge halted the bodies): returns
 * once no body of ctx is inside its call, so that the program's memory is
 * no longer written by its own code when the call that says so returns;
 * after halt_wait_s (a parameter) at most, saying how many still run (a
 * warning after 1 s), and at once in every later call once that bound was
 * reached. Main thread (never from inside a body). */
void weft_taskrun_halted_wait(weft_context_t *ctx);

/* weft_context_diverge, then weft_taskrun_halted_wait: for a call of the
 * main thread that finds the ranks apart and returns saying so. */
void weft_taskrun_diverge(weft_context_t *ctx, int status);

/* The line that restates t's failure after its body call failed (device
 * -1: the host): none when no body ran, where the injected failure's own
 * line said it (a second line said "its body returned" of a body that did
 * not run). */
void weft_taskrun_log_body_failed(const weft_task_t *t, int device);

/* rc as t ends with it: a failure when an accessor refused a call of the
 * body, the body called weft_task_error, or its class's flops estimate is
 * not a number >= 0, though the body returned 0. Asked
 * before the task's writes are published: a failed task publishes none
 * (a NEW data's first writer that failed this way left its bytes as the
 * data's contents, and a later reader was accepted on them). */
int weft_taskrun_outcome(weft_task_t *t, int rc);

/* Ends t with status rc: records a failure, counts it, hands the
 * successors it releases to ctx->ready, drops the task. */
void weft_taskrun_finish(weft_context_t *ctx, weft_task_t *t, int rc);
/* t's class's flops estimate, 0 without one (or a rounding just below 0),
 * asked of the class once a task.
 * An estimate that is not finite or below -0.5 is the class's error: said, taken as none, and the
 * task fails as for a misused accessor (it ran at the wrong share of devices and gave a GFLOPS of
 * NaN or -inf without a word). */
double weft_taskrun_flops(weft_task_t *t);

/* weft_taskrun_finish as the comm engine's done callback (arg: the context). */
void weft_taskrun_action_done(void *arg, weft_task_t *t, int status);

#endif
