/* The control plane on the engine thread: the control messages (activation,
 * GET, DONE, SKIP, REJECT, CANCEL, ABORT) and the receiving half of a rendezvous,
 * the RECV task that fetches a tile, paired with the activation that the
 * SEND task of its sender announced (send.c) through the rendezvous table
 * (table.c). The bytes move in xfer.c and the transports. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm_internal.h"
#include "trace/trace.h"
#include "util/ending.h"
#include "util/log.h"

weft_comm_action_t *weft_comm_action_new(void)
{
    weft_comm_block_t *b = calloc(1, sizeof *b);
    return b ? &b->act : NULL;
}

void weft_comm__task_done(weft_comm_t *c, weft_task_t *t, int status)
{
    int lander = 0;
    weft_comm_arrival_t *a = t->kind == WEFT_TASK_RECV ? weft_comm__arrival_of(t, &lander) : NULL;
    c->cfg.done(c->cfg.done_arg, t, status);
    /* After t's end (its bytes published): the members of its version
     * that waited for them go on. */
    if (a) weft_comm__arrival_ended(c, a, lander, status);
}

int weft_comm__xfer_take_tags(weft_comm_t *c, weft_comm_xfer_t *x, int n)
{
    /* One range a transfer: its start is what it gives back. */
    assert(!x->tags_held);
    x->tags_held = 1;
    return weft_comm__tags_take(&c->tags, n, &x->tags_v);
}

/* ---- control messages ------------------------------------------------------ */

static void on_ctrl(weft_comm_t *c, void *a, void *b);

static int post_ctrl_recv(weft_comm_t *c, int slot)
{
    weft_comm_ctrl_slot_t *s = &c->ctrl[slot];
    return weft_comm__irecv_ctrl(c, s->buf, (int)s->bytes, on_ctrl, s);
}

int weft_comm__ctrl_start(weft_comm_t *c)
{
    for (int i = 0; i < WEFT_COMM_NCTRL; i++) {
        c->ctrl[i].bytes = sizeof(weft_comm_msg_t) + c->cfg.eager_limit;
        c->ctrl[i].buf = malloc(c->ctrl[i].bytes);
        if (!c->ctrl[i].buf) {
            /* Named: the engine's start read "MPI error" for it. */
            weft_error("comm: out of host memory for the %d control buffers of %zu bytes each "
                       "(comm_eager_limit %zu, plus a header)",
                       WEFT_COMM_NCTRL, c->ctrl[i].bytes, (size_t)c->cfg.eager_limit);
            return WEFT_ERR_NOMEM;
        }
        int rc = post_ctrl_recv(c, i);
        if (rc != WEFT_SUCCESS) return rc;
    }
    return WEFT_SUCCESS;
}

/* A slot whose receive could not be posted is marked by bytes' top bit
 * and tried again on the next turns: control messages keep flowing
 * through the other slots meanwhile. */
#define CTRL_IDLE ((size_t)1 << (sizeof(size_t) * 8 - 1))

void weft_comm__ctrl_repost(weft_comm_t *c)
{
    for (int i = 0; i < WEFT_COMM_NCTRL && c->ctrl_reposts > 0; i++) {
        if (!(c->ctrl[i].bytes & CTRL_IDLE)) continue;
        c->ctrl[i].bytes &= ~CTRL_IDLE;
        if (post_ctrl_recv(c, i) == WEFT_SUCCESS)
            c->ctrl_reposts--;
        else
            c->ctrl[i].bytes |= CTRL_IDLE;
    }
}

void weft_comm__ctrl_stop(weft_comm_t *c)
{
    MPI_Request *reqs = c->reqs.data;
    weft_comm_req_cb_t *cbs = c->cbs.data;
    for (size_t i = 0; i < c->reqs.n; i++) {
        if (cbs[i].fn != on_ctrl || reqs[i] == MPI_REQUEST_NULL) continue;
        MPI_Cancel(&reqs[i]);
        MPI_Wait(&reqs[i], MPI_STATUS_IGNORE);
    }
    for (int i = 0; i < WEFT_COMM_NCTRL; i++) free(c->ctrl[i].buf);
}

void weft_comm__free_msg(weft_comm_t *c, void *a, void *b) { free(a); }

size_t weft_comm__msg_bytes(const weft_comm_msg_t *m)
{
    return sizeof *m + (m->type == WEFT_COMM_MSG_ACTIVATE && m->eager ? (size_t)m->bytes : 0);
}

int weft_comm__send_ctrl(weft_comm_t *c, weft_comm_msg_t *m, int dest)
{
    int rc = weft_comm__isend(c, m, (int)weft_comm__msg_bytes(m), MPI_BYTE, dest,
                              WEFT_COMM_CTRL_TAG, weft_comm__free_msg, m, NULL);
    if (rc != WEFT_SUCCESS) free(m);
    return rc;
}

static const char *msg_name(int type)
{
    static const char *names[] = {"?",      "activation", "GET",  "DONE",     "REJECT",
                                  "CANCEL", "ABORT",      "SKIP", "LINK_DOWN"};
    return type > 0 && type <= WEFT_COMM_MSG_LINK_DOWN ? names[type] : "?";
}

void weft_comm__send_notice(weft_comm_t *c, weft_task_t *t, int type, int failed, int tag,
                            weft_comm_cb_fn cb, void *a, void *b)
{
    weft_comm_block_t *blk = weft_comm__block(t);
    const weft_data_t *d = t->flow[0].data;
    weft_comm_msg_t *m = &blk->notice;
    *m = (weft_comm_msg_t){.type = type,
                           .src = c->rank,
                           .key = d->key,
                           .version = blk->act.version,
                           .failed = failed,
                           .tag = tag};
    char what[72];
    snprintf(what, sizeof what, "the %s of data %llu v%u", msg_name(type),
             (unsigned long long)d->key, blk->act.version);
    if (weft_comm__isend_ctrl_owed(c, m, (int)sizeof *m, blk->act.peer, what, cb, a, b) ==
        WEFT_SUCCESS)
        return;
    weft_error("comm: could not send %s to rank %d (no memory to post it again): that rank is "
               "not told and may wait for it",
               what, blk->act.peer);
    cb(c, a, b);
}

void weft_comm__send_link_down(weft_comm_t *c, int peer, int mode, int my_sends)
{
    /* Freed once sent: the engine may close the transport first. */
    weft_comm_msg_t *m = weft_comm__alloc(c, sizeof *m);
    char what[72];
    snprintf(what, sizeof what, "the LINK_DOWN of its %s link", weft_comm__transport_name(c, mode));
    if (m) {
        *m = (weft_comm_msg_t){
            .type = WEFT_COMM_MSG_LINK_DOWN, .src = c->rank, .mode = mode, .tag = my_sends};
        if (weft_comm__isend_ctrl_owed(c, m, (int)sizeof *m, peer, what, weft_comm__free_msg, m,
                                       NULL) == WEFT_SUCCESS)
            return;
        free(m);
    }
    weft_error("comm: could not tell rank %d that this rank gave up its %s link with it (no "
               "memory): its transfers on that link may wait for ever",
               peer, weft_comm__transport_name(c, mode));
}

/* LINK_DOWN: the peer gave up its end of a link; this end follows. */
static void on_link_down(weft_comm_t *c, const weft_comm_msg_t *m)
{
    if (weft_comm__transport_peer_down(c, m->mode, m->src, m->tag) != WEFT_SUCCESS)
        weft_error("comm: LINK_DOWN from rank %d for transport %d, which this rank does not have",
                   m->src, m->mode);
}

/* ---- sending side: the replies to an activation (send.c sends it) ---------- */

/* The send that waits for reply m (GET, DONE, SKIP, REJECT or CANCEL), taken out
 * of the table; NULL when this rank never announced what m names. */
static weft_comm_xfer_t *waiting_send(weft_comm_t *c, const weft_comm_msg_t *m)
{
    weft_comm_pending_t *p =
        weft_comm__table_take(c, WEFT_COMM_PEND_SEND, m->src, m->key, m->version);
    if (!p) {
        weft_error("%s from rank %d for data %llu v%u that this rank never announced",
                   msg_name(m->type), m->src, (unsigned long long)m->key, m->version);
        return NULL;
    }
    return &weft_comm__block(p->task)->x;
}

/* GET: the receiver is ready; the transport it names sends the bytes. */
static void on_get(weft_comm_t *c, const weft_comm_msg_t *m)
{
    weft_comm_xfer_t *x = waiting_send(c, m);
    if (x) weft_comm__transport_send_start(c, x, m);
}

/* DONE (ipc): the receiver pulled the bytes itself; the send is over. */
static void on_done(weft_comm_t *c, const weft_comm_msg_t *m)
{
    weft_comm_xfer_t *x = waiting_send(c, m);
    if (!x) return;
    x->pull_failed = m->failed != 0;
    x->mode = x->counter = WEFT_TRANSPORT_IPC; /* for the trace */
    weft_comm__xfer_send_finished(c, x);
}

/* SKIP: the receiver's rank has this version from another rank (a graph
 * passed it there twice); the send is over, nothing moved. */
static void on_skip(weft_comm_t *c, const weft_comm_msg_t *m)
{
    weft_comm_xfer_t *x = waiting_send(c, m);
    if (!x) return;
    x->skipped = 1;
    weft_comm__xfer_send_finished(c, x);
}

/* REJECT (shape mismatch) or CANCEL (the receive failed there, which
 * reports it): the receiver will not fetch, the send fails. */
static void on_refused(weft_comm_t *c, const weft_comm_msg_t *m)
{
    weft_comm_xfer_t *x = waiting_send(c, m);
    if (!x) return;
    int rejected = m->type == WEFT_COMM_MSG_REJECT;
    if (rejected)
        weft_error("rank %d rejected data %llu v%u (shape mismatch): send failed", m->src,
                   (unsigned long long)m->key, m->version);
    x->status = rejected ? WEFT_ERR_INVALID : WEFT_ERR_CANCELLED;
    weft_comm__xfer_send_finished(c, x);
}

/* ABORT: the sender failed after our GET; the receives posted for the
 * bytes are cancelled and the receive ends failed. */
static void on_abort(weft_comm_t *c, const weft_comm_msg_t *m)
{
    weft_comm_pending_t *p =
        weft_comm__table_take(c, WEFT_COMM_PEND_FETCH, m->src, m->key, m->version);
    if (!p) return; /* the bytes were all in already */
    weft_comm_xfer_t *x = &weft_comm__block(p->task)->x;
    x->fetch_listed = 0;
    if (x->status == WEFT_SUCCESS) x->status = WEFT_ERR_CANCELLED;
    weft_comm__cancel_recvs(c, x);
    /* An operation queued on a link (nccl) is no MPI request: only giving
     * up this end of the link ends it, and the sender's numbering on the
     * link is broken anyway. */
    (void)weft_comm__transport_peer_down(c, x->mode, m->src, 1); /* AUTO (host): none */
}

/* ---- receiving side ------------------------------------------------------------ */

static int shape_matches(weft_comm_t *c, const weft_data_t *d, const weft_comm_msg_t *m)
{
    if (m->rows == d->rows && m->cols == d->cols && (size_t)m->elem == d->elem) return 1;
    weft_error("rejected data %llu v%u from rank %d: it is %d x %d of %d-byte elements, this "
               "rank declared %d x %d of %zu-byte elements",
               (unsigned long long)m->key, m->version, m->src, m->rows, m->cols, m->elem, d->rows,
               d->cols, d->elem);
    atomic_fetch_add(&c->n_rejected, 1);
    return 0;
}

/* A RECV that ends before fetching: a rendezvous sender is told (REJECT
 * or CANCEL) so that it does not wait for a GET, then t ends. */
static void recv_failed(weft_comm_t *c, weft_task_t *t, int rendezvous, int reply, int status,
                        const char *what)
{
    weft_comm_block_t *blk = weft_comm__block(t);
    if (what)
        weft_error("receive of data %llu v%u from rank %d: %s (%s)",
                   (unsigned long long)t->flow[0].data->key, blk->act.version, blk->act.peer, what,
                   weft_strerror(status));
    if (rendezvous)
        weft_comm__send_notice(c, t, reply, 0, 0, weft_comm__task_ends, t,
                               (void *)(intptr_t)status);
    else
        weft_comm__task_done(c, t, status);
}

static int throttle(weft_comm_t *c, weft_comm_pending_t *in)
{
    return weft_vec_push(&c->throttled, &in);
}

/* The device the bytes land on: the consumer's, when GPU-aware receives
 * are on, the data has no stage function (it lands in its host layout and
 * the consumer stages it in), that device did not fail and its zone can
 * hold the tile at all (else the consumer runs elsewhere: devselect.c);
 * host memory otherwise. */
static int recv_device(weft_comm_t *c, const weft_task_t *t)
{
    const weft_comm_action_t *act = t->action;
    if (!c->cfg.gpu_aware_recv || act->device <= 0 || act->device > c->cfg.ndevices) return 0;
    if (!weft_comm__device_direct(t->flow[0].data)) return 0;
    const weft_device_t *dev = c->cfg.devices[act->device];
    if (weft_device_is_broken(dev)) return 0;
    if (dev->zone && t->flow[0].data->bytes > weft_zone_capacity(dev->zone)) return 0;
    return act->device;
}

/* Bytes that came inline in an activation: host to host on the wire,
 * whatever the copy they land in (or none). */
static void count_inline(weft_comm_t *c, const weft_data_t *d)
{
    atomic_fetch_add(&c->n_bytes_in, (long long)d->bytes);
    atomic_fetch_add(&c->n_by_transport[WEFT_TRANSPORT_AUTO], (long long)d->bytes);
}

/* What became of a receive's try (recv_into_copy): over or started (in
 * freed by the caller), landing on a device (in kept until it lands), or
 * to be tried again on a later turn (in kept on the throttled list). */
enum { RECV_STARTED = 0, RECV_LANDING = 1, RECV_AGAIN = 2 };

/* The receive of in->act into a copy of in->task: eager bytes copied now
 * (or, to a device, enqueued), a rendezvous started. */
static int recv_into_copy(weft_comm_t *c, weft_comm_pending_t *in)
{
    weft_task_t *t = in->task;
    weft_comm_msg_t *m = in->act;
    weft_data_t *d = t->flow[0].data;
    if (!m->eager && c->ndata_inflight >= c->cfg.max_requests) return RECV_AGAIN;
    /* Tags would repeat those of a transfer still in flight (tags.h): an
     * MPI with few tags, wrapped while a slow transfer held some. */
    if (!m->eager && !weft_comm__tags_room(&c->tags)) {
        if (!in->tag_wait) atomic_fetch_add(&c->n_tag_waits, 1);
        in->tag_wait = 1;
        return RECV_AGAIN;
    }
    int target = recv_device(c, t);
    weft_data_copy_t *cp = NULL;
    int rc = c->cfg.recv_copy(c->cfg.copy_arg, d, target, &cp);
    /* The device has no room now (its zone full of copies in use: often
     * tiles that the peer is about to pull, pinned until it does, while
     * the peer waits the same way for room on its own device). Waiting
     * for room could wait for ever; host memory always has some: the
     * bytes land there and the task brings them to its device when it
     * runs. */
    /* So when its allocator refuses the tile (device_alloc=tile: another
     * process took the memory the zone counted): the receive failed, and
     * its consumer, which stages the tile in when it runs, may find room. */
    if ((rc == WEFT_AGAIN || rc == WEFT_ERR_DEVMEM) && target > 0) {
        target = 0;
        rc = c->cfg.recv_copy(c->cfg.copy_arg, d, target, &cp);
    }
    /* The host copy is busy too (a write-back of the previous version
     * still landing): waiting here would stall every other transfer of
     * the rank, and the write-back may wait for one of them. */
    if (rc == WEFT_AGAIN) {
        if (!in->put_off) atomic_fetch_add(&c->n_recv_retries, 1);
        in->put_off = 1;
        return RECV_AGAIN;
    }
    if (rc != WEFT_SUCCESS) {
        char what[64];
        snprintf(what, sizeof what, "no memory on device %d for it", target);
        recv_failed(c, t, !m->eager, WEFT_COMM_MSG_CANCEL, rc, what);
        return RECV_STARTED;
    }
    weft_comm_xfer_t *x = &weft_comm__block(t)->x;
    *x = (weft_comm_xfer_t){
        .t = t, .copy = cp, .peer = m->src, .t0 = weft_trace_stamp(c->cfg.trace)};
    ((weft_comm_action_t *)t->action)->xfer = x;
    t->flow[0].copy = cp;
    if (m->eager) {
        /* Inline in the activation: host to host on the wire, whatever the
         * copy it lands in (the per-transport counts summed to less than
         * the bytes received). */
        count_inline(c, d);
        rc = weft_comm__xfer_land_eager(c, x, in);
        if (rc == WEFT_AGAIN) return RECV_LANDING;
        x->status = rc;
        weft_comm__xfer_recv_finished(c, x);
    } else {
        x->mode = weft_comm__transport_choose(c, m, target);
        x->counter = !m->on_device && target == 0 ? WEFT_TRANSPORT_AUTO : x->mode;
        c->ndata_inflight++;
        weft_comm__transport_recv_start(c, x, m);
    }
    return RECV_STARTED;
}

/* A RECV whose version the rank has (comm.h): the eager bytes inline are
 * dropped (they came: counted, as the sender counted them), a rendezvous
 * sender is told SKIP. It leaves the data alone (stf/failure.c). */
static void recv_discarded(weft_comm_t *c, weft_task_t *t, const weft_comm_msg_t *m)
{
    ((weft_comm_action_t *)t->action)->discard = 1;
    atomic_fetch_add(&c->n_skipped, 1);
    if (m->eager) {
        count_inline(c, t->flow[0].data);
        weft_comm__task_done(c, t, WEFT_SUCCESS);
    } else
        weft_comm__send_notice(c, t, WEFT_COMM_MSG_SKIP, 0, 0, weft_comm__task_ends, t,
                               (void *)(intptr_t)WEFT_SUCCESS);
}

int weft_comm__start_recv(weft_comm_t *c, weft_comm_pending_t *in)
{
    weft_task_t *t = in->task;
    weft_comm_msg_t *m = in->act;
    int how = RECV_STARTED, admit = WEFT_ARRIVAL_LAND;
    weft_comm_action_t *act = t->action;
    if (m->failed) {
        /* The sender's side reports it. The version came by another path
         * already: the data here is good, and the readers of that path
         * and its next writer must not be cancelled for this one. */
        if (weft_comm__arrival_landed(t)) act->discard = 1;
        weft_comm__task_done(c, t, WEFT_ERR_CANCELLED);
    } else if (!shape_matches(c, t->flow[0].data, m))
        recv_failed(c, t, !m->eager, WEFT_COMM_MSG_REJECT, WEFT_ERR_INVALID, NULL);
    else if (act->discard || (admit = weft_comm__arrival_admit(c, in)) == WEFT_ARRIVAL_SKIP)
        recv_discarded(c, t, m);
    else if (admit == WEFT_ARRIVAL_PARKED)
        return 0;
    else
        how = recv_into_copy(c, in);
    if (how == RECV_LANDING) return 0;
    if (how == RECV_AGAIN && throttle(c, in) == WEFT_SUCCESS) return 1;
    if (how == RECV_AGAIN)
        recv_failed(c, t, !m->eager, WEFT_COMM_MSG_CANCEL, WEFT_ERR_NOMEM, "no memory to queue it");
    free(in);
    return 0;
}

int weft_comm__start_throttled(weft_comm_t *c)
{
    int started = 0;
    /* Each waiting receive gets one try a turn, highest priority first:
     * the `left` first entries are this turn's (order kept), a receive
     * throttled again goes behind them, so that it is not picked again in
     * the same turn while the others wait. */
    for (size_t left = c->throttled.n; left > 0 && c->ndata_inflight < c->cfg.max_requests;
         left--) {
        weft_comm_pending_t **waiting = c->throttled.data;
        size_t best = 0;
        for (size_t i = 1; i < left; i++)
            if (waiting[i]->task->priority > waiting[best]->task->priority) best = i;
        weft_comm_pending_t *p = waiting[best];
        weft_vec_remove(&c->throttled, best);
        if (!weft_comm__start_recv(c, p)) started = 1;
    }
    return started;
}

/* An activation that could not be kept: its RECV fails now if it waits,
 * or when it arrives (the lost list). */
static void activation_lost(weft_comm_t *c, const weft_comm_msg_t *m, weft_comm_pending_t *waiting)
{
    if (waiting) {
        recv_failed(c, waiting->task, !m->eager && !m->failed, WEFT_COMM_MSG_CANCEL, WEFT_ERR_NOMEM,
                    "no memory to keep its activation");
        return;
    }
    weft_comm_lost_t l = {
        .peer = m->src, .eager = m->eager || m->failed, .key = m->key, .version = m->version};
    if (weft_vec_push(&c->lost, &l) == WEFT_SUCCESS) return;
    /* Not even a note of it can be kept: its RECV would wait for ever (and
     * its sender, for a rendezvous), so the run ends here, saying why.
     * Before, past 64 such notes the activation was dropped with a line
     * and the run hung (a stranger's report, comm_alloc:1+). */
    weft_error("comm: activation of data %llu v%u from rank %d lost (no memory, not even to note "
               "it after %zu others): ending the run, its receive would never complete",
               (unsigned long long)m->key, m->version, m->src, c->lost.n);
    weft_abort_job(c->cfg.comm, 1);
}

static void on_activation(weft_comm_t *c, const weft_comm_msg_t *m)
{
    size_t bytes = weft_comm__msg_bytes(m);
    weft_comm_pending_t *waiting =
        weft_comm__table_take(c, WEFT_COMM_PEND_RECV_TASK, m->src, m->key, m->version);
    weft_comm_pending_t *in = weft_comm__alloc(c, sizeof *in + bytes);
    if (!in) {
        activation_lost(c, m, waiting);
        return;
    }
    in->act = (weft_comm_msg_t *)(in + 1);
    memcpy(in->act, m, bytes);
    if (waiting) {
        in->task = waiting->task;
        weft_comm__start_recv(c, in);
        return;
    }
    weft_comm__table_put(c, in, WEFT_COMM_PEND_ACTIVATION, m->src, m->key, m->version);
}

/* Whether the activation of t's data was lost here; then t fails. */
static int recv_was_lost(weft_comm_t *c, weft_task_t *t)
{
    const weft_comm_action_t *act = t->action;
    uint64_t key = t->flow[0].data->key;
    for (size_t i = 0; i < c->lost.n; i++) {
        weft_comm_lost_t *l = weft_vec_at(&c->lost, i);
        if (l->peer != act->peer || l->key != key || l->version != act->version) continue;
        int rendezvous = !l->eager;
        weft_vec_remove(&c->lost, i);
        recv_failed(c, t, rendezvous, WEFT_COMM_MSG_CANCEL, WEFT_ERR_NOMEM,
                    "its activation arrived when no memory was left to keep it");
        return 1;
    }
    return 0;
}

static void handle_recv(weft_comm_t *c, weft_task_t *t)
{
    weft_comm_action_t *act = t->action;
    weft_data_t *d = t->flow[0].data;
    if (c->lost.n && recv_was_lost(c, t)) return;
    weft_comm_pending_t *in =
        weft_comm__table_take(c, WEFT_COMM_PEND_ACTIVATION, act->peer, d->key, act->version);
    if (in) {
        in->task = t;
        weft_comm__start_recv(c, in);
        return;
    }
    weft_comm_pending_t *p = &weft_comm__block(t)->p;
    p->task = t;
    weft_comm__table_put(c, p, WEFT_COMM_PEND_RECV_TASK, act->peer, d->key, act->version);
}

static void on_ctrl(weft_comm_t *c, void *a, void *b)
{
    weft_comm_ctrl_slot_t *s = a;
    weft_comm_msg_t *m = s->buf;
    switch (m->type) {
    case WEFT_COMM_MSG_ACTIVATE:
        on_activation(c, m);
        break;
    case WEFT_COMM_MSG_GET:
        on_get(c, m);
        break;
    case WEFT_COMM_MSG_DONE:
        on_done(c, m);
        break;
    case WEFT_COMM_MSG_SKIP:
        on_skip(c, m);
        break;
    case WEFT_COMM_MSG_REJECT:
    case WEFT_COMM_MSG_CANCEL:
        on_refused(c, m);
        break;
    case WEFT_COMM_MSG_ABORT:
        on_abort(c, m);
        break;
    case WEFT_COMM_MSG_LINK_DOWN:
        on_link_down(c, m);
        break;
    default:
        weft_error("unknown control message type %d from rank %d", m->type, m->src);
    }
    int slot = (int)(s - c->ctrl);
    if (post_ctrl_recv(c, slot) != WEFT_SUCCESS) {
        weft_error("comm: control receive %d could not be posted again; retrying", slot);
        s->bytes |= CTRL_IDLE;
        c->ctrl_reposts++;
    }
}

void weft_comm__handle_task(weft_comm_t *c, weft_task_t *t)
{
    if (t->kind == WEFT_TASK_SEND)
        weft_comm__handle_send(c, t);
    else
        handle_recv(c, t);
}
