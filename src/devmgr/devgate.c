/* Launch ahead of a landing: a tile pulled from another rank into a device
 * copy (the ipc transport) is on that device's copy stream once its pull
 * is enqueued; a task on the same device whose only missing input is that
 * receive can then go to the device manager at once and queue its kernel
 * behind the pull (a stream wait on an event recorded after it), instead
 * of waiting for the comm thread to see the pull land, the receive to
 * complete, the task to be released and the manager to wake, pick and
 * launch it: those steps then overlap the pull.
 *
 * The receive keeps its meaning: it completes when the bytes are in
 * (weft_data_copied_locked), and the task's gate opens then, through the
 * task's ready call (weft_exec_ready -> weft_devgate_pass). Until it opens
 * the task's copy of that tile stays UNDER, so nothing else reads it; the
 * task may run, but its end (publication of what it wrote, release of its
 * successors) waits for the gate, so versions are published in order and
 * a failed receive fails the task. */
#include <stdio.h>
#include <stdlib.h>

#include "devmgr/devbatch.h"
#include "devmgr/devlaunch.h"
#include "stf/failure.h"
#include "stf/home.h"
#include "util/log.h"

struct weft_devgate {
    atomic_int open;        /* the receive completed (failed or not) */
    weft_data_copy_t *copy; /* the copy the tile lands in, on the task's device */
    weft_event_t ev;        /* on the device's copy stream, after the pull */
};

/* Whether s waits for `recv` alone, may run on `dev` and would be placed
 * there: only then can its kernel be queued behind the pull into c. */
static int can_go_ahead(weft_context_t *ctx, weft_task_t *s, const weft_data_copy_t *c)
{
    int dev = c->device;
    if (s->kind != WEFT_TASK_BODY || s->gate) return 0;
    /* 1: the receive is its last predecessor (an edge counts once per
     * flow; with the insertion guard still held it is 2 or more). */
    if (atomic_load_explicit(&s->ndeps, memory_order_acquire) != 1) return 0;
    /* A lost input other than the arriving one (a failed task wrote it):
     * s will be cancelled and must not run. Those inputs are final once the
     * receive is s's last predecessor; the arriving one is not (a lost mark
     * on it goes when the new version lands). */
    if (weft_failure_inputs_lost(s, c->data)) return 0;
    /* A batch body's launch stages its tasks' inputs itself. */
    if (!weft_home_body(ctx, s, dev) || weft_devbatch_body(ctx->devmgr[dev], s)) return 0;
    return weft_devselect(ctx, s) == dev;
}

static int gate_one(weft_context_t *ctx, weft_task_t *s, weft_data_copy_t *c)
{
    weft_devmgr_t *m = ctx->devmgr[c->device];
    weft_devgate_t *g = calloc(1, sizeof *g);
    if (!g) return 0;
    g->copy = c;
    if (weft_device_event_record(m->dev, WEFT_STREAM_IN, &g->ev) != WEFT_SUCCESS) {
        free(g);
        return 0; /* the usual path: released when the receive completes */
    }
    s->gate = g;
    atomic_fetch_add(&m->dev->stats.launched_ahead, 1);
    weft_devexec_queue(ctx, s, c->device);
    return 1;
}

int weft_devgate_ahead(weft_context_t *ctx, weft_task_t *recv, weft_data_copy_t *c)
{
    if (c->device <= 0 || !ctx->devmgr[c->device]) return 0;
    /* Candidates first, under the receive's lock (no edge is added while it
     * is held); the receive cannot complete meanwhile: this thread
     * completes it. */
    weft_task_t *cand[4];
    int n = 0;
    weft_spin_lock(&recv->lock);
    weft_task_t **succ = recv->succ.data;
    for (size_t i = 0; i < recv->succ.n && n < 4; i++)
        if (succ[i]->kind == WEFT_TASK_BODY && !succ[i]->gate) cand[n++] = succ[i];
    weft_spin_unlock(&recv->lock);
    int gated = 0;
    for (int i = 0; i < n; i++)
        if (can_go_ahead(ctx, cand[i], c)) gated += gate_one(ctx, cand[i], c);
    return gated;
}

void weft_devgate_pass(weft_context_t *ctx, weft_task_t *t)
{
    /* Its other inputs were good when it was gated (can_go_ahead), so
     * a lost one now is the tile it was queued behind: the pull was
     * enqueued, and only the device can have failed it. The task's kernel may have run on what
     * the copy held and written its outputs in place: the device's memory
     * is not to be trusted any more, as after a sticky error (on a GPU the
     * failed pull is one already). The task ends cancelled, publishing
     * nothing; versions only that device held are lost, and named. */
    if (weft_failure_check_inputs(t)) {
        weft_device_t *dev = ctx->devices->dev[t->device];
        char why[320];
        snprintf(why, sizeof why,
                 "task %s was queued on it behind the pull of a tile from another rank, and "
                 "the pull failed",
                 weft_task_name(t).text);
        if (!weft_device_is_broken(dev)) weft_device_set_broken(dev, why);
    }
    atomic_store_explicit(&t->gate->open, 1, memory_order_release);
}

int weft_devgate_closed(const weft_task_t *t)
{
    return t->gate && !atomic_load_explicit(&t->gate->open, memory_order_acquire);
}

int weft_devgate_landing(const weft_task_t *t, const weft_data_copy_t *c)
{
    return weft_devgate_closed(t) && t->gate->copy == c;
}

int weft_devgate_wait(weft_devmgr_t *m, weft_task_t *t, int stream)
{
    return m->dev->ops->stream_wait(m->dev, stream, &t->gate->ev);
}

void weft_devgate_drop(weft_devmgr_t *m, weft_task_t *t)
{
    if (!t->gate) return;
    m->dev->ops->event_destroy(m->dev, &t->gate->ev);
    free(t->gate);
    t->gate = NULL;
}
