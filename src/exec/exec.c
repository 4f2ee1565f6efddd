/* Where a ready task goes (comm engine, a device manager, the workers) and
 * its run on a worker: host copies of its flows, body, written flows
 * published, end. */
#include "exec/exec.h"

#include "comm/comm.h"
#include "sched/sched.h"
#include "context/context.h"
#include "devmgr/devmgr.h"
#include "stf/failure.h"
#include "stf/taskpool.h"
#include "stf/taskrun.h"
#include "util/fault.h"
#include "util/log.h"

void weft_exec_ready(void *arg, weft_task_t *t)
{
    weft_context_t *ctx = arg;
    /* Its device manager has it already, waiting for this call. */
    if (t->gate) {
        weft_devgate_pass(ctx, t);
        return;
    }
    /* A body that will not run goes to a worker, which ends it at once
     * (no device memory, no transfer for it); a send of a version never
     * produced goes on to the engine, which tells the receiver. */
    if (t->kind != WEFT_TASK_RECV && weft_failure_check_inputs(t) && t->kind == WEFT_TASK_BODY) {
        weft_sched_push(ctx->sched, t, weft_sched_self());
        return;
    }
    /* Network sends and receives go to the comm engine, never to workers. */
    if (t->kind != WEFT_TASK_BODY) {
        /* Network sends and receives belong to the comm engine. */
        weft_comm_submit(ctx->comm_engine, t);
    } else if (!weft_devexec_submit(ctx, t))
        weft_sched_push(ctx->sched, t, weft_sched_self());
}

/* The host copy a CPU body uses for flow i: the newest version for a read
 * (pushed out of the device that holds it), created for a written tile
 * that has no host memory yet (a NEW tile's first writer). */
static int host_flow_copy(weft_task_t *t, int i)
{
    weft_flow_t *f = &t->flow[i];
    int rc = weft_devcopy_host_flow(f->data, f->mode, &f->copy);
    if (rc != WEFT_SUCCESS)
        weft_error("task %s: no host copy at the newest version of data %llu: %s",
                   weft_task_name(t).text, (unsigned long long)f->data->key, weft_strerror(rc));
    return rc;
}

static void publish_flows(weft_task_t *t, int ran)
{
    for (int i = 0; i < t->nflows; i++) {
        weft_flow_t *f = &t->flow[i];
        if (!f->copy) continue;
        /* Each flow held its own reader; a data written twice is published once. */
        int first_write = (f->mode & WEFT_W) && weft_task_first_flow_of(t, i) == i;
        weft_data_publish(f->data, f->copy, weft_task_publish_what(t, first_write, ran),
                          f->out_version, 0);
    }
}

static int run_body_on_host(weft_context_t *ctx, weft_task_t *t)
{
    /* Counted from before its copies: once the ranks diverged neither
     * they nor the body start (a device's newest version pulled into the
     * program's memory after the wait had returned). */
    if (!weft_taskrun_enter(ctx)) {
        t->cancelled = 1; /* ends as a task whose inputs were lost does */
        return WEFT_ERR_CANCELLED;
    }
    /* What this worker logs while it stages and runs t is t's cause. */
    weft_log_cause_t *outer = weft_log_cause_enter(&t->cause);
    int rc = WEFT_SUCCESS;
    for (int i = 0; i < t->nflows && rc == WEFT_SUCCESS; i++) rc = host_flow_copy(t, i);
    t->body_fn = t->cls->body[WEFT_DEV_CPU];
    if (rc == WEFT_SUCCESS && !t->body_fn) {
        /* A user's class, not a broken invariant: only a device body, and
         * no device of that type runs the task here. */
        weft_error("task %s has no CPU body and runs on the host of rank %d: give its "
                   "class a CPU body, or open a device of a type it has a body for",
                   weft_task_name(t).text, t->tp->ctx->rank);
        rc = WEFT_ERR_UNSUPPORTED;
    }
    if (rc == WEFT_SUCCESS && weft_taskrun_body(t) != 0) {
        weft_taskrun_log_body_failed(t, -1);
        rc = WEFT_ERR_TASK;
    }
    publish_flows(t, weft_taskrun_outcome(t, rc) == WEFT_SUCCESS);
    weft_log_cause_leave(outer);
    weft_taskrun_leave(ctx);
    return rc;
}

void weft_exec_task(void *arg, weft_task_t *t, int worker)
{
    weft_context_t *ctx = arg;
    if (t->cancelled) {
        weft_devexec_host_done(ctx, t);
        weft_taskrun_finish(ctx, t, WEFT_ERR_CANCELLED);
        return;
    }
    uint64_t t0 = weft_trace_stamp(ctx->trace);
    if (ctx->trace)
        weft_trace_thread_track = worker >= 0 ? ctx->trace_worker0 + worker : ctx->trace_main;
    atomic_fetch_add_explicit(&ctx->tasks_running, 1, memory_order_relaxed);
    int rc = run_body_on_host(ctx, t);
    atomic_fetch_sub_explicit(&ctx->tasks_running, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&ctx->host_bodies_ended, 1, memory_order_relaxed);
    weft_trace_slice(ctx->trace, weft_trace_thread_track, t0, weft_trace_now(), t->cls->name,
                     "task", "\"key\":%llu,\"device\":0,\"seq\":%llu",
                     t->nflows
                         ? (unsigned long long)t->flow[t->affinity >= 0 ? t->affinity : 0].data->key
                         : 0ULL,
                     (unsigned long long)t->seq);
    weft_devexec_host_done(ctx, t);
    weft_taskrun_finish(ctx, t, rc);
}
