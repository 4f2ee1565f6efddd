/* The sending half of a rendezvous on the engine thread: the SEND task
 * finds the copy it reads, announces the tile (eager: the bytes inside the
 * activation) and, for a rendezvous, waits in the table for the GET.
 *
 * The engine serves every transfer of its rank, so nothing here waits: a
 * tile that must reach host memory first (GPU-aware sends off) comes there
 * by a copy the engine polls (pull_landed), and a host copy that is busy
 * (a write-back landing, a task writing it) puts the SEND on the deferred
 * list, tried again on each turn (weft_comm__start_deferred). */
#include <stdlib.h>
#include <string.h>

#include "comm/comm_internal.h"
#include "trace/trace.h"
#include "util/cols.h"
#include "util/log.h"

/* send_copy's third outcome: the tile is on its way to host memory. */
#define SEND_PULLING 2

/* The copy a send may read where it is: in host memory, or in device
 * memory when GPU-aware sends are on and d has no stage function.
 * WEFT_AGAIN: it must come to host (through its stage-out function). */
static int direct_copy(weft_comm_t *c, weft_data_t *d, weft_data_copy_t **out)
{
    weft_data_lock(d);
    weft_data_copy_t *cp = weft_data_newest_copy_locked(d, 0);
    /* A copy on a device that failed cannot be read (a GPU with a sticky
     * error): the send fails instead of moving whatever its memory holds. */
    if (cp && cp->device > 0 && cp->device <= c->cfg.ndevices &&
        weft_device_is_broken(c->cfg.devices[cp->device])) {
        weft_data_unlock(d);
        weft_device_log_lost(c->cfg.devices[cp->device], (unsigned long long)d->key, d->version);
        return WEFT_ERR_DEVICE;
    }
    int ok = cp && (cp->device == 0 || (c->cfg.gpu_aware_send && weft_comm__device_direct(d)));
    if (ok) weft_data_copy_reader_acquire_locked(cp);
    weft_data_unlock(d);
    if (!cp) return WEFT_ERR_INTERNAL;
    *out = ok ? cp : NULL;
    return ok ? WEFT_SUCCESS : WEFT_AGAIN;
}

static void send_announce(weft_comm_t *c, weft_task_t *t);
static void send_failed(weft_comm_t *c, weft_task_t *t, int status, const char *what);

/* The pull of t's tile to host memory is over: the send goes on from the
 * host copy, or fails (both ranks name it: the activation says failed). */
static void pull_landed(weft_comm_t *c, void *a, void *b)
{
    weft_task_t *t = a;
    weft_comm_block_t *blk = weft_comm__block(t);
    weft_data_copy_t *h = NULL;
    int rc =
        c->cfg.host_pull_end(c->cfg.copy_arg, t->flow[0].data, &blk->pull, blk->x.dev_status, &h);
    blk->x.dev_status = WEFT_SUCCESS;
    if (rc != WEFT_SUCCESS) {
        send_failed(c, t, rc, "bringing its tile from device memory to host memory failed");
        return;
    }
    blk->x.copy = h;
    send_announce(c, t);
}

/* The copy t's send reads, in blk->x.copy with a reader taken: now
 * (WEFT_SUCCESS), once a pull to host lands (SEND_PULLING: pull_landed
 * goes on), or later (WEFT_AGAIN: the host copy is busy). A failure sets
 * *what. */
static int send_copy(weft_comm_t *c, weft_task_t *t, const char **what)
{
    weft_comm_block_t *blk = weft_comm__block(t);
    weft_data_t *d = t->flow[0].data;
    int rc = direct_copy(c, d, &blk->x.copy);
    *what = rc == WEFT_ERR_DEVICE ? "its newest version is lost with the device that held it"
                                  : "no copy at the newest version";
    if (rc != WEFT_AGAIN) return rc;
    if (!c->cfg.host_pull) return WEFT_ERR_INTERNAL;
    *what = "bringing its tile from device memory to host memory failed";
    weft_data_copy_t *h = NULL;
    rc = c->cfg.host_pull(c->cfg.copy_arg, d, &blk->pull, &h);
    if (rc != WEFT_SUCCESS || h) {
        blk->x.copy = h;
        return rc;
    }
    atomic_fetch_add(&c->n_send_pulls, 1);
    weft_comm_pull_t *p = &blk->pull;
    rc = weft_comm__wait_device(c, p->dev, p->ev, pull_landed, t, NULL, &blk->x.dev_status);
    if (rc == WEFT_SUCCESS) return SEND_PULLING;
    /* No room to poll it: the copy is enqueued and its reader held, so it
     * must be seen over here (bounded by that one copy). */
    int sync = p->dev->ops->event_sync(p->dev, &p->ev);
    p->dev->ops->event_destroy(p->dev, &p->ev);
    return c->cfg.host_pull_end(c->cfg.copy_arg, d, p, sync, &blk->x.copy);
}

void weft_comm__task_ends(weft_comm_t *c, void *a, void *b)
{
    weft_comm__task_done(c, a, (int)(intptr_t)b);
}

/* A SEND that cannot send its tile (its version was not produced, or a
 * failure here): the receiver gets an activation marked failed, and the
 * SEND ends with status once that left. */
static void send_failed(weft_comm_t *c, weft_task_t *t, int status, const char *what)
{
    weft_comm_block_t *blk = weft_comm__block(t);
    if (blk->x.copy) {
        weft_data_t *d = t->flow[0].data;
        weft_data_lock(d);
        weft_data_copy_reader_release_locked(blk->x.copy);
        weft_data_unlock(d);
        blk->x.copy = NULL;
    }
    if (what)
        weft_error("send of data %llu v%u to rank %d: %s (%s): the receive there fails",
                   (unsigned long long)t->flow[0].data->key, blk->act.version, blk->act.peer, what,
                   weft_strerror(status));
    /* failed: the version was not produced, nothing follows */
    weft_comm__send_notice(c, t, WEFT_COMM_MSG_ACTIVATE, 1, 0, weft_comm__task_ends, t,
                           (void *)(intptr_t)status);
}

static void eager_sent(weft_comm_t *c, void *a, void *b)
{
    free(b);
    weft_comm__xfer_send_finished(c, a);
}

static weft_comm_msg_t *new_activation(weft_comm_t *c, const weft_task_t *t, int eager)
{
    const weft_data_t *d = t->flow[0].data;
    weft_comm_msg_t *m = weft_comm__alloc(c, sizeof *m + (eager ? d->bytes : 0));
    if (!m) return NULL;
    *m = (weft_comm_msg_t){.type = WEFT_COMM_MSG_ACTIVATE,
                           .src = c->rank,
                           .key = d->key,
                           .version = ((const weft_comm_action_t *)t->action)->version,
                           .rows = d->rows,
                           .cols = d->cols,
                           .elem = (int32_t)d->elem,
                           .eager = eager,
                           .bytes = (int64_t)d->bytes};
    if (!eager) return m;
    const weft_data_copy_t *cp = weft_comm__block((weft_task_t *)t)->x.copy;
    weft_copy_cols(m + 1, d->rows, cp->ptr, cp->ld, d->rows, d->cols, d->elem);
    return m;
}

/* t's copy is in hand: the activation leaves (with the bytes when eager;
 * otherwise the send waits in the table for the GET). */
static void send_announce(weft_comm_t *c, weft_task_t *t)
{
    weft_comm_block_t *blk = weft_comm__block(t);
    weft_comm_action_t *act = &blk->act;
    weft_data_t *d = t->flow[0].data;
    weft_comm_xfer_t *x = &blk->x;
    act->xfer = x;
    t->flow[0].copy = x->copy;
    /* Tiles in device memory always take the rendezvous: the receiver
     * picks a transport that reads them where they are. */
    int eager = x->copy->device == 0 && d->bytes <= c->cfg.eager_limit;
    x->rendezvous = !eager;
    weft_comm_msg_t *m = new_activation(c, t, eager);
    if (!m) {
        send_failed(c, t, WEFT_ERR_NOMEM, "no memory for the activation");
        return;
    }
    weft_comm__transport_describe(c, x->copy, m);
    int rc;
    if (eager) {
        rc = weft_comm__isend(c, m, (int)weft_comm__msg_bytes(m), MPI_BYTE, act->peer,
                              WEFT_COMM_CTRL_TAG, eager_sent, x, m);
    } else {
        blk->p.task = t;
        weft_comm__table_put(c, &blk->p, WEFT_COMM_PEND_SEND, act->peer, d->key, act->version);
        rc = weft_comm__send_ctrl(c, m, act->peer);
        if (rc != WEFT_SUCCESS) weft_comm__table_remove(c, &blk->p);
    }
    if (rc != WEFT_SUCCESS) {
        if (eager) free(m);
        send_failed(c, t, rc, "posting the activation failed");
        return;
    }
    atomic_fetch_add(&c->n_act, 1);
    if (eager) atomic_fetch_add(&c->n_eager, 1); /* its bytes: once sent (xfer.c) */
}

/* One try at t's send. Returns 0 when it went on (sent, pulling or
 * failed), WEFT_AGAIN when it is deferred again. */
static int send_try(weft_comm_t *c, weft_task_t *t)
{
    weft_comm_block_t *blk = weft_comm__block(t);
    const char *what = NULL;
    int rc = send_copy(c, t, &what);
    if (rc == SEND_PULLING) return 0;
    if (rc == WEFT_AGAIN) {
        /* Counted once a send, however many turns it waits. */
        if (!blk->p.put_off) atomic_fetch_add(&c->n_send_retries, 1);
        blk->p.put_off = 1;
        if (weft_vec_push(&c->deferred, &t) == WEFT_SUCCESS) return WEFT_AGAIN;
        rc = WEFT_ERR_NOMEM;
        what = "its host copy is busy and no memory is left to try again later";
    }
    if (rc != WEFT_SUCCESS) {
        blk->x.copy = NULL;
        send_failed(c, t, rc, what);
        return 0;
    }
    send_announce(c, t);
    return 0;
}

void weft_comm__handle_send(weft_comm_t *c, weft_task_t *t)
{
    weft_comm_block_t *blk = weft_comm__block(t);
    if (t->cancelled) {
        send_failed(c, t, WEFT_ERR_CANCELLED, NULL);
        return;
    }
    blk->x.t = t;
    blk->x.peer = blk->act.peer;
    blk->x.t0 = weft_trace_stamp(c->cfg.trace);
    (void)send_try(c, t);
}

int weft_comm__start_deferred(weft_comm_t *c)
{
    /* Each deferred send gets one try a turn, in the order they came: the
     * n first are this turn's, a send deferred again goes behind them. */
    size_t n = c->deferred.n;
    int started = 0;
    for (size_t k = 0; k < n; k++) {
        weft_task_t *t = *(weft_task_t **)weft_vec_at(&c->deferred, 0);
        weft_vec_remove(&c->deferred, 0);
        if (send_try(c, t) != WEFT_AGAIN) started = 1;
    }
    return started;
}
