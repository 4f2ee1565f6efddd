/* The nccl transport: ncclSend/ncclRecv between the CUDA devices of two
 * ranks, for ranks on different nodes when MPI cannot read device memory
 * (or between any two ranks with comm_transport=nccl).
 *
 * One two-rank communicator per ordered pair of ranks, carrying that
 * direction only: the operations queued on a communicator are then the
 * sends of one rank and the receives of the other, in one order that both
 * know. The receiver numbers its receives from a peer and puts the number
 * in the GET; the sender issues its sends in that order, holding a GET
 * that overtook another. (With one communicator for both directions, a
 * send queued before a receive on one rank and the mirror image on the
 * other would wait for each other forever; one world communicator has the
 * same cycle through three ranks.)
 *
 * The communicators are made at weft_init (transport_nccl_setup.c).
 * Operations run on one stream per communicator and end by events polled
 * on the engine's turns (no host synchronisation); a communicator's
 * asynchronous error, or a send that cannot be queued in its turn, retires
 * the link at both ends: this end aborts its communicator and fails its
 * transfers in flight, and tells the peer (LINK_DOWN), whose end does the
 * same, since its operations queued on the pair would otherwise wait for
 * ever; later transfers go staged. The receiver's bound on rendezvous
 * transfers (comm_max_requests) bounds the operations in flight on each
 * communicator. */
#include <stdio.h>
#include <stdlib.h>

#include "comm/transport_nccl.h"
#include "util/log.h"

/* ---- operations --------------------------------------------------------------- */

static void link_retire(weft_comm_t *c, nccl_state_t *s, nccl_link_t *l, const char *why, int tell);

/* Issues the send or receive of x on its link and records its event. On
 * failure the link takes no new transfer; one whose operation was queued
 * is given up (its NCCL kernel would wait on the stream for ever); a
 * sender's caller gives up any. */
static int op_issue(weft_comm_t *c, nccl_state_t *s, nccl_link_t *l, weft_comm_xfer_t *x)
{
    nccl_op_t *op = weft_comm__alloc(c, sizeof *op);
    if (!op) return WEFT_ERR_NOMEM;
    const weft_data_t *d = x->copy->data;
    int rc = WEFT_ERR_INTERNAL;
    if (!nccl_use_device(s) ||
        cudaEventCreateWithFlags(&op->ev, cudaEventDisableTiming) != cudaSuccess)
        goto fail;
    /* The other rank of a two-rank communicator is 1 for its sender, 0
     * for its receiver. */
    ncclResult_t r = l->send ? ncclSend(x->copy->ptr, d->bytes, ncclChar, 1, l->comm, l->stream)
                             : ncclRecv(x->copy->ptr, d->bytes, ncclChar, 0, l->comm, l->stream);
    if (r != ncclSuccess) {
        weft_error("comm: %s of data %llu with rank %d: %s (%s)", l->send ? "ncclSend" : "ncclRecv",
                   (unsigned long long)d->key, l->peer, ncclGetErrorString(r),
                   ncclGetLastError(l->comm));
        l->broken = 1;
        cudaEventDestroy(op->ev);
        goto fail;
    }
    if (cudaEventRecord(op->ev, l->stream) != cudaSuccess) {
        /* The operation is on the stream already: its number is used up,
         * and the next transfer on this link would pair with the wrong
         * operation of the peer. Retire the link. */
        cudaEventDestroy(op->ev);
        free(op);
        link_retire(c, s, l, "recording the end of an operation on it failed", 1);
        return rc;
    }
    *op = (nccl_op_t){.ev = op->ev, .x = x, .link = l, .next = s->ops};
    s->ops = op;
    l->inflight++;
    x->left++;
    c->tp_busy++;
    return WEFT_SUCCESS;
fail:
    free(op);
    return rc;
}

/* Takes the operations in flight that `over` picks out of their list,
 * into one of their own whose callbacks then run on no list being walked
 * (op_finish). */
static nccl_op_t *take_ops(nccl_state_t *s, int (*over)(nccl_op_t *op, const void *arg),
                           const void *arg)
{
    nccl_op_t *taken = NULL;
    for (nccl_op_t **pp = &s->ops; *pp;) {
        nccl_op_t *op = *pp;
        if (!over(op, arg)) {
            pp = &op->next;
            continue;
        }
        *pp = op->next;
        op->next = taken;
        taken = op;
    }
    return taken;
}

static int on_link(nccl_op_t *op, const void *link) { return op->link == link; }

/* Its event's outcome into op->err; 1 once it ended, well or not. */
static int event_over(nccl_op_t *op, const void *unused)
{
    (void)unused;
    op->err = cudaEventQuery(op->ev);
    return op->err != cudaErrorNotReady;
}

/* Ends op, already out of the list of operations in flight: callbacks
 * may start or end other operations (a failed receive restarts a parked
 * one, whose link may be given up), so no list is walked across them. */
static void op_finish(weft_comm_t *c, nccl_op_t *op, const char *failure)
{
    cudaEventDestroy(op->ev);
    op->link->inflight--;
    c->tp_busy--;
    if (failure) weft_comm__xfer_fail(c, op->x, WEFT_ERR_INTERNAL, failure);
    weft_comm__xfer_part_done(c, op->x);
    free(op);
}

/* Gives l up: its communicator is aborted (what it has queued would not
 * complete otherwise), its operations in flight and the GETs it holds
 * fail, and it takes no more transfers. tell: the peer did not give its
 * end up first and is told to, since its operations queued on the pair
 * wait for this end's (an asynchronous error is not always seen at both
 * ends, and a failed post only at one). */
static void link_retire(weft_comm_t *c, nccl_state_t *s, nccl_link_t *l, const char *why, int tell)
{
    if (!l->comm) return; /* retired already, or never made */
    weft_error("comm: the NCCL communicator for %s rank %d is given up: %s; its transfers fail "
               "and later ones go staged",
               l->send ? "sends to" : "receives from", l->peer, why);
    l->broken = 1;
    ncclCommAbort(l->comm);
    l->comm = NULL;
    if (tell) weft_comm__send_link_down(c, l->peer, WEFT_TRANSPORT_NCCL, l->send);
    nccl_op_t *mine = take_ops(s, on_link, l);
    while (mine) {
        nccl_op_t *op = mine;
        mine = op->next;
        op_finish(c, op, "its NCCL communicator was given up");
    }
    while (l->held) {
        nccl_held_t *h = l->held;
        l->held = h->next;
        weft_comm__xfer_fail(c, h->x, WEFT_ERR_INTERNAL, "its NCCL communicator was given up");
        free(h);
    }
}

static int nccl_progress(weft_comm_t *c, void *state)
{
    nccl_state_t *s = state;
    if (!s->ops) return 0;
    int done = 0;
    nccl_op_t *ended = take_ops(s, event_over, NULL);
    while (ended) {
        nccl_op_t *op = ended;
        ended = op->next;
        nccl_link_t *l = op->link;
        cudaError_t e = op->err;
        op_finish(c, op, e == cudaSuccess ? NULL : cudaGetErrorString(e));
        /* The peer's operation on the pair may never end either. */
        if (e != cudaSuccess) link_retire(c, s, l, cudaGetErrorString(e), 1);
        done++;
    }
    for (int i = 0; i < 2 * c->nranks && s->ops; i++) {
        nccl_link_t *l = nccl_link_at(c, s, i);
        ncclResult_t st = ncclSuccess;
        if (!l->comm || !l->inflight) continue;
        if (ncclCommGetAsyncError(l->comm, &st) != ncclSuccess) st = ncclInternalError;
        if (st == ncclSuccess) continue;
        char why[256];
        snprintf(why, sizeof why, "%s (%s)", ncclGetErrorString(st), ncclGetLastError(l->comm));
        link_retire(c, s, l, why, 1);
        done++;
    }
    return done;
}

/* ---- sender ------------------------------------------------------------------- */

static int nccl_describe(weft_comm_t *c, void *state, const weft_data_copy_t *cp,
                         weft_comm_msg_t *m)
{
    nccl_state_t *s = state;
    /* NCCL moves contiguous buffers of the communicators' device only. */
    m->nccl = s->dev && cp->device == s->dev->index && cp->ld == cp->data->rows;
    return m->nccl ? WEFT_SUCCESS : WEFT_ERR_UNSUPPORTED;
}

/* Issues the held GETs of l whose turn has come. */
static void send_in_order(weft_comm_t *c, nccl_state_t *s, nccl_link_t *l)
{
    for (nccl_held_t **pp = &l->held; *pp;) {
        nccl_held_t *h = *pp;
        if (h->seq != l->next) {
            pp = &h->next;
            continue;
        }
        *pp = h->next;
        l->next++;
        int rc = op_issue(c, s, l, h->x);
        weft_comm_xfer_t *x = h->x;
        free(h);
        if (rc != WEFT_SUCCESS) {
            /* The receiver queued its ncclRecv for this number, and those
             * for the GETs held here: none would ever complete. */
            weft_comm__xfer_fail(c, x, rc, "the ncclSend could not start");
            link_retire(c, s, l, "an ncclSend could not be queued in its turn", 1);
            return;
        }
        pp = &l->held; /* the next one may be earlier in the list */
    }
}

static int nccl_send_start(weft_comm_t *c, void *state, weft_comm_xfer_t *x,
                           const weft_comm_msg_t *get)
{
    nccl_state_t *s = state;
    nccl_link_t *l = &s->to[x->peer];
    if (!l->comm) return WEFT_ERR_UNSUPPORTED; /* given up: the receiver was told */
    /* The receiver queued its ncclRecv for this GET's number: a GET this
     * end cannot take leaves that receive, and every later one on the
     * link, waiting for ever. */
    const char *why = l->broken                          ? "it takes no new transfer"
                      : x->copy->device != s->dev->index ? "a GET named a copy on another device"
                                                         : NULL;
    nccl_held_t *h = why ? NULL : weft_comm__alloc(c, sizeof *h);
    if (!h) {
        link_retire(c, s, l, why ? why : "no memory to hold a GET", 1);
        return why ? WEFT_ERR_UNSUPPORTED : WEFT_ERR_NOMEM;
    }
    *h = (nccl_held_t){.x = x, .seq = (uint32_t)get->tag, .next = l->held};
    l->held = h;
    send_in_order(c, s, l);
    return WEFT_SUCCESS;
}

/* ---- receiver ----------------------------------------------------------------- */

static int nccl_reaches(weft_comm_t *c, void *state, const weft_comm_msg_t *m, int target)
{
    nccl_state_t *s = state;
    const nccl_link_t *l = &s->from[m->src];
    return m->on_device && m->nccl && m->dev_type == WEFT_DEV_CUDA && l->comm && !l->broken &&
           s->dev && target == s->dev->index;
}

/* The receive is on the communicator's stream before the GET leaves; a
 * failure before that leaves x to the transport of last resort. */
static int nccl_recv_start(weft_comm_t *c, void *state, weft_comm_xfer_t *x,
                           const weft_comm_msg_t *m)
{
    nccl_state_t *s = state;
    nccl_link_t *l = &s->from[m->src];
    if (!nccl_reaches(c, state, m, x->copy->device) || x->copy->ld != x->copy->data->rows)
        return WEFT_ERR_UNSUPPORTED;
    int rc = op_issue(c, s, l, x);
    if (rc != WEFT_SUCCESS) return rc;
    weft_comm__xfer_send_get(c, x, WEFT_TRANSPORT_NCCL, (int)l->next++, 0);
    /* Without its GET the sender never issues that number, and the
     * receive posted would hold up the ones behind it: retire the link. */
    if (!x->get_sent) link_retire(c, s, l, "a GET could not be sent", 1);
    return WEFT_SUCCESS;
}

/* LINK_DOWN: the pair's other end retired; their_sends: it was the
 * sender, so this end is the pair's receiver. */
static void nccl_peer_down(weft_comm_t *c, void *state, int peer, int their_sends)
{
    nccl_state_t *s = state;
    if (peer < 0 || peer >= c->nranks) return;
    if (s->dev) nccl_use_device(s);
    link_retire(c, s, their_sends ? &s->from[peer] : &s->to[peer],
                "the peer gave up its end of the pair", 0);
}

const weft_comm_transport_ops_t weft_comm__nccl_ops = {
    .name = "nccl",
    .id = WEFT_TRANSPORT_NCCL,
    .open = weft_comm__nccl_open,
    .close = weft_comm__nccl_close,
    .connect = weft_comm__nccl_connect,
    .describe = nccl_describe,
    .reaches = nccl_reaches,
    .recv_start = nccl_recv_start,
    .send_start = nccl_send_start,
    .release = weft_comm__tp_release_nothing,
    .progress = nccl_progress,
    .peer_down = nccl_peer_down,
};
