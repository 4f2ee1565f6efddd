/* Batches of small tasks on a device: the records a manager's pass found
 * launchable and held (PHASE_READY) go out several at a time, tasks of
 * one class whose flows have the same shapes by one call of the class's
 * batch body (e.g. one cublasDgemmBatched): a 512 x 512 GEMM alone leaves
 * most of an H200 idle whatever the number of streams (about 20 TFLOP/s),
 * 16 in one call reach 45 (bench/cublas_tile_rate.c). Each task keeps its
 * own record (stage-in, publication); the batch's first record polls the
 * one event after the call and hands its result to the others. */
#include <stdlib.h>

#include "devmgr/devbatch.h"
#include "trace/trace.h"
#include "stf/flowcheck.h"
#include "stf/taskrun.h"
#include "stf/taskpool.h"
#include "util/clock.h"
#include "util/fault.h"
#include "util/inbody.h"
#include "util/log.h"

/* The batch body t would go out with on this device, or NULL: batching
 * off, none for this device type, or a tile too large (a large kernel
 * fills the device alone, and a batch would only delay its first task). */
weft_batch_fn weft_devbatch_body(const weft_devmgr_t *m, const weft_task_t *t)
{
    if (m->batch_max < 2) return NULL;
    weft_batch_fn fn = t->cls->batch[m->dev->ops->type];
    for (int i = 0; fn && i < t->nflows; i++)
        if ((int64_t)t->flow[i].data->rows * t->flow[i].data->cols > m->batch_elems) fn = NULL;
    return fn;
}

/* Whether b may share a batch with a: one class, and every flow of the
 * same shape and leading dimension (what a batched library call needs). */
static int batch_fits(const weft_task_t *a, const weft_task_t *b)
{
    if (a->cls != b->cls || a->nflows != b->nflows) return 0;
    for (int i = 0; i < a->nflows; i++) {
        const weft_flow_t *x = &a->flow[i], *y = &b->flow[i];
        if (x->data->rows != y->data->rows || x->data->cols != y->data->cols ||
            x->copy->ld != y->copy->ld)
            return 0;
    }
    return 1;
}

/* The most tasks one batch body call takes (a pass gathers no more). */
enum { BATCH_CAP = 64 };

/* Moves into run the members of the batch of first whose bodies are not
 * skipped by fault_inject task_skip, as weft_taskrun_body skips a body
 * run alone: an application's check must see the lost write whether or
 * not its task went out in a batch. Returns how many are left. */
static int batch_unskipped(weft_task_t *first, weft_task_t **run)
{
    int n = 0;
    for (int i = 0; i < first->nbatch; i++) {
        weft_task_t *t = first->batch[i];
        if (!weft_fault_hit(t->tp->ctx->fault, WEFT_FAULT_TASK_SKIP, t->cls->name)) {
            run[n++] = t;
            continue;
        }
        weft_warn("task %s: skipped in a batch of %d (fault_inject task_skip): reports "
                  "success without running",
                  weft_task_name(t).text, first->nbatch);
    }
    return n;
}

/* The batch body's call on the members not skipped (none: nothing runs). */
static int batch_call(weft_task_t *first)
{
    weft_task_t *run[BATCH_CAP];
    int n = batch_unskipped(first, run);
    if (n == 0) return 0;
    weft_inbody_t saved;
    weft_inbody_t now = weft_task_inbody(first);
    weft_flowcheck_t reads[BATCH_CAP];
    for (int i = 0; i < n; i++) weft_flowcheck_before(run[i], &reads[i]);
    weft_inbody_enter(&saved, &now);
    for (int i = 0; i < n; i++) atomic_store(&run[i]->in_body, 1);
    int rc = first->batch_fn(run, n);
    for (int i = 0; i < n; i++) atomic_store(&run[i]->in_body, 0);
    weft_inbody_leave(&saved);
    /* A refused call (marked on the first) is the whole call's, as its
     * return code is: every member fails, not only the first. */
    if (atomic_load(&first->misuse))
        for (int i = 0; i < first->nbatch; i++) atomic_store(&first->batch[i]->misuse, 1);
    /* Members whose read-only flows changed fail (check_reads). */
    for (int i = 0; i < n; i++) weft_flowcheck_after(run[i], &reads[i], n);
    return rc;
}

/* The kernel that launch runs for a batch (arg: its first task): every
 * member takes the stream's environment, then the batch body runs them
 * all. */
static int batch_trampoline(const weft_device_env_t *env, void *arg)
{
    weft_task_t *first = arg;
    if (!weft_taskrun_enter(first->tp->ctx)) {
        /* The ranks diverged: no member starts (weft_taskrun_body). */
        for (int i = 0; i < first->nbatch; i++) first->batch[i]->cancelled = 1;
        return WEFT_ERR_CANCELLED;
    }
    for (int i = 0; i < first->nbatch; i++) weft_devlaunch_take_env(first->batch[i], env);
    /* What the call makes weft log is the cause of every member, which all
     * fail with it: the first's span, copied to the others. */
    weft_log_cause_t *outer = weft_log_cause_enter(&first->cause);
    /* Each member is a body started: an injected failure of any fails the
     * call, as a batch body's own error would. */
    int injected = 0;
    for (int i = 0; i < first->nbatch; i++)
        injected |= weft_fault_hit(first->tp->ctx->fault, WEFT_FAULT_TASK, first->cls->name);
    int rc = WEFT_FAULT_RC;
    if (injected) /* its members say no line of their own (no body ran): named here */
        weft_error("batch of %d %s tasks (%s%s): failure injected (fault_inject): returns %d",
                   first->nbatch, first->cls->name, weft_task_name(first).text,
                   first->nbatch > 1 ? " and the others batched with it" : "", rc);
    else
        rc = batch_call(first);
    weft_log_cause_leave(outer);
    weft_taskrun_leave(first->tp->ctx);
    for (int i = 0; i < first->nbatch; i++) {
        first->batch[i]->body_rc = rc;
        first->batch[i]->body_ran = !injected;
        if (rc != 0 || atomic_load(&first->misuse))
            weft_log_cause_copy(&first->batch[i]->cause, &first->cause);
    }
    return rc == 0 ? WEFT_SUCCESS : WEFT_ERR_TASK; /* as weft_taskrun_body */
}

/* A stage-in failure of a batch member, logged: its task fails, the others
 * go on. */
static void batch_drop(weft_devmgr_t *m, weft_inflight_t *f, int rc)
{
    weft_device_t *dev = m->dev;
    if (f->has_stage_ev) dev->ops->event_destroy(dev, &f->stage_ev);
    f->has_stage_ev = 0;
    weft_devlaunch_undo_stage(m, f);
    weft_devlaunch_finish_task(m, f->task, rc);
    f->phase = PHASE_DONE;
}

/* Whether f may still be staged now: a task launched earlier in this pass
 * (a member of this batch too) may have begun a transfer into a copy f
 * reads, and only that task's stream orders it; f then goes back to WAIT
 * rather than copying the same bytes again. */
static int still_ready(weft_inflight_t *f)
{
    if (!weft_devlaunch_inputs_arriving(f->task)) return 1;
    f->phase = PHASE_WAIT;
    return 0;
}

/* Stages the records of group on one stream and launches their tasks by
 * one batch-body call; only the first records an event. Returns the tasks
 * launched. */
/* Stages the inputs of each record of the group still ready, on one
 * stream, into batch b; the staged ones move to the front of group, in
 * batch order (b->n of them), the others are dropped. */
static void stage_group(weft_devmgr_t *m, weft_inflight_t **group, int n, weft_batch_t *b,
                        int stream)
{
    int64_t now = weft_clock_ns();
    for (int i = 0; i < n; i++) {
        weft_inflight_t *f = group[i];
        if (!still_ready(f)) continue;
        if (weft_devlaunch_halted(m, f)) {
            weft_devlaunch_finish_task(m, f->task, WEFT_ERR_CANCELLED);
            f->phase = PHASE_DONE;
            continue;
        }
        f->stream = stream;
        f->stage_t0 = weft_trace_stamp(m->ctx->trace);
        f->stage_bytes = 0;
        /* As weft_devlaunch_stage_and_launch: a failed copy names itself. */
        weft_log_cause_t *outer = weft_log_cause_enter(&f->task->cause);
        int rc = weft_devlaunch_stage_inputs(m, f);
        if (rc != WEFT_SUCCESS)
            weft_log(WEFT_LOG_ERROR, m->dev->index, "task %s: stage-in failed: %s",
                     weft_task_name(f->task).text, weft_strerror(rc));
        weft_log_cause_leave(outer);
        if (rc != WEFT_SUCCESS) {
            batch_drop(m, f, rc);
            continue;
        }
        f->task->device = m->dev->index;
        f->phase = PHASE_EXEC;
        f->start_ns = now;
        atomic_fetch_add(&m->ctx->tasks_running, 1); /* the watchdog's "running" */
        f->batch = b;
        b->tasks[b->n] = f->task;
        group[b->n++] = f;
    }
}

static int launch_group(weft_devmgr_t *m, weft_inflight_t **group, int n, weft_batch_fn fn)
{
    weft_device_t *dev = m->dev;
    weft_batch_t *b = malloc(sizeof *b + (size_t)n * sizeof b->tasks[0]);
    if (!b) {
        for (int i = 0; i < n; i++) {
            weft_log(WEFT_LOG_ERROR, dev->index, "task %s: stage-in failed: %s",
                     weft_task_name(group[i]->task).text, weft_strerror(WEFT_ERR_NOMEM));
            batch_drop(m, group[i], WEFT_ERR_NOMEM);
        }
        return 0;
    }
    *b = (weft_batch_t){.refs = 0};
    int stream = weft_devlaunch_pick_stream(m, group[0]->task);
    stage_group(m, group, n, b, stream);
    if (b->n == 0) {
        free(b);
        return 0;
    }
    weft_task_t *first = b->tasks[0];
    first->batch = b->tasks;
    first->nbatch = b->n;
    first->batch_fn = fn;
    b->refs = b->n;
    int rc = dev->ops->launch(dev, stream, batch_trampoline, first);
    /* A body's own code is said by each task at its end (devlaunch.c). */
    if (rc != WEFT_SUCCESS && !(rc == WEFT_ERR_TASK && first->body_rc != 0) &&
        rc != WEFT_ERR_CANCELLED)
        weft_log(WEFT_LOG_ERROR, dev->index, "batch of %d %s tasks: launch failed: %s", b->n,
                 first->cls->name, weft_strerror(rc));
    group[0]->has_event = weft_device_event_record(dev, stream, &group[0]->ev) == WEFT_SUCCESS;
    group[0]->ev_rc = WEFT_AGAIN;
    if (!group[0]->has_event) {
        /* Nothing says whether the kernel succeeded: the batch fails. A
         * failed record ended the stream's work before it returned
         * (device.h), so the members free b as usual. */
        weft_log(WEFT_LOG_ERROR, dev->index, "batch of %d %s tasks: no event after it", b->n,
                 first->cls->name);
        if (rc == WEFT_SUCCESS) rc = WEFT_ERR_INTERNAL;
    }
    b->launch_rc = rc;
    for (int i = 0; i < b->n; i++) group[i]->rc = rc;
    if (rc == WEFT_SUCCESS) {
        atomic_fetch_add(&dev->stats.batches, 1);
        atomic_fetch_add(&dev->stats.batched_tasks, b->n);
    }
    return b->n;
}

/* Launches the records held READY: those that fit together go out in
 * batches of up to device_batch, in the order they started; one left
 * alone goes out by its own body; one whose input started arriving in
 * this pass goes back to WAIT. Returns the tasks launched. */
int weft_devbatch_launch(weft_devmgr_t *m)
{
    if (m->nheld == 0) return 0; /* no walk of the in-flight list this pass */
    m->nheld = 0;                /* each held record leaves READY below */
    int launched = 0;
    weft_inflight_t *group[BATCH_CAP];
    int cap = m->batch_max < BATCH_CAP ? m->batch_max : BATCH_CAP;
    weft_inflight_t *lead = weft_inflight_of(weft_list_first(&m->inflight));
    for (; lead; lead = weft_inflight_next(m, lead)) {
        if (lead->phase != PHASE_READY || !still_ready(lead)) continue;
        int n = 0;
        group[n++] = lead;
        for (weft_inflight_t *f = weft_inflight_next(m, lead); f && n < cap;
             f = weft_inflight_next(m, f))
            if (f->phase == PHASE_READY && batch_fits(lead->task, f->task)) group[n++] = f;
        if (n > 1) {
            launched += launch_group(m, group, n, weft_devbatch_body(m, lead->task));
            continue;
        }
        launched++;
        int rc = weft_devlaunch_stage_and_launch(m, lead);
        if (rc != WEFT_SUCCESS) {
            weft_devlaunch_finish_task(m, lead->task, rc);
            lead->phase = PHASE_DONE;
        }
    }
    return launched;
}
