/* The device managers: one thread per accelerator takes the tasks chosen
 * for its device by priority and drives each without blocking on the
 * device: its flows get copies on the device (pinned by readers), then the
 * copies of the newest versions go on the prefetch stream (or, with
 * device_prefetch=0, on the task's execution stream) and the body on an
 * execution stream behind them, then, once the stream passed the kernel,
 * readers are released and written flows become the newest version on the
 * device. Up to device_inflight tasks a stream are in flight, so the
 * inputs of the next tasks arrive while the kernels of earlier ones run;
 * a task that outranks all running work takes the urgent stream. A task
 * whose input is still arriving for another task waits for that
 * transfer's event (streams do not order each other). Small tasks of a
 * class with a batch body go out several at a time, by one call of it
 * (devbatch: kernels too small to fill the device alone). */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "devmgr/devinflight.h"
#include "trace/trace.h"
#include "stf/home.h"
#include "stf/taskrun.h"
#include "util/clock.h"
#include "util/log.h"

#define IDLE_SPIN_YIELDS 200            /* yields of an idle manager before it sleeps */
#define IDLE_YIELD_CREDIT 1000          /* yield-polls of in-flight work before timed sleeps */
#define IDLE_WAIT_NS 50000              /* then the polling period */
#define DEVMEM_PATIENCE_NS 2000000000LL /* how long copies held by others may block a task */

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

/* Every flow gets its device copy, pinned by a reader; all or none. */
static int pin_flows(weft_devmgr_t *m, weft_task_t *t)
{
    for (int i = 0; i < t->nflows; i++) {
        int first = weft_task_first_flow_of(t, i);
        if (first != i) {
            t->flow[i].copy = t->flow[first].copy;
            continue;
        }
        int rc = weft_devcopy_get(m, t->flow[i].data, &t->flow[i].copy);
        if (rc != WEFT_SUCCESS) {
            unpin_flows(t, i);
            return rc;
        }
    }
    return WEFT_SUCCESS;
}

/* Under d's lock: the copy to read from, a peer device's if allowed, else
 * the host's; NULL when only a device without peer access holds it. */
static weft_data_copy_t *pick_source_locked(weft_devmgr_t *m, weft_data_t *d)
{
    weft_devices_t *ds = m->ctx->devices;
    int dev = m->dev->index;
    for (int k = 1; k <= ds->n; k++)
        if (k != dev && weft_devices_peer(ds, dev, k) &&
            weft_data_copy_is_newest_locked(d, d->copies[k]))
            return d->copies[k];
    return weft_data_copy_is_newest_locked(d, d->copies[0]) ? d->copies[0] : NULL;
}

/* 1 while a copy t reads is receiving bytes for another task: only that
 * task's stream orders them, so t waits for its transfer event. */
int weft_devexec_inputs_arriving(const weft_task_t *t)
{
    int busy = 0;
    for (int i = 0; i < t->nflows && !busy; i++) {
        if (!reads(t, i)) continue;
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
    src = pick_source_locked(m, d);
    if (src) {
        weft_data_copy_reader_acquire_locked(src);
    } else {
        /* No direct source: the newest version comes through host memory,
         * whose copy then holds the reader. */
        weft_data_unlock(d);
        int rc = weft_devcopy_to_host(d, &src);
        if (rc != WEFT_SUCCESS) return rc;
        weft_data_lock(d);
    }
    uint32_t v = weft_data_xfer_begin_locked(d, dev->index);
    f->xfer[f->nxfer++] = (weft_xfer_rec_t){.data = d, .src = src, .dst = c, .version = v};
    f->xfer_bytes += (int64_t)d->bytes;
    weft_data_unlock(d);
    int rc = weft_devcopy_enqueue(dev, f->copy_stream, d, c, src);
    if (rc == WEFT_SUCCESS)
        atomic_fetch_add(&dev->stats.bytes[weft_devcopy_kind(dev->index, src->device)],
                         (long long)d->bytes);
    return rc;
}

/* Transfers are done: sources released, destinations current. */
static void finish_transfers(weft_devmgr_t *m, weft_inflight_t *f, int ok)
{
    int dev = m->dev->index;
    for (int i = 0; i < f->nxfer; i++) {
        weft_xfer_rec_t *x = &f->xfer[i];
        weft_data_lock(x->data);
        weft_data_copy_reader_release_locked(x->src);
        weft_data_xfer_end_locked(x->data, dev, x->version, ok);
        weft_data_unlock(x->data);
    }
    f->nxfer = 0;
}

/* A failed stage-in: what was enqueued lands before anything is reused. */
void weft_devexec_undo_stage(weft_devmgr_t *m, weft_inflight_t *f)
{
    weft_device_t *dev = m->dev;
    weft_event_t ev;
    if (dev->ops->event_record(dev, f->copy_stream, &ev) == WEFT_SUCCESS) {
        int rc = dev->ops->event_sync(dev, &ev);
        (void)rc; /* the task fails anyway */
        dev->ops->event_destroy(dev, &ev);
    }
    finish_transfers(m, f, 0);
    unpin_flows(f->task, f->task->nflows);
}

/* The execution stream of t. The urgent stream takes a task that outranks
 * everything running on the other execution streams (with a right-looking
 * factorization: the next panel while the trailing update runs), as long
 * as those have work, so that its kernels get the device first; the
 * others take turns. */
int weft_devexec_pick_stream(weft_devmgr_t *m, const weft_task_t *t)
{
    weft_device_t *dev = m->dev;
    int urgent = dev->urgent_stream;
    int nplain = dev->nstreams - WEFT_STREAM_EXEC0 - (urgent >= 0);
    if (urgent >= 0) {
        int on_urgent = 0, on_plain = 0, top = 0;
        for (const weft_inflight_t *f = m->inflight; f; f = f->next) {
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
int weft_devexec_stage_inputs(weft_devmgr_t *m, weft_inflight_t *f)
{
    weft_device_t *dev = m->dev;
    weft_task_t *t = f->task;
    f->copy_stream = m->prefetch ? WEFT_STREAM_PREFETCH : f->stream;
    int rc = WEFT_SUCCESS;
    for (int i = 0; i < t->nflows && rc == WEFT_SUCCESS; i++)
        if (reads(t, i)) rc = stage_flow(m, f, &t->flow[i]);
    if (rc != WEFT_SUCCESS || f->nxfer == 0) return rc;
    rc = dev->ops->event_record(dev, f->copy_stream, &f->xfer_ev);
    f->has_xfer_ev = rc == WEFT_SUCCESS;
    if (rc == WEFT_SUCCESS && f->copy_stream != f->stream)
        rc = dev->ops->stream_wait(dev, f->stream, &f->xfer_ev);
    return rc;
}

/* Copies then kernel, enqueued back to back: no round trip through this
 * thread between them. */
int weft_devexec_stage_and_launch(weft_devmgr_t *m, weft_inflight_t *f)
{
    weft_device_t *dev = m->dev;
    weft_task_t *t = f->task;
    f->stream = weft_devexec_pick_stream(m, t);
    f->xfer_t0 = weft_trace_stamp(m->ctx->trace);
    f->xfer_bytes = 0;
    int rc = weft_devexec_stage_inputs(m, f);
    if (rc != WEFT_SUCCESS) {
        weft_log(WEFT_LOG_ERROR, dev->index, "task %s #%llu: stage-in failed: %s", t->cls->name,
                 (unsigned long long)t->seq, weft_strerror(rc));
        if (f->has_xfer_ev) dev->ops->event_destroy(dev, &f->xfer_ev);
        f->has_xfer_ev = 0;
        weft_devexec_undo_stage(m, f);
        return rc;
    }
    t->device = dev->index;
    f->phase = PHASE_EXEC;
    f->start_ns = weft_clock_ns();
    t->body_fn = weft_home_body(m->ctx, t, dev->index);
    atomic_fetch_add(&m->ctx->tasks_running, 1); /* the watchdog's "running" */
    t->body_rc = 0;
    f->rc = dev->ops->launch(dev, f->stream, t, weft_taskrun_body);
    if (f->rc == WEFT_ERR_TASK && t->body_rc != 0) {
        /* The body itself (run at launch on an accelerator with streams)
         * returned its own code: say so, and fail the task as a body. */
        weft_log(WEFT_LOG_ERROR, dev->index, "task %s #%llu failed: its body returned %d",
                 t->cls->name, (unsigned long long)t->seq, t->body_rc);
    } else if (f->rc != WEFT_SUCCESS) {
        weft_log(WEFT_LOG_ERROR, dev->index, "task %s #%llu: launch failed: %s", t->cls->name,
                 (unsigned long long)t->seq, weft_strerror(f->rc));
    }
    /* Even after a failed launch: wait for what the body enqueued. */
    f->has_event = dev->ops->event_record(dev, f->stream, &f->ev) == WEFT_SUCCESS;
    return WEFT_SUCCESS;
}

/* ---- publication ---------------------------------------------------------- */

static void publish(weft_devmgr_t *m, weft_task_t *t, int ran)
{
    for (int i = 0; i < t->nflows; i++) {
        weft_flow_t *f = &t->flow[i];
        if (!f->copy || weft_task_first_flow_of(t, i) != i) continue;
        /* Used now: to the LRU's end while the flow's reader still pins it. */
        weft_devcopy_touch(m, f->copy);
        int wrote = ran && (f->mode & WEFT_W);
        weft_data_publish(f->data, f->copy, wrote ? WEFT_PUBLISH_WRITTEN : WEFT_PUBLISH_READ,
                          f->out_version, t->seq);
    }
}

void weft_devexec_finish_task(weft_devmgr_t *m, weft_task_t *t, int rc)
{
    if (rc != WEFT_SUCCESS && rc != WEFT_ERR_DEVMEM)
        weft_log(WEFT_LOG_ERROR, m->dev->index, "task %s #%llu failed: %s", t->cls->name,
                 (unsigned long long)t->seq, weft_strerror(rc));
    atomic_fetch_sub(&m->load_ns, (long long)t->est_ns);
    weft_taskrun_finish(m->ctx, t, rc);
}

static void exec_done(weft_devmgr_t *m, weft_inflight_t *f, int rc)
{
    weft_task_t *t = f->task;
    atomic_fetch_sub(&m->ctx->tasks_running, 1);
    if (rc == WEFT_SUCCESS) rc = f->rc;
    finish_transfers(m, f, rc == WEFT_SUCCESS);
    publish(m, t, rc == WEFT_SUCCESS);
    if (rc == WEFT_SUCCESS) atomic_fetch_add(&m->dev->stats.tasks, 1);
    atomic_fetch_add(&m->dev->stats.busy_ns, (long long)(weft_clock_ns() - f->start_ns));
    weft_trace_slice(
        m->ctx->trace, m->trace_track + 1 + f->stream, (uint64_t)f->start_ns, weft_trace_now(),
        t->cls->name, "task", "\"key\":%llu,\"device\":%d,\"seq\":%llu",
        t->nflows ? (unsigned long long)t->flow[t->affinity >= 0 ? t->affinity : 0].data->key
                  : 0ULL,
        m->dev->index, (unsigned long long)t->seq);
    weft_devexec_finish_task(m, t, rc);
}

/* Polls f's events; returns 1 when it made progress, and sets *done when
 * f is finished. */
static int step(weft_devmgr_t *m, weft_inflight_t *f, int *done)
{
    weft_device_t *dev = m->dev;
    *done = 0;
    if (f->phase == PHASE_DONE) {
        *done = 1;
        return 1;
    }
    if (f->phase == PHASE_READY) return 0; /* weft_devbatch_launch takes it */
    if (f->phase == PHASE_WAIT) {
        if (weft_devexec_inputs_arriving(f->task)) return 0;
        if (weft_devbatch_body(m, f->task) != NULL) {
            f->phase = PHASE_READY;
            m->nheld++;
            return 1;
        }
        int rc = weft_devexec_stage_and_launch(m, f);
        if (rc != WEFT_SUCCESS) {
            weft_devexec_finish_task(m, f->task, rc);
            *done = 1;
        }
        return 1;
    }
    int progress = 0;
    int xrc = f->has_xfer_ev ? dev->ops->event_query(dev, &f->xfer_ev) : WEFT_AGAIN;
    if (xrc != WEFT_AGAIN) {
        /* The copies landed (other tasks of this device may read them now),
         * or failed: on another stream than the kernel's, so the task
         * fails here and the destinations stay stale. */
        dev->ops->event_destroy(dev, &f->xfer_ev);
        f->has_xfer_ev = 0;
        weft_trace_slice(m->ctx->trace, m->trace_track + 1 + f->copy_stream, f->xfer_t0,
                         weft_trace_now(), "stage-in", "xfer", "\"copies\":%d,\"bytes\":%lld",
                         f->nxfer, (long long)f->xfer_bytes);
        finish_transfers(m, f, xrc == WEFT_SUCCESS);
        if (xrc != WEFT_SUCCESS && f->rc == WEFT_SUCCESS) f->rc = xrc;
        progress = 1;
    }
    int rc;
    if (f->batch && f->batch->tasks[0] != f->task) {
        if (!f->batch->done) return progress; /* the batch's first task polls */
        rc = f->batch->rc;
    } else {
        rc = f->has_event ? dev->ops->event_query(dev, &f->ev) : WEFT_SUCCESS;
        if (rc == WEFT_AGAIN) return progress;
        if (f->has_event) dev->ops->event_destroy(dev, &f->ev);
        if (f->batch) {
            /* The kernel's outcome, not this task's own stage-in (each
             * member reports its own through its rc). */
            f->batch->done = 1;
            f->batch->rc = rc == WEFT_SUCCESS ? f->batch->launch_rc : rc;
            f->task->batch = NULL;
        }
    }
    if (f->has_xfer_ev) dev->ops->event_destroy(dev, &f->xfer_ev);
    exec_done(m, f, rc);
    weft_devbatch_release(f->batch);
    *done = 1;
    return 1;
}

static int progress_inflight(weft_devmgr_t *m)
{
    int progress = 0;
    for (weft_inflight_t **pp = &m->inflight; *pp;) {
        weft_inflight_t *f = *pp;
        int done;
        progress += step(m, f, &done);
        if (done) {
            *pp = f->next;
            m->ninflight--;
            free(f);
        } else {
            pp = &f->next;
        }
    }
    /* The tasks this pass found launchable and held for batches. */
    return progress + weft_devbatch_launch(m);
}

/* ---- the manager thread ------------------------------------------------- */

typedef struct mgr_state {
    weft_task_t *blocked;  /* waits for device memory */
    int defrag;            /* it did not fit with nothing else in flight */
    int64_t blocked_since; /* while nothing else is in flight */
    int yields;            /* polls by sched_yield since the last progress */
} mgr_state_t;

static weft_task_t *pop_ready(weft_devmgr_t *m)
{
    pthread_mutex_lock(&m->lock);
    weft_task_t *t = weft_heap_pop(&m->ready);
    pthread_mutex_unlock(&m->lock);
    return t;
}

/* WEFT_AGAIN from stage-in: memory is pinned by tasks in flight. With
 * none in flight, the zone is emptied once (its own cached tiles may
 * split the free space); if the task still does not fit and nothing on
 * the device is held by anyone (a send, a peer's copy), nothing will ever
 * free room: it fails at once. Copies held elsewhere get a while. */
static int keep_blocked(weft_devmgr_t *m, mgr_state_t *s, weft_task_t *t)
{
    if (m->ninflight > 0) {
        s->blocked_since = 0;
        return 1;
    }
    int64_t now = weft_clock_ns();
    int defragged = s->blocked_since != 0;
    if (!defragged) s->blocked_since = now;
    s->defrag = 1;
    if (!defragged) return 1;
    int pinned = weft_devcopy_pinned(m);
    if (pinned > 0 && now - s->blocked_since < DEVMEM_PATIENCE_NS) return 1;
    weft_log(WEFT_LOG_ERROR, m->dev->index,
             "task %s #%llu: its tiles do not fit in the free part of %s's zone (%zu of %zu "
             "bytes free) and nothing more can be evicted%s (raise device_memory_limit / "
             "device_memory_use)",
             t->cls->name, (unsigned long long)t->seq, m->dev->name,
             weft_zone_largest_free(m->dev->zone), m->dev->zone_bytes,
             pinned ? ": its copies stayed in use" : "");
    s->blocked_since = 0;
    s->defrag = 0;
    return 0;
}

static int start_tasks(weft_devmgr_t *m, mgr_state_t *s)
{
    int started = 0;
    while (m->ninflight < m->max_inflight) {
        weft_task_t *t = s->blocked ? s->blocked : pop_ready(m);
        if (!t) break;
        s->blocked = NULL;
        if (s->defrag) {
            s->defrag = 0;
            int er = weft_devcopy_evict_all(m);
            (void)er; /* a failed write-back was logged; the task retries below */
        }
        weft_inflight_t *f = calloc(1, sizeof *f);
        int rc = f ? weft_devcopy_task_fits(m, t) : WEFT_ERR_NOMEM;
        if (rc == WEFT_SUCCESS) rc = pin_flows(m, t);
        if (rc == WEFT_AGAIN && keep_blocked(m, s, t)) {
            s->blocked = t;
            free(f);
            break;
        }
        started++;
        s->blocked_since = 0;
        if (rc != WEFT_SUCCESS) {
            free(f);
            weft_devexec_finish_task(m, t, rc == WEFT_AGAIN ? WEFT_ERR_DEVMEM : rc);
            continue;
        }
        f->task = t;
        f->phase = PHASE_WAIT;
        /* Appended: events are polled in the order the tasks started. */
        weft_inflight_t **pp = &m->inflight;
        while (*pp) pp = &(*pp)->next;
        *pp = f;
        m->ninflight++;
    }
    return started;
}

/* Sleeps until a task arrives (nothing in flight) or for a growing while
 * (events pending: the device does not call back). Returns 0 to stop. */
static int idle_wait(weft_devmgr_t *m, mgr_state_t *s)
{
    pthread_mutex_lock(&m->lock);
    int idle = m->ninflight == 0 && !s->blocked;
    if (idle) {
        /* A new task often follows within microseconds (a successor, a
         * tile just received): yield a little before sleeping, since a
         * wake-up from the condition costs tens of microseconds. */
        for (int k = 0; k < IDLE_SPIN_YIELDS && !m->stop && weft_heap_empty(&m->ready); k++) {
            pthread_mutex_unlock(&m->lock);
            sched_yield();
            pthread_mutex_lock(&m->lock);
        }
        while (!m->stop && weft_heap_empty(&m->ready)) pthread_cond_wait(&m->cond, &m->lock);
    } else if (s->yields < IDLE_YIELD_CREDIT) {
        /* Work in flight: poll again soon. A timed sleep this short would
         * last the kernel's timer slack (about 50 us) instead: yield. */
        s->yields++;
        pthread_mutex_unlock(&m->lock);
        sched_yield();
        pthread_mutex_lock(&m->lock);
    } else {
        /* Long kernels: poll at the timer slack's pace. */
        struct timespec ts = weft_deadline_in(IDLE_WAIT_NS);
        pthread_cond_timedwait(&m->cond, &m->lock, &ts);
    }
    int go_on = !(m->stop && weft_heap_empty(&m->ready) && idle);
    pthread_mutex_unlock(&m->lock);
    return go_on;
}

static void *mgr_main(void *arg)
{
    weft_devmgr_t *m = arg;
    mgr_state_t s = {0};
    weft_trace_thread_track = m->trace_track;
    for (;;) {
        int progress = progress_inflight(m);
        progress += start_tasks(m, &s);
        if (progress) {
            s.yields = 0;
            continue;
        }
        if (!idle_wait(m, &s)) break;
    }
    return NULL;
}

/* ---- submission, start and stop ------------------------------------------ */

int weft_devexec_submit(weft_context_t *ctx, weft_task_t *t)
{
    if (ctx->ndevices == 0 || t->kind != WEFT_TASK_BODY) return 0;
    int dev = weft_devselect(ctx, t);
    if (dev <= 0) {
        atomic_fetch_add(&ctx->host_load_ns, (long long)t->est_ns);
        return 0; /* no body anywhere (-1): the host path reports it */
    }
    weft_devmgr_t *m = ctx->devmgr[dev];
    t->device = dev;
    atomic_fetch_add(&m->load_ns, (long long)t->est_ns);
    pthread_mutex_lock(&m->lock);
    int rc = weft_heap_push(&m->ready, t);
    pthread_cond_signal(&m->cond);
    pthread_mutex_unlock(&m->lock);
    if (rc != 0) {
        weft_log(WEFT_LOG_ERROR, dev, "out of memory growing the ready queue");
        abort();
    }
    return 1;
}

void weft_devexec_host_done(weft_context_t *ctx, weft_task_t *t)
{
    if (ctx->ndevices > 0 && t->est_ns) atomic_fetch_sub(&ctx->host_load_ns, (long long)t->est_ns);
}

static void mgr_free(weft_devmgr_t *m)
{
    weft_heap_fini(&m->ready);
    pthread_cond_destroy(&m->cond);
    pthread_mutex_destroy(&m->lock);
    pthread_mutex_destroy(&m->lru_lock);
    free(m);
}

/* One track for the manager, then one per stream of the device. */
static int trace_tracks(weft_context_t *ctx, weft_device_t *dev)
{
    char name[64];
    snprintf(name, sizeof name, "%s%d manager", dev->ops->name, dev->index);
    int first = weft_trace_track(ctx->trace, name);
    for (int s = 0; s < dev->nstreams; s++) {
        snprintf(name, sizeof name, "%s%d stream %d%s", dev->ops->name, dev->index, s,
                 s == WEFT_STREAM_IN         ? " (in)"
                 : s == WEFT_STREAM_OUT      ? " (out)"
                 : s == WEFT_STREAM_PREFETCH ? " (prefetch)"
                 : s == dev->urgent_stream   ? " (urgent)"
                                             : "");
        int rc = weft_trace_track(ctx->trace, name);
        (void)rc; /* consecutive ids: first + 1 + s */
    }
    return first;
}

static int mgr_start(weft_context_t *ctx, weft_device_t *dev)
{
    weft_devmgr_t *m = calloc(1, sizeof *m);
    if (!m) return WEFT_ERR_NOMEM;
    m->ctx = ctx;
    m->dev = dev;
    m->trace_track = trace_tracks(ctx, dev);
    m->inflight_per_stream = (int)weft_params_int(ctx->params, "device_inflight");
    m->prefetch = (int)weft_params_int(ctx->params, "device_prefetch");
    m->batch_max = (int)weft_params_int(ctx->params, "device_batch");
    m->batch_elems = weft_params_int(ctx->params, "device_batch_elems");
    m->max_inflight = m->inflight_per_stream * (dev->nstreams - WEFT_STREAM_EXEC0);
    pthread_mutex_init(&m->lock, NULL);
    pthread_cond_init(&m->cond, NULL);
    pthread_mutex_init(&m->lru_lock, NULL);
    if (weft_heap_init(&m->ready, 64) != 0) {
        free(m);
        return WEFT_ERR_NOMEM;
    }
    dev->mgr = m;
    ctx->devmgr[dev->index] = m;
    if (pthread_create(&m->thread, NULL, mgr_main, m) != 0) {
        ctx->devmgr[dev->index] = NULL;
        mgr_free(m);
        return WEFT_ERR_NOMEM;
    }
    return WEFT_SUCCESS;
}

static void mgr_stop(weft_devmgr_t *m)
{
    pthread_mutex_lock(&m->lock);
    m->stop = 1;
    pthread_cond_signal(&m->cond);
    pthread_mutex_unlock(&m->lock);
    pthread_join(m->thread, NULL);
}

int weft_devexec_start(weft_context_t *ctx)
{
    weft_devices_t *ds = NULL;
    int rc = weft_devices_open(ctx->params, ctx->local_rank, ctx->fault, &ds);
    /* Collective: entered by every rank, also after a failed opening. */
    int src = weft_devshare_count(ctx, rc == WEFT_SUCCESS ? ds : NULL);
    if (rc == WEFT_SUCCESS) rc = src;
    if (rc == WEFT_SUCCESS) rc = weft_devices_make_zones(ds);
    if (rc != WEFT_SUCCESS) {
        weft_devices_close(ds);
        return rc;
    }
    ctx->devices = ds;
    for (int i = 1; i <= ds->n && rc == WEFT_SUCCESS; i++) {
        rc = mgr_start(ctx, ds->dev[i]);
        weft_device_t *dev = ds->dev[i];
        weft_log(WEFT_LOG_INFO, i,
                 "%s: zone of %zu MiB (1 of %d on the device), %d execution streams%s", dev->name,
                 dev->zone_bytes >> 20, dev->share.sharers, dev->nstreams - WEFT_STREAM_EXEC0,
                 dev->urgent_stream >= 0 ? " (one urgent)" : "");
    }
    if (rc != WEFT_SUCCESS) {
        weft_devexec_stop(ctx);
        return rc;
    }
    ctx->ndevices = ds->n;
    return WEFT_SUCCESS;
}

void weft_devexec_stop(weft_context_t *ctx)
{
    weft_devices_t *ds = ctx->devices;
    if (!ds) return;
    int n = ds->n;
    for (int i = 1; i <= n; i++)
        if (ctx->devmgr[i]) mgr_stop(ctx->devmgr[i]);
    if (ctx->show_stats) weft_devstats_print(ctx);
    weft_devices_close(ds);
    for (int i = 1; i <= n; i++) {
        if (ctx->devmgr[i]) mgr_free(ctx->devmgr[i]);
        ctx->devmgr[i] = NULL;
    }
    ctx->devices = NULL;
    ctx->ndevices = 0;
}
