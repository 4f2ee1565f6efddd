/* A task's own steps on a device, shared by the manager's task path
 * (devexec.c) and its batches (devbatch.c), so that neither calls into the
 * other: pinning its flows' device copies, the choice of its execution
 * stream, the stage-in copies of its inputs and their end, the launch of
 * its body, its kernel's outcome, and its end (written flows published,
 * readers released, the task finished). Each step that can fail the task
 * runs in its span (util/log.h): the first error line logged there is the
 * cause its failure line carries to every rank. */
#include <stdio.h>
#include <stdlib.h>

#include "devmgr/devlaunch.h"
#include "trace/trace.h"
#include "stf/home.h"
#include "stf/taskpool.h"
#include "stf/taskrun.h"
#include "util/clock.h"
#include "util/fault.h"
#include "util/log.h"

static int reads(const weft_task_t *t, int i)
{
    return (t->flow[i].mode & WEFT_R) && weft_task_first_flow_of(t, i) == i;
}

/* ---- stage-in ------------------------------------------------------------ */

static void unpin_flows(weft_task_t *t, int upto)
{
    for (int i = 0; i < upto; i++) {
        weft_flow_t *f = &t->flow[i];
        if (!f->copy || weft_task_first_flow_of(t, i) != i) continue;
        weft_data_lock(f->data);
        weft_data_copy_reader_release_locked(f->copy);
        weft_data_unlock(f->data);
    }
    for (int i = 0; i < t->nflows; i++) t->flow[i].copy = NULL;
}

/* Every flow gets its device copy, pinned by a reader; all or none. A task
 * started while others are in flight is a prefetch: it may not evict what
 * is needed before it. */
int weft_devlaunch_pin_flows(weft_devmgr_t *m, weft_task_t *t)
{
    weft_use_t after = WEFT_USE_ANY;
    if (m->ninflight > 0) after = (weft_use_t){.seq = t->seq, .priority = t->priority};
    for (int i = 0; i < t->nflows; i++) {
        int first = weft_task_first_flow_of(t, i);
        if (first != i) {
            t->flow[i].copy = t->flow[first].copy;
            continue;
        }
        int rc =
            weft_devcopy_get_ahead(m, t->flow[i].data, after, WEFT_LOG_ERROR, &t->flow[i].copy);
        if (rc != WEFT_SUCCESS) {
            unpin_flows(t, i);
            return rc;
        }
        weft_devahead_claim(m, t->flow[i].copy);
    }
    return WEFT_SUCCESS;
}

weft_data_copy_t *weft_devlaunch_source_locked(weft_devmgr_t *m, weft_data_t *d)
{
    weft_devices_t *ds = m->ctx->devices;
    int dev = m->dev->index;
    for (int k = 1; k <= ds->n; k++)
        if (k != dev && weft_devices_peer(ds, dev, k) && !weft_device_is_broken(ds->dev[k]) &&
            weft_data_copy_is_newest_locked(d, d->copies[k]))
            return d->copies[k];
    return weft_data_copy_is_newest_locked(d, d->copies[0]) ? d->copies[0] : NULL;
}

/* 1 while a copy t reads is receiving bytes for another task: only that
 * task's stream orders them, so t waits for its transfer event. */
int weft_devlaunch_inputs_arriving(const weft_task_t *t)
{
    int busy = 0;
    for (int i = 0; i < t->nflows && !busy; i++) {
        /* The pull its gate waits for is ordered by the stream wait. */
        if (!reads(t, i) || weft_devgate_landing(t, t->flow[i].copy)) continue;
        weft_data_lock(t->flow[i].data);
        busy = t->flow[i].copy->xfer == WEFT_XFER_UNDER;
        weft_data_unlock(t->flow[i].data);
    }
    return busy;
}

/* Enqueues the copy of the newest version into the flow's device copy on
 * f's stream, unless it is there already. */
static int stage_flow(weft_devmgr_t *m, weft_inflight_t *f, weft_flow_t *fl)
{
    weft_data_t *d = fl->data;
    weft_data_copy_t *c = fl->copy, *src = NULL;
    weft_device_t *dev = m->dev;
    weft_data_lock(d);
    if (weft_data_copy_is_newest_locked(d, c)) {
        weft_data_unlock(d);
        return WEFT_SUCCESS;
    }
    src = weft_devlaunch_source_locked(m, d);
    if (src) {
        weft_data_copy_reader_acquire_locked(src);
    } else {
        /* No direct source: the newest version comes through host memory,
         * whose copy then holds the reader. */
        weft_data_unlock(d);
        int rc = weft_devcopy_to_host(WEFT_LOG_ERROR, d, &src);
        if (rc != WEFT_SUCCESS) return rc;
        weft_data_lock(d);
    }
    uint32_t v = weft_data_xfer_begin_locked(d, dev->index);
    f->stage[f->nstage++] = (weft_stage_rec_t){.data = d, .src = src, .dst = c, .version = v};
    f->stage_bytes += (int64_t)d->bytes;
    weft_data_unlock(d);
    return weft_devcopy_enqueue(WEFT_LOG_ERROR, dev, f->copy_stream, d, c, src); /* counts bytes */
}

/* Transfers are done: sources released, destinations current. */
void weft_devlaunch_finish_stage(weft_devmgr_t *m, weft_inflight_t *f, int ok)
{
    int dev = m->dev->index;
    for (int i = 0; i < f->nstage; i++) {
        weft_stage_rec_t *x = &f->stage[i];
        weft_data_lock(x->data);
        weft_data_copy_reader_release_locked(x->src);
        weft_data_xfer_end_locked(x->data, dev, x->version, ok);
        weft_data_unlock(x->data);
    }
    f->nstage = 0;
}

int weft_devlaunch_halted(weft_devmgr_t *m, weft_inflight_t *f)
{
    if (!atomic_load(&m->ctx->bodies_halted)) return 0;
    unpin_flows(f->task, f->task->nflows);
    f->task->cancelled = 1;
    return 1;
}

/* A failed stage-in: what was enqueued lands before anything is reused. */
void weft_devlaunch_undo_stage(weft_devmgr_t *m, weft_inflight_t *f)
{
    int rc = weft_device_stream_drain(m->dev, f->copy_stream);
    (void)rc; /* the task fails anyway */
    weft_devlaunch_finish_stage(m, f, 0);
    unpin_flows(f->task, f->task->nflows);
}

/* The execution stream of t. The urgent stream takes a task that outranks
 * everything running on the other execution streams (with a right-looking
 * factorization: the next panel while the trailing update runs), as long
 * as those have work, so that its kernels get the device first; the
 * others take turns. */
int weft_devlaunch_pick_stream(weft_devmgr_t *m, const weft_task_t *t)
{
    weft_device_t *dev = m->dev;
    int urgent = dev->urgent_stream;
    int nplain = dev->nstreams - WEFT_STREAM_EXEC0 - (urgent >= 0);
    if (urgent >= 0) {
        int on_urgent = 0, on_plain = 0, top = 0;
        weft_inflight_t *f = weft_inflight_of(weft_list_first(&m->inflight));
        for (; f; f = weft_inflight_next(m, f)) {
            if (f->phase != PHASE_EXEC) continue;
            if (f->stream == urgent) {
                on_urgent++;
            } else if (!on_plain++ || f->task->priority > top) {
                top = f->task->priority;
            }
        }
        if (on_plain > 0 && t->priority > top && on_urgent < m->inflight_per_stream) return urgent;
    }
    return WEFT_STREAM_EXEC0 + m->next_exec++ % nplain;
}

/* The stage-in copies of f on the prefetch stream (they start now, beside
 * the kernels in flight) or on f's execution stream; either way f's kernel
 * starts after them. */
int weft_devlaunch_stage_inputs(weft_devmgr_t *m, weft_inflight_t *f)
{
    weft_device_t *dev = m->dev;
    weft_task_t *t = f->task;
    f->copy_stream = m->prefetch ? WEFT_STREAM_PREFETCH : f->stream;
    int rc = WEFT_SUCCESS, landing = 0;
    for (int i = 0; i < t->nflows && rc == WEFT_SUCCESS; i++) {
        /* A tile still landing for it (devgate.c), read or written: the
         * kernel waits for the pull on the device, nothing is staged. */
        if (weft_task_first_flow_of(t, i) == i && weft_devgate_landing(t, t->flow[i].copy))
            landing = 1;
        else if (reads(t, i))
            rc = stage_flow(m, f, &t->flow[i]);
    }
    if (rc == WEFT_SUCCESS && landing) rc = weft_devgate_wait(m, t, f->stream);
    if (rc != WEFT_SUCCESS || f->nstage == 0) return rc;
    rc = weft_device_event_record(dev, f->copy_stream, &f->stage_ev);
    f->has_stage_ev = rc == WEFT_SUCCESS;
    if (rc == WEFT_SUCCESS && f->copy_stream != f->stream)
        rc = dev->ops->stream_wait(dev, f->stream, &f->stage_ev);
    return rc;
}

/* The kernel of a task's launch: the task takes its stream's
 * environment, then its body runs. */
static int devlaunch_kernel(const weft_device_env_t *env, void *arg)
{
    weft_task_t *t = arg;
    weft_context_t *ctx = t->tp->ctx;
    if (!weft_taskrun_enter(ctx)) { /* the ranks diverged since its staging */
        t->cancelled = 1;
        return WEFT_ERR_CANCELLED;
    }
    weft_devlaunch_take_env(t, env);
    int rc = weft_taskrun_body(t);
    weft_taskrun_leave(ctx);
    return rc;
}

/* Copies then kernel, enqueued back to back: no round trip through this
 * thread between them. */
int weft_devlaunch_stage_and_launch(weft_devmgr_t *m, weft_inflight_t *f)
{
    weft_device_t *dev = m->dev;
    weft_task_t *t = f->task;
    if (weft_devlaunch_halted(m, f)) return WEFT_ERR_CANCELLED;
    f->stream = weft_devlaunch_pick_stream(m, t);
    f->stage_t0 = weft_trace_stamp(m->ctx->trace);
    f->stage_bytes = 0;
    /* What this thread logs for t from now until its launch is t's cause
     * (a copy that fails names itself before this stage-in does). */
    weft_log_cause_t *outer = weft_log_cause_enter(&t->cause);
    int rc = weft_devlaunch_stage_inputs(m, f);
    if (rc != WEFT_SUCCESS) {
        weft_log(WEFT_LOG_ERROR, dev->index, "task %s: stage-in failed: %s", weft_task_name(t).text,
                 weft_strerror(rc));
        if (f->has_stage_ev) dev->ops->event_destroy(dev, &f->stage_ev);
        f->has_stage_ev = 0;
        weft_devlaunch_undo_stage(m, f);
        weft_log_cause_leave(outer);
        return rc;
    }
    t->device = dev->index;
    f->phase = PHASE_EXEC;
    f->start_ns = weft_clock_ns();
    t->body_fn = weft_home_body(m->ctx, t, dev->index);
    atomic_fetch_add(&m->ctx->tasks_running, 1); /* the watchdog's "running" */
    t->body_rc = 0;
    f->rc = dev->ops->launch(dev, f->stream, devlaunch_kernel, t);
    /* A body that returned its own code (run at launch on an accelerator
     * with streams, later on an emu device) is said at the task's end. */
    if (f->rc != WEFT_SUCCESS && !(f->rc == WEFT_ERR_TASK && t->body_rc != 0) &&
        f->rc != WEFT_ERR_CANCELLED) { /* not started: the ranks diverged (taskrun.c) */
        weft_log(WEFT_LOG_ERROR, dev->index, "task %s: launch failed: %s", weft_task_name(t).text,
                 weft_strerror(f->rc));
    }
    /* Even after a failed launch: wait for what the body enqueued. */
    int erc = weft_device_event_record(dev, f->stream, &f->ev);
    f->has_event = erc == WEFT_SUCCESS;
    if (!f->has_event && f->rc == WEFT_SUCCESS) {
        /* The stream's work is over (device.h) but whether it succeeded
         * is unknown: the task fails (it was counted a success). */
        weft_log(WEFT_LOG_ERROR, dev->index,
                 "task %s: no event could be recorded after its kernels (%s): the task fails",
                 weft_task_name(t).text, weft_strerror(erc));
        f->rc = erc;
    }
    f->ev_rc = WEFT_AGAIN; /* not seen over yet (devexec.c polls a gated one early) */
    weft_log_cause_leave(outer);
    return WEFT_SUCCESS;
}

/* ---- completion --------------------------------------------------------- */

/* fault_inject device_fail: the completion of t reports an error and the
 * device is broken from now on (a GPU's sticky error), else rc. */
static int completion_fault(weft_devmgr_t *m, const weft_task_t *t, int rc)
{
    if (!weft_fault_hit(m->ctx->fault, WEFT_FAULT_DEVICE_FAIL, t->cls->name)) return rc;
    char why[256];
    snprintf(why, sizeof why,
             "the completion event of task %s reported an error (injected: fault_inject "
             "device_fail)",
             weft_task_name(t).text);
    weft_device_set_broken(m->dev, why);
    return WEFT_ERR_DEVICE;
}

/* f's stage-in copies ended (landed: other tasks of this device may read
 * them now, or failed: on another stream than the kernel's, so the task
 * fails here and the destinations stay stale); 0 while they run. */
int weft_devlaunch_stage_landed(weft_devmgr_t *m, weft_inflight_t *f)
{
    weft_device_t *dev = m->dev;
    if (!f->has_stage_ev) return 0;
    /* What the device says of them is the task's cause. */
    weft_log_cause_t *outer = weft_log_cause_enter(&f->task->cause);
    int xrc = dev->ops->event_query(dev, &f->stage_ev);
    weft_log_cause_leave(outer);
    if (xrc == WEFT_AGAIN) return 0;
    dev->ops->event_destroy(dev, &f->stage_ev);
    f->has_stage_ev = 0;
    weft_trace_lane_slice(m->ctx->trace, &m->lanes[f->copy_stream], f->stage_t0, "stage-in", "xfer",
                          "\"copies\":%d,\"bytes\":%lld", f->nstage, (long long)f->stage_bytes);
    weft_devlaunch_finish_stage(m, f, xrc == WEFT_SUCCESS);
    if (xrc != WEFT_SUCCESS && f->rc == WEFT_SUCCESS) f->rc = xrc;
    return 1;
}

int weft_devlaunch_kernel_poll(weft_devmgr_t *m, weft_inflight_t *f)
{
    if (!f->has_event) return WEFT_SUCCESS;
    if (f->ev_rc != WEFT_AGAIN) return f->ev_rc;
    /* A device error line about it is the task's cause. */
    weft_log_cause_t *outer = weft_log_cause_enter(&f->task->cause);
    f->ev_rc = m->dev->ops->event_query(m->dev, &f->ev);
    weft_log_cause_leave(outer);
    return f->ev_rc;
}

/* The outcome of f's kernel (WEFT_AGAIN: not yet), in its task's span: a
 * device error line about it, or the injected one, is the task's cause. */
int weft_devlaunch_kernel_outcome(weft_devmgr_t *m, weft_inflight_t *f)
{
    int rc = weft_devlaunch_kernel_poll(m, f);
    if (rc == WEFT_AGAIN) return rc;
    weft_log_cause_t *outer = weft_log_cause_enter(&f->task->cause);
    rc = completion_fault(m, f->task, rc);
    weft_log_cause_leave(outer);
    return rc;
}

/* ---- publication ---------------------------------------------------------- */

static void publish(weft_devmgr_t *m, weft_task_t *t, int ran)
{
    for (int i = 0; i < t->nflows; i++) {
        weft_flow_t *f = &t->flow[i];
        if (!f->copy || weft_task_first_flow_of(t, i) != i) continue;
        /* Used now: to the LRU's end while the flow's reader still pins it. */
        weft_devcopy_touch(m, f->copy);
        weft_data_publish(f->data, f->copy, weft_task_publish_what(t, f->mode & WEFT_W, ran),
                          f->out_version, t->seq);
    }
}

/* A dead device fails every task in flight on it, and those queued: a
 * full GPU's worth of lines saying the same. The first few are named;
 * the others are counted, their number said at weft_fini (devflush.c). */
static void log_failed_on_broken(weft_devmgr_t *m, weft_task_t *t)
{
    long long n = atomic_fetch_add(&m->dev->stats.failed_broken, 1) + 1;
    if (n <= WEFT_DEVICE_BROKEN_NAMED)
        weft_log_outcome(m->dev->index, "task %s failed on device %s: %s%s", weft_task_name(t).text,
                         m->dev->name, weft_strerror(WEFT_ERR_DEVICE),
                         n == WEFT_DEVICE_BROKEN_NAMED
                             ? "; the later tasks failing there are counted, not named "
                               "(weft_fini says how many)"
                             : "");
}

void weft_devlaunch_finish_task(weft_devmgr_t *m, weft_task_t *t, int rc)
{
    /* Launched ahead of a receive whose bytes did not come: it did not
     * run on what it reads (weft_devgate_pass found the input lost). */
    /* Or not started at all: the ranks diverged (weft_taskrun_body). */
    if (t->cancelled) rc = WEFT_ERR_CANCELLED;
    weft_devgate_drop(m, t);
    /* Only the lost input says more than the failure line will; the span
     * ends before the end, which may free t. */
    weft_log_cause_t *outer = weft_log_cause_enter(&t->cause);
    if (rc == WEFT_ERR_DEVICE && weft_device_is_broken(m->dev))
        log_failed_on_broken(m, t);
    else if (rc == WEFT_ERR_DEVICE)
        weft_log(WEFT_LOG_ERROR, m->dev->index,
                 "task %s failed: an input of it was lost with another device that failed",
                 weft_task_name(t).text);
    else if (rc == WEFT_ERR_TASK && t->body_rc != 0) /* set only by a body call */
        weft_taskrun_log_body_failed(t, m->dev->index);
    else if (rc != WEFT_SUCCESS && rc != WEFT_ERR_DEVMEM && rc != WEFT_ERR_CANCELLED)
        weft_log_outcome(m->dev->index, "task %s failed: %s", weft_task_name(t).text,
                         weft_strerror(rc));
    weft_log_cause_leave(outer);
    atomic_fetch_sub(&m->load_ns, (long long)t->est_ns);
    weft_taskrun_finish(m->ctx, t, rc);
}

void weft_devlaunch_end(weft_devmgr_t *m, weft_inflight_t *f, int rc)
{
    weft_task_t *t = f->task;
    atomic_fetch_sub(&m->ctx->tasks_running, 1);
    if (rc == WEFT_SUCCESS) rc = f->rc;
    if (t->cancelled) rc = WEFT_ERR_CANCELLED;            /* see weft_devlaunch_finish_task */
    int ok = weft_taskrun_outcome(t, rc) == WEFT_SUCCESS; /* its finish says the misuse */
    weft_devlaunch_finish_stage(m, f, ok);
    publish(m, t, ok);
    /* Bodies run there, failed ones included, as the rank's tasks_run
     * counts them (it counted one the device did not). */
    if (t->body_ran && rc != WEFT_ERR_CANCELLED) atomic_fetch_add(&m->dev->stats.tasks, 1);
    atomic_fetch_add(&m->dev->stats.busy_ns, (long long)(weft_clock_ns() - f->start_ns));
    weft_trace_lane_slice(
        m->ctx->trace, &m->lanes[f->stream], (uint64_t)f->start_ns, t->cls->name, "task",
        "\"key\":%llu,\"device\":%d,\"seq\":%llu",
        t->nflows ? (unsigned long long)t->flow[t->affinity >= 0 ? t->affinity : 0].data->key
                  : 0ULL,
        m->dev->index, (unsigned long long)t->seq);
    weft_devlaunch_finish_task(m, t, rc);
}

void weft_devlaunch_batch_release(weft_batch_t *b)
{
    if (b && --b->refs == 0) free(b);
}
