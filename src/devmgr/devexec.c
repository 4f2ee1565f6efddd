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
 * (devbatch: kernels too small to fill the device alone). A task's own
 * steps (pin, stage-in, launch, end) are devlaunch.c's. */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "data/hostmem.h"
#include "data/zone.h"
#include "devmgr/devahead.h"
#include "devmgr/devbatch.h"
#include "sched/sched.h"
#include "trace/trace.h"
#include "util/bodythread.h"
#include "util/clock.h"
#include "util/log.h"

#define IDLE_SPIN_YIELDS 200            /* yields of an idle manager before it sleeps, */
#define IDLE_SPIN_NS 1000000LL          /* or for how long with a core of its own */
#define IDLE_YIELD_CREDIT 1000          /* yield-polls of in-flight work before timed sleeps */
#define IDLE_WAIT_NS 50000              /* then the polling period */
_Static_assert(WEFT_MAX_DEVICES <= 32, "weft_task_t.room_waited holds a bit a device");

/* A task waiting for its inputs: held for a batch, or staged in and
 * launched once they are all in; step's return and *done. */
static int step_wait(weft_devmgr_t *m, weft_inflight_t *f, int *done)
{
    if (weft_devlaunch_inputs_arriving(f->task)) return 0;
    /* A gated task goes alone: its kernel waits for its pull. */
    if (!f->task->gate && weft_devbatch_body(m, f->task) != NULL) {
        f->phase = PHASE_READY;
        m->nheld++;
        return 1;
    }
    int rc = weft_devlaunch_stage_and_launch(m, f);
    if (rc != WEFT_SUCCESS && weft_devgate_closed(f->task)) {
        f->phase = PHASE_GATED; /* its end waits for the receive's */
        f->rc = rc;
    } else if (rc != WEFT_SUCCESS) {
        weft_devlaunch_finish_task(m, f->task, rc);
        *done = 1;
    }
    return 1;
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
    if (f->phase == PHASE_GATED) {
        if (weft_devgate_closed(f->task)) return 0;
        weft_devlaunch_finish_task(m, f->task, f->rc);
        *done = 1;
        return 1;
    }
    if (f->phase == PHASE_WAIT) return step_wait(m, f, done);
    int progress = weft_devlaunch_stage_landed(m, f);
    /* Launched ahead of a receive: it ends after the receive did. Its
     * kernel, queued behind the pull, often ends with it: the event is
     * polled meanwhile, so that the end follows the gate's opening without
     * one more query (a microsecond or two under MPS, on every move). */
    if (weft_devgate_closed(f->task)) {
        (void)weft_devlaunch_kernel_poll(m, f);
        return progress;
    }
    int rc;
    if (f->batch && f->batch->tasks[0] != f->task) {
        if (!f->batch->done) return progress; /* the batch's first task polls */
        rc = f->batch->rc;
    } else {
        rc = weft_devlaunch_kernel_outcome(m, f);
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
    if (f->has_stage_ev) dev->ops->event_destroy(dev, &f->stage_ev);
    weft_devlaunch_end(m, f, rc);
    weft_devlaunch_batch_release(f->batch);
    *done = 1;
    return 1;
}

static int progress_inflight(weft_devmgr_t *m)
{
    int progress = 0;
    weft_inflight_t *next;
    for (weft_inflight_t *f = weft_inflight_of(weft_list_first(&m->inflight)); f; f = next) {
        next = weft_inflight_next(m, f);
        int done;
        progress += step(m, f, &done);
        if (done) {
            weft_list_remove(&f->link);
            m->ninflight--;
            atomic_fetch_sub(&m->ctx->dev_inflight, 1);
            m->inflight_bytes -= f->zone_bytes;
            free(f);
        }
    }
    /* The tasks this pass found launchable and held for batches. */
    return progress + weft_devbatch_launch(m);
}

/* ---- the manager thread ------------------------------------------------- */

typedef struct mgr_state {
    weft_task_t *blocked;  /* waits for device memory */
    int defrag;            /* it did not fit with nothing else in flight */
    int starved;           /* blocked waits for memory (not for the in-flight cap) */
    int64_t blocked_since; /* while nothing else is in flight, or since pinned_low fell */
    int pinned_low;        /* the fewest copies held by others seen in this wait */
    int refit;             /* emptied again for blocked's own copies since a holder went */
    int yields;            /* polls by sched_yield since the last progress */
} mgr_state_t;

/* t waited device_room_wait_ms for room that copies held by others keep
 * taken. Those holders may wait for this very device (a send's copy stays
 * until the peer fetches it, which may be once the peer's own tasks ran,
 * and those may need what this device is to produce): t goes where
 * weft_devselect_instead says, said once per device. 0 when nowhere. */
static int move_elsewhere(weft_devmgr_t *m, weft_task_t *t)
{
    weft_context_t *ctx = m->ctx;
    t->room_waited |= 1u << m->dev->index;
    int k = weft_devselect_instead(ctx, t, m->dev->index);
    if (k < 0) return 0;
    weft_devgate_drop(m, t); /* its receive completed (keep_blocked): it goes as any task */
    if (!atomic_exchange(&m->told_held, 1))
        weft_log(WEFT_LOG_WARN, m->dev->index,
                 "task %s waited %g s (device_room_wait_ms) for room on %s that copies in use "
                 "elsewhere (sends that a peer has not fetched yet) kept taken: it runs on %s "
                 "instead, as does any task that waits that long there",
                 weft_task_name(t).text, (double)m->room_wait_ns / 1e9, m->dev->name,
                 k == 0 ? "the host" : ctx->devmgr[k]->dev->name);
    atomic_fetch_sub(&m->load_ns, (long long)t->est_ns);
    if (k > 0) {
        weft_devexec_queue(ctx, t, k);
        return 1;
    }
    t->device = 0;
    atomic_fetch_add(&ctx->host_load_ns, (long long)t->est_ns);
    weft_sched_push(ctx->sched, t, weft_sched_self());
    return 1;
}

/* All the zone holds may be the copies t's last try made, splitting its
 * free space (a copy someone held through the emptying went after it):
 * emptied once more, t fits (it fits an empty zone); 1 then. t waited
 * device_room_wait_ms before, then ran on the host, blamed on copies held
 * elsewhere (a stranger's block-sparse program on one rank, 1 run in 3).
 * Once, and again only after a holder came and went (the wait's clock,
 * which runs on, bounds the number): a zone that fills meanwhile has
 * another holder. */
static int own_split(weft_devmgr_t *m, mgr_state_t *s, weft_task_t *t, int pinned)
{
    if (pinned > 0 || s->refit || weft_zone_used(m->dev->zone) > weft_devcopy_task_resident(m, t))
        return 0;
    s->refit = 1;
    s->defrag = 1;
    return 1;
}

/* WEFT_AGAIN from stage-in: memory is pinned by tasks in flight. With
 * none in flight, the zone is emptied once (its own cached tiles may
 * split the free space); if the task still does not fit and nothing on
 * the device is held by anyone (a send, a peer's copy), nothing will ever
 * free room: it fails at once. Copies held elsewhere get a while, then
 * the task runs elsewhere when it can. Returns 1 to keep t waiting, 2
 * when t went elsewhere, 0 when it fails (logged). */
static int keep_blocked(weft_devmgr_t *m, mgr_state_t *s, weft_task_t *t)
{
    if (m->ninflight > 0) {
        s->blocked_since = 0;
        return 1;
    }
    int64_t now = weft_clock_ns();
    int pinned = weft_devcopy_pinned(m);
    /* Emptied once: later tries evict what they need themselves, and an
     * emptying at every poll of the wait dropped the task's own fresh
     * copies each time (thousands of counted evictions in 2 s). */
    if (s->blocked_since == 0) {
        s->blocked_since = now;
        s->pinned_low = pinned;
        s->defrag = 1;
        s->refit = 0;
        return 1;
    }
    /* A held copy let go (fewer held than ever in this wait: a peer fetched
     * a send) says the holders are moving, and the wait counts from it.
     * Copies held for slow peers (8 ranks on 2 cores) were let go one after
     * another 2.3-4 s into the wait, after a fixed 2 s had failed a task
     * that could run nowhere else. Only a new low counts (a copy busy at
     * one poll and not at the next is no release), so the wait stays
     * bounded: at most one while more than the copies held at its start. */
    if (pinned < s->pinned_low) {
        s->pinned_low = pinned;
        s->blocked_since = now;
    }
    if (pinned > 0) s->refit = 0; /* a holder came: once it goes, t may split the zone anew */
    if (own_split(m, s, t, pinned)) return 1;
    /* Zone memory can also be held outside the device's copy list (a tile
     * arriving from another rank into device memory, a copy another thread
     * is evicting): whatever is still allocated after the defrag may be
     * freed by its holder, so it gets the same while. Only a zone emptied
     * that still cannot hold the task fails at once. */
    int held = pinned > 0 || weft_zone_largest_free(m->dev->zone) < m->dev->zone_bytes;
    if (held && now - s->blocked_since < m->room_wait_ns) return 1;
    s->blocked_since = 0;
    s->defrag = 0;
    /* The holders may wait for this device: a send's peer fetches only once
     * its own tasks ran, and those may need what this device produces. */
    /* Launched ahead of its receive (devgate.c): it moves once that ended. */
    if (held && weft_devgate_closed(t)) return 1;
    if (held && move_elsewhere(m, t)) return 2;
    int before = (t->room_waited & ~(1u << m->dev->index)) != 0;
    char waited[96] = "";
    if (held)
        snprintf(waited, sizeof waited, "%s %g s (device_room_wait_ms)%s",
                 pinned ? ": its copies stayed in use for" : " after",
                 (double)m->room_wait_ns / 1e9, pinned ? ", none let go" : "");
    weft_log(WEFT_LOG_ERROR, m->dev->index,
             "task %s: its tiles do not fit in the free part of %s's zone (%zu of %zu "
             "bytes free) and nothing more can be evicted%s%s (raise device_memory_limit / "
             "device_memory_use%s)",
             weft_task_name(t).text, m->dev->name, weft_zone_largest_free(m->dev->zone),
             m->dev->zone_bytes, waited, before ? ", as on the device where it waited before" : "",
             held ? ", or device_room_wait_ms where peers are slow to fetch" : "");
    return 0;
}

/* A task sent to a device that failed fails at once, named, without
 * taking device memory. */
static int dead_device(weft_devmgr_t *m, const weft_task_t *t)
{
    (void)t; /* named by weft_devlaunch_finish_task */
    return weft_device_is_broken(m->dev) ? WEFT_ERR_DEVICE : WEFT_SUCCESS;
}

/* t's device memory: its flows' copies, pinned (with a record f to run
 * in). *wait: on WEFT_AGAIN, keep_blocked's answer, else 0. In t's span:
 * what fails it here (a device that failed, tiles that do not fit) is
 * its cause. */
static int take_memory(weft_devmgr_t *m, mgr_state_t *s, weft_task_t *t, const weft_inflight_t *f,
                       int *wait)
{
    weft_log_cause_t *outer = weft_log_cause_enter(&t->cause);
    int rc = f ? dead_device(m, t) : WEFT_ERR_NOMEM;
    if (rc == WEFT_SUCCESS) rc = weft_devcopy_task_fits(m, t);
    if (rc == WEFT_SUCCESS) rc = weft_devlaunch_pin_flows(m, t);
    /* t may be gone once it went elsewhere (2): nothing is logged after. */
    *wait = rc == WEFT_AGAIN ? keep_blocked(m, s, t) : 0;
    weft_log_cause_leave(outer);
    return rc;
}

/* f joins the tasks in flight: appended, so that events are polled in the
 * order the tasks started. */
static void inflight_add(weft_devmgr_t *m, weft_inflight_t *f)
{
    weft_list_push_back(&m->inflight, &f->link);
    m->ninflight++;
    atomic_fetch_add(&m->ctx->dev_inflight, 1);
}

static int start_tasks(weft_devmgr_t *m, mgr_state_t *s)
{
    int started = 0;
    while (m->ninflight < m->max_inflight) {
        weft_task_t *t = s->blocked ? s->blocked : weft_devpick_next(m);
        if (!t) break;
        s->blocked = NULL;
        s->starved = 0;
        if (s->defrag) {
            s->defrag = 0;
            int er = weft_devcopy_evict_all(m);
            (void)er; /* a failed write-back was logged; the task retries below */
        }
        size_t bytes;
        if (weft_devpick_past_budget(m, t, &bytes)) {
            s->blocked = t;
            break;
        }
        weft_inflight_t *f = calloc(1, sizeof *f);
        int wait;
        int rc = take_memory(m, s, t, f, &wait);
        if (wait == 1) {
            s->blocked = t;
            s->starved = 1;
            free(f);
            break;
        }
        if (rc != WEFT_SUCCESS && !f && weft_devgate_closed(t)) {
            s->blocked = t; /* no record to wait in for its receive: again later */
            break;
        }
        if (wait == 2) { /* it runs elsewhere */
            free(f);
            started++;
            continue;
        }
        started++;
        s->blocked_since = 0;
        if (rc != WEFT_SUCCESS && weft_devgate_closed(t)) {
            /* Its end waits for the receive's, in a record of its own. */
            *f = (weft_inflight_t){.task = t, .phase = PHASE_GATED};
            f->rc = rc == WEFT_AGAIN ? WEFT_ERR_DEVMEM : rc;
            inflight_add(m, f);
            continue;
        }
        if (rc != WEFT_SUCCESS) {
            free(f);
            weft_devlaunch_finish_task(m, t, rc == WEFT_AGAIN ? WEFT_ERR_DEVMEM : rc);
            continue;
        }
        atomic_store_explicit(&t->dev_started, 1, memory_order_relaxed);
        f->task = t;
        f->phase = PHASE_WAIT;
        f->zone_bytes = bytes;
        m->inflight_bytes += bytes;
        inflight_add(m, f);
    }
    return started;
}

/* Sleeps until a task arrives (nothing in flight) or for a growing while
 * (events pending: the device does not call back). Returns 0 to stop. */
static int idle_wait(weft_devmgr_t *m, mgr_state_t *s)
{
    pthread_mutex_lock(&m->lock);
    int idle = m->ninflight == 0 && !s->blocked && weft_devahead_inflight(m) == 0;
    if (idle) {
        /* A new task often follows soon (a successor, a tile just
         * received): yield before sleeping, since a wake-up from the
         * condition costs tens of microseconds (more from a deep idle
         * state of the core). With a core of its own the manager yields
         * for a time, not a count: 200 yields (0.7 us each on the CI VM,
         * less on bare metal) ended before the next task of a ping-pong
         * between ranks came back (a move each way and the peer's task),
         * so every move paid that wake-up; a millisecond covers a round
         * trip of 64 MiB tiles. On a core shared with workers the short
         * spell stays: every yield there competes with them. */
        int timed = atomic_load_explicit(&m->ctx->devmgr_own_core, memory_order_relaxed);
        int64_t until = timed ? weft_clock_ns() + IDLE_SPIN_NS : 0;
        for (int k = 0; !m->stop && weft_heap_empty(&m->ready); k++) {
            if (timed ? weft_clock_ns() >= until : k >= IDLE_SPIN_YIELDS) break;
            pthread_mutex_unlock(&m->lock);
            sched_yield();
            pthread_mutex_lock(&m->lock);
        }
        while (!m->stop && weft_heap_empty(&m->ready)) pthread_cond_wait(&m->cond, &m->lock);
    } else if (s->yields < IDLE_YIELD_CREDIT ||
               atomic_load_explicit(&m->ctx->devmgr_own_core, memory_order_relaxed)) {
        /* Work in flight: poll again soon. A timed sleep this short would
         * last the kernel's timer slack (about 50 us) instead: yield. With
         * a core of its own the manager never sleeps while work is in
         * flight: a sleep there frees a core nobody else was given, and
         * notices the end of every kernel (and so the release of its
         * successors: a send to another rank, the next task) up to
         * IDLE_WAIT_NS plus the slack late. */
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
        /* After the ready tasks took their room: copies ahead for the next,
         * none while a task waits for memory (they would pin what it needs). */
        progress += weft_devahead_pass(m, !s.starved);
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
    weft_devexec_queue(ctx, t, dev);
    return 1;
}

void weft_devexec_queue(weft_context_t *ctx, weft_task_t *t, int dev)
{
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
}

void weft_devexec_host_done(weft_context_t *ctx, weft_task_t *t)
{
    if (ctx->ndevices > 0 && t->est_ns) atomic_fetch_sub(&ctx->host_load_ns, (long long)t->est_ns);
}

static void mgr_free(weft_devmgr_t *m)
{
    weft_devahead_stop(m);
    weft_heap_fini(&m->ready);
    pthread_cond_destroy(&m->cond);
    pthread_mutex_destroy(&m->lock);
    pthread_mutex_destroy(&m->lru_lock);
    free(m);
}

/* One track for the manager, then one per stream of the device (with
 * lanes over it: a stream's copies and kernels are drawn from their
 * enqueue, so several overlap). */
static int trace_tracks(weft_context_t *ctx, weft_device_t *dev, weft_devmgr_t *m)
{
    char name[64];
    snprintf(name, sizeof name, "%s manager", dev->name);
    int first = weft_trace_track(ctx->trace, name);
    for (int s = 0; s < dev->nstreams; s++) {
        snprintf(name, sizeof name, "%s stream %d%s", dev->name, s,
                 s == WEFT_STREAM_IN         ? " (in)"
                 : s == WEFT_STREAM_OUT      ? " (out)"
                 : s == WEFT_STREAM_PREFETCH ? " (prefetch)"
                 : s == dev->urgent_stream   ? " (urgent)"
                                             : "");
        int rc = weft_trace_track(ctx->trace, name);
        (void)rc; /* consecutive ids: first + 1 + s */
        if (s < WEFT_MAX_STREAMS) weft_trace_lanes_init(&m->lanes[s], first + 1 + s, name);
    }
    return first;
}

static int mgr_start(weft_context_t *ctx, weft_device_t *dev)
{
    weft_devmgr_t *m = calloc(1, sizeof *m);
    if (!m) return WEFT_ERR_NOMEM;
    m->ctx = ctx;
    m->dev = dev;
    m->trace_track = trace_tracks(ctx, dev, m);
    m->inflight_per_stream = (int)weft_params_int(ctx->params, "device_inflight");
    m->prefetch = (int)weft_params_int(ctx->params, "device_prefetch");
    m->prefetch_share = (int)weft_params_int(ctx->params, "device_prefetch_share");
    m->evict_next_use = strcmp(weft_params_str(ctx->params, "device_evict"), "next_use") == 0;
    m->batch_max = (int)weft_params_int(ctx->params, "device_batch");
    m->batch_elems = weft_params_int(ctx->params, "device_batch_elems");
    m->room_wait_ns = weft_params_int(ctx->params, "device_room_wait_ms") * 1000000LL;
    m->max_inflight = m->inflight_per_stream * (dev->nstreams - WEFT_STREAM_EXEC0);
    pthread_mutex_init(&m->lock, NULL);
    pthread_cond_init(&m->cond, NULL);
    pthread_mutex_init(&m->lru_lock, NULL);
    weft_list_init(&m->lru);
    weft_list_init(&m->inflight);
    int ahead = (int)weft_params_int(ctx->params, "device_prefetch_ahead");
    if (weft_heap_init(&m->ready, 64) != 0 || weft_devahead_start(m, ahead) != WEFT_SUCCESS) {
        mgr_free(m);
        return WEFT_ERR_NOMEM;
    }
    dev->mgr = m;
    ctx->devmgr[dev->index] = m;
    if (weft_body_thread_create(&m->thread, mgr_main, m) != 0) {
        ctx->devmgr[dev->index] = NULL;
        mgr_free(m);
        return WEFT_ERR_NOMEM;
    }
    return WEFT_SUCCESS;
}

static void mgr_stop(weft_devmgr_t *m)
{
    if (m->joined) return;
    pthread_mutex_lock(&m->lock);
    m->stop = 1;
    pthread_cond_signal(&m->cond);
    pthread_mutex_unlock(&m->lock);
    /* Its own body ended MPI (runtime/mpiend.c): joined by weft_fini's
     * stop, as a worker is (sched/sched.c). */
    if (pthread_equal(m->thread, pthread_self())) return;
    pthread_join(m->thread, NULL);
    m->joined = 1;
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
    weft_devexec_hostmem_open(ctx);
    return WEFT_SUCCESS;
}

void weft_devexec_halt(weft_context_t *ctx)
{
    for (int i = 1; ctx->devices && i <= ctx->devices->n; i++)
        if (ctx->devmgr[i]) mgr_stop(ctx->devmgr[i]);
}

void weft_devexec_stop(weft_context_t *ctx)
{
    weft_devices_t *ds = ctx->devices;
    if (!ds) return;
    int n = ds->n;
    for (int i = 1; i <= n; i++)
        if (ctx->devmgr[i]) mgr_stop(ctx->devmgr[i]);
    /* The listed tasks' last references may free data, and their device
     * copies go back to the zones: before the devices close. */
    for (int i = 1; i <= n; i++)
        if (ctx->devmgr[i]) weft_devahead_stop(ctx->devmgr[i]);
    if (ctx->show_stats) weft_devstats_print(ctx);
    weft_context_keep_device_counters(ctx);
    /* Unpinned while the devices are open; its slabs live on with the
     * copies still in them. */
    weft_hostmem_close(ctx->hostmem);
    ctx->hostmem = NULL;
    weft_host_unpin_all(ctx);
    weft_devices_close(ds);
    for (int i = 1; i <= n; i++) {
        if (ctx->devmgr[i]) mgr_free(ctx->devmgr[i]);
        ctx->devmgr[i] = NULL;
    }
    ctx->devices = NULL;
    ctx->ndevices = 0;
}
