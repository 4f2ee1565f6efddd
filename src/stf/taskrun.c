/* The shared part of a task's run: the body call with fault injection,
 * and the end that every place running tasks calls. */
#include "stf/taskrun.h"

#include <math.h>
#include <time.h>

#include "stf/failure.h"
#include "stf/flowcheck.h"
#include "stf/taskpool.h"
#include "util/clock.h"
#include "util/fault.h"
#include "util/inbody.h"
#include "util/log.h"

int weft_taskrun_enter(weft_context_t *ctx)
{
    /* Counted before the flag is read, and the flag set before the count
     * is read (weft_taskrun_halted_wait): one of the two sees the other. */
    atomic_fetch_add(&ctx->bodies_in, 1);
    if (!atomic_load(&ctx->bodies_halted)) return 1;
    atomic_fetch_sub(&ctx->bodies_in, 1);
    return 0;
}

void weft_taskrun_leave(weft_context_t *ctx) { atomic_fetch_sub(&ctx->bodies_in, 1); }

void weft_taskrun_halted_wait(weft_context_t *ctx)
{
    atomic_store(&ctx->bodies_halted, 1);
    /* Bounded: a body may wait for what only comes after this call returns
     * (a lock the program holds, a message of a body another rank will not
     * run), and the call used to return at once. */
    const struct timespec nap = {.tv_sec = 0, .tv_nsec = 200000};
    double t0 = weft_clock_s();
    long bound = (long)weft_params_int(ctx->params, "halt_wait_s");
    int said = 0;
    long n;
    while ((n = atomic_load(&ctx->bodies_in)) > 0 && !ctx->halt_waited_out) {
        double waited = weft_clock_s() - t0;
        if (waited >= (double)bound) {
            ctx->halt_waited_out = 1; /* said once: the next call returns at once */
            weft_error(
                "%ld task bod%s still running after %.0f s since the ranks were found apart: "
                "the call returns; they may still write the program's memory until they "
                "return",
                n, n == 1 ? "y is" : "ies are", waited);
            return;
        }
        if (waited >= 1.0 && !said) {
            weft_warn("the ranks were found apart: waiting for %ld task bod%s still running to "
                      "return (at most %ld s, halt_wait_s)",
                      n, n == 1 ? "y" : "ies", bound);
            said = 1;
        }
        nanosleep(&nap, NULL);
    }
}

void weft_taskrun_diverge(weft_context_t *ctx, int status)
{
    weft_context_diverge(ctx, status);
    weft_taskrun_halted_wait(ctx);
}

int weft_taskrun_body(weft_task_t *t)
{
    int rc;
    /* On whichever thread runs it (a worker, an emu device's thread, a GPU's
     * manager at launch): what the body makes weft log is its cause. */
    weft_log_cause_t *outer = weft_log_cause_enter(&t->cause);
    if (weft_fault_hit(t->tp->ctx->fault, WEFT_FAULT_TASK, t->cls->name)) {
        weft_error("task %s: failure injected (fault_inject): returns %d without running",
                   weft_task_name(t).text, WEFT_FAULT_RC);
        rc = WEFT_FAULT_RC;
    } else if (weft_fault_hit(t->tp->ctx->fault, WEFT_FAULT_TASK_SKIP, t->cls->name)) {
        /* A silent wrong result, for the checks of applications. */
        weft_warn("task %s: skipped (fault_inject task_skip): reports success without "
                  "running",
                  weft_task_name(t).text);
        t->body_ran = 1; /* counted as run: a silent wrong result, as it was meant */
        rc = 0;
    } else {
        weft_inbody_t saved;
        weft_inbody_t now = weft_task_inbody(t);
        weft_flowcheck_t reads;
        weft_flowcheck_before(t, &reads);
        t->body_ran = 1;
        weft_inbody_enter(&saved, &now);
        atomic_store(&t->in_body, 1);
        rc = t->body_fn(t);
        atomic_store(&t->in_body, 0);
        weft_inbody_leave(&saved);
        weft_flowcheck_after(t, &reads, 0);
    }
    weft_log_cause_leave(outer);
    t->body_rc = rc;
    /* A body's own code may collide with a weft status (-11 is both
     * WEFT_ERR_CANCELLED and -EAGAIN): every path sees WEFT_ERR_TASK, and
     * the failure line names body_rc. */
    return rc == 0 ? WEFT_SUCCESS : WEFT_ERR_TASK;
}

void weft_taskrun_log_body_failed(const weft_task_t *t, int device)
{
    if (t->body_ran)
        weft_log_outcome(device, "task %s failed: its body returned %d", weft_task_name(t).text,
                         t->body_rc);
}

static double flops_asked(weft_task_t *t)
{
    if (!t->cls->flops) return 0.0;
    /* Called once a task, where it is placed on a device (at insertion
     * or release, on the main, a worker or the comm thread) or where it
     * ends (a worker, or the main thread inside an insertion or a wait: a
     * full window runs tasks there). A wait, weft_fini or an insertion
     * from it reentered those and hung, or crashed in the insertion the
     * ended context returned to: refused as from a body, and the task
     * fails. */
    weft_inbody_t saved;
    weft_inbody_enter_named_callback(&saved, &t->misuse, "the flops function of task class",
                                     t->cls->name, "its task");
    double f = t->cls->flops(t);
    weft_inbody_leave(&saved);
    if (isfinite(f) && f >= 0.0) return f;
    /* A closed form's rounding on a 1 x 1 tile (2/3 - 1/2 - 1/6) is no
     * error: under half a flop counts as none. */
    if (isfinite(f) && f > -0.5) return 0.0;
    if (!(atomic_fetch_or(&t->misuse, 1) & 1)) {
        /* In the task's cause span: every rank's failure line says why. */
        weft_log_cause_t *outer = weft_log_cause_enter(&t->cause);
        weft_error("task %s: its class's flops function returned %g: an estimate is a finite "
                   "number >= 0 (0: none); the task fails",
                   weft_task_name(t).text, f);
        weft_log_cause_leave(outer);
    }
    return 0.0;
}

double weft_taskrun_flops(weft_task_t *t)
{
    if (t->flops < 0.0) t->flops = flops_asked(t);
    return t->flops;
}

static void add_flops(weft_taskpool_t *tp, double f)
{
    double old = atomic_load_explicit(&tp->flops_done, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(&tp->flops_done, &old, old + f,
                                                  memory_order_relaxed, memory_order_relaxed)) {
    }
}

int weft_taskrun_outcome(weft_task_t *t, int rc)
{
    /* A bad estimate fails the task too: asked before the writes are
     * published (a body task that ran). */
    if (t->kind == WEFT_TASK_BODY && t->body_ran && rc != WEFT_ERR_CANCELLED)
        (void)weft_taskrun_flops(t);
    /* The accessor logged the misuse, or the body its own words
     * (weft_task_error); a body returning 0 must not hide either. */
    int said = atomic_load(&t->misuse);
    if (rc == WEFT_SUCCESS && said) rc = said & 1 ? WEFT_ERR_INVALID : WEFT_ERR_TASK;
    return rc;
}

void weft_taskrun_finish(weft_context_t *ctx, weft_task_t *t, int rc)
{
    int ran = t->kind == WEFT_TASK_BODY && t->body_ran && rc != WEFT_ERR_CANCELLED;
    double flops = ran ? weft_taskrun_flops(t) : 0.0;
    rc = weft_taskrun_outcome(t, rc);
    weft_failure_task_end(ctx, t, rc);
    for (int i = 0; i < t->nflows && ctx->ndevices > 0; i++)
        if (weft_task_first_flow_of(t, i) == i) weft_data_use_done(t->flow[i].data, t->seq);
    weft_taskpool_t *tp = t->tp;
    if (t->kind == WEFT_TASK_BODY) atomic_fetch_add_explicit(&tp->nended, 1, memory_order_relaxed);
    if (rc == WEFT_ERR_CANCELLED) {
        /* It did not run: neither a task run nor an action done. */
    } else if (t->kind == WEFT_TASK_BODY && !t->body_ran) {
        /* Failed before its body (an input that did not arrive) or in its
         * place (an injected failure): nothing ran, as the device's count
         * says. */
    } else if (t->kind == WEFT_TASK_BODY) {
        atomic_fetch_add_explicit(&tp->nrun, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&ctx->tasks_run, 1, memory_order_relaxed);
        if (flops > 0.0) add_flops(tp, flops);
    } else {
        atomic_fetch_add_explicit(&ctx->actions_done, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(t->kind == WEFT_TASK_SEND ? &ctx->sends_done : &ctx->recvs_done,
                                  1, memory_order_relaxed);
    }
    weft_task_complete(t, ctx->ready, ctx);
    weft_task_unref(t);
    weft_taskpool_task_done(tp);
}

void weft_taskrun_action_done(void *arg, weft_task_t *t, int status)
{
    weft_taskrun_finish(arg, t, status);
}
