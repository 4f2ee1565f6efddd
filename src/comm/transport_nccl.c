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
 * The communicators are made at weft_init (connect, collective), all in one
 * NCCL group, rather than on first use: NCCL's set-up needs both ranks at
 * once and would stall the engine thread mid-run, and a pair NCCL refuses
 * is then found and agreed on before any task. They are blocking
 * communicators: with nonblocking ones each operation cost a move about
 * 150 us more than bare NCCL on 2 H200s (NCCL launches their work from a
 * thread of its own); a blocking ncclSend/ncclRecv only enqueues, and the
 * set-up blocks only after every rank agreed that it has its ids (a rank
 * that dies there ends the job through mpiexec). Operations run on one
 * stream per communicator and end by
 * events polled on the engine's turns (no host synchronisation); a
 * communicator's asynchronous error, or a send that cannot be queued in
 * its turn, retires the link at both ends: this end aborts its
 * communicator and fails its transfers in flight, and tells the peer
 * (LINK_DOWN), whose end does the same, since its operations queued on the
 * pair would otherwise wait for ever; later transfers go staged. The receiver's bound on
 * rendezvous transfers (comm_max_requests) bounds the operations in flight
 * on each communicator. */
#include <cuda_runtime.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "comm/comm_internal.h"
#include "util/clock.h"
#include "util/log.h"

#define NCCL_SETUP_SECONDS 60

/* One operation in flight, ended by its event. */
typedef struct nccl_op {
    cudaEvent_t ev;
    cudaError_t err; /* its event's outcome, once it ended */
    weft_comm_xfer_t *x;
    struct nccl_link *link;
    struct nccl_op *next;
} nccl_op_t;

/* Sender: a GET that came before its turn. */
typedef struct nccl_held {
    weft_comm_xfer_t *x;
    uint32_t seq;
    struct nccl_held *next;
} nccl_held_t;

/* One direction with one peer. */
typedef struct nccl_link {
    ncclComm_t comm; /* NULL: this pair does not use nccl */
    cudaStream_t stream;
    int peer, send; /* send: this rank's sends to peer, else its receives from peer */
    uint32_t next;  /* receives: the number the next one gets; sends: the next to issue */
    int inflight;
    int broken; /* takes no new transfer */
    nccl_held_t *held;
} nccl_link_t;

typedef struct nccl_state {
    weft_device_t *dev; /* the CUDA device of the communicators; NULL: none */
    int ordinal;
    nccl_link_t *to, *from; /* by peer rank */
    nccl_op_t *ops;
} nccl_state_t;

/* What each rank tells the others at connect. */
typedef struct nccl_card {
    int32_t want;                       /* has a CUDA device and may use nccl */
    int32_t all;                        /* comm_transport=nccl: every pair, not only across nodes */
    char identity[WEFT_DEVICE_KEY_MAX]; /* the physical GPU (two ranks on one: no nccl) */
} nccl_card_t;

static int nccl_use_device(nccl_state_t *s)
{
    int cur = -1;
    if (cudaGetDevice(&cur) == cudaSuccess && cur == s->ordinal) return 1;
    return cudaSetDevice(s->ordinal) == cudaSuccess;
}

static int nccl_open(weft_comm_t *c, void **state)
{
    nccl_state_t *s = calloc(1, sizeof *s);
    if (!s) return WEFT_ERR_NOMEM;
    s->to = calloc((size_t)c->nranks, sizeof *s->to);
    s->from = calloc((size_t)c->nranks, sizeof *s->from);
    if (!s->to || !s->from) {
        free(s->to);
        free(s->from);
        free(s);
        return WEFT_ERR_NOMEM;
    }
    for (int i = 1; i <= c->cfg.ndevices && !s->dev; i++) {
        weft_device_t *d = c->cfg.devices[i];
        void *st = d->ops->type == WEFT_DEV_CUDA ? d->ops->stream_handle(d, WEFT_STREAM_IN) : NULL;
        if (st && cudaStreamGetDevice((cudaStream_t)st, &s->ordinal) == cudaSuccess) s->dev = d;
    }
    *state = s;
    return WEFT_SUCCESS;
}

static void link_close(nccl_link_t *l)
{
    if (l->comm) ncclCommAbort(l->comm); /* nothing is in flight; abort never waits */
    if (l->stream) cudaStreamDestroy(l->stream);
    while (l->held) {
        nccl_held_t *h = l->held;
        l->held = h->next;
        free(h);
    }
    *l = (nccl_link_t){0};
}

static void nccl_close(weft_comm_t *c, void *state)
{
    nccl_state_t *s = state;
    if (s->dev) nccl_use_device(s);
    for (int r = 0; r < c->nranks; r++) {
        link_close(&s->to[r]);
        link_close(&s->from[r]);
    }
    while (s->ops) {
        nccl_op_t *op = s->ops;
        s->ops = op->next;
        cudaEventDestroy(op->ev);
        free(op);
    }
    free(s->to);
    free(s->from);
    free(s);
}

/* ---- connect: the communicators of every pair that may use nccl ----------------- */

static int pair_uses_nccl(const weft_comm_t *c, const nccl_card_t *cards, int i, int j)
{
    if (i == j || !cards[i].want || !cards[j].want) return 0;
    if (strncmp(cards[i].identity, cards[j].identity, WEFT_DEVICE_KEY_MAX) == 0) return 0;
    return cards[i].all || cards[j].all || c->node_of[i] != c->node_of[j];
}

static nccl_card_t my_card(const weft_comm_t *c, const nccl_state_t *s)
{
    nccl_card_t me = {0};
    int t = c->cfg.transport;
    me.want =
        s->dev && (t == WEFT_TRANSPORT_NCCL || (t == WEFT_TRANSPORT_AUTO && !c->cfg.mpi_device_ok));
    me.all = t == WEFT_TRANSPORT_NCCL;
    if (me.want && s->dev->ops->identity(s->dev, me.identity, sizeof me.identity) != WEFT_SUCCESS)
        me.want = 0;
    return me;
}

/* Every rank's success, 1 when all succeeded (one allreduce). */
static int all_ranks_ok(weft_comm_t *c, int ok)
{
    if (MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, c->cfg.comm) != MPI_SUCCESS) return 0;
    return ok;
}

/* Ids of this rank's outgoing communicators, then everyone's (alltoall):
 * ids[r] is the id of the communicator (r -> this rank) on return, out[r]
 * of (this rank -> r). */
static int exchange_ids(weft_comm_t *c, const nccl_card_t *cards, ncclUniqueId *out,
                        ncclUniqueId *in)
{
    int ok = 1;
    for (int r = 0; r < c->nranks && ok; r++)
        if (pair_uses_nccl(c, cards, c->rank, r) && ncclGetUniqueId(&out[r]) != ncclSuccess) {
            weft_error("comm: ncclGetUniqueId failed: %s", ncclGetLastError(NULL));
            ok = 0;
        }
    int bytes = (int)sizeof(ncclUniqueId);
    if (MPI_Alltoall(out, bytes, MPI_BYTE, in, bytes, MPI_BYTE, c->cfg.comm) != MPI_SUCCESS) ok = 0;
    return all_ranks_ok(c, ok);
}

/* Makes every communicator of this rank in one group. */
static int start_links(weft_comm_t *c, nccl_state_t *s, const nccl_card_t *cards,
                       const ncclUniqueId *out, const ncclUniqueId *in)
{
    if (!nccl_use_device(s)) return 0;
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.blocking = 1;
    ncclGroupStart();
    int ok = 1;
    /* Every pair is started even after one failed here: its peer's init
     * waits in NCCL's bootstrap for this rank's, with no time limit, and
     * would never reach the agreement that drops the transport. */
    for (int r = 0; r < c->nranks; r++) {
        if (!pair_uses_nccl(c, cards, c->rank, r)) continue;
        nccl_link_t *l[2] = {&s->to[r], &s->from[r]};
        /* The sender of a direction is rank 0 of its communicator. */
        ncclResult_t a = ncclCommInitRankConfig(&l[0]->comm, 2, out[r], 0, &cfg);
        ncclResult_t b = ncclCommInitRankConfig(&l[1]->comm, 2, in[r], 1, &cfg);
        ok &= a == ncclSuccess && b == ncclSuccess;
        for (int k = 0; k < 2; k++) {
            l[k]->peer = r;
            l[k]->send = k == 0;
        }
    }
    ncclResult_t g = ncclGroupEnd();
    if (g != ncclSuccess) ok = 0;
    if (!ok) weft_error("comm: starting the NCCL communicators failed: %s", ncclGetLastError(NULL));
    return ok;
}

/* Link l of this rank, for l in [0, 2 nranks): sends to l, then
 * receives from l - nranks. */
static nccl_link_t *link_at(weft_comm_t *c, nccl_state_t *s, int l)
{
    return l < c->nranks ? &s->to[l] : &s->from[l - c->nranks];
}

/* 1 when no communicator of this rank reports an asynchronous error (the
 * communicators are blocking: a call that returned is done); 0 after
 * logging the first error. */
static int links_ok(weft_comm_t *c, nccl_state_t *s, const char *what)
{
    for (int i = 0; i < 2 * c->nranks; i++) {
        nccl_link_t *l = link_at(c, s, i);
        ncclResult_t st = ncclSuccess;
        if (!l->comm) continue;
        if (ncclCommGetAsyncError(l->comm, &st) != ncclSuccess) st = ncclInternalError;
        if (st == ncclSuccess) continue;
        weft_error("comm: %s: NCCL communicator with rank %d: %s (%s)", what, l->peer,
                   ncclGetErrorString(st), ncclGetLastError(l->comm));
        return 0;
    }
    return 1;
}

/* Gives each communicator its stream. */
static int make_streams(weft_comm_t *c, nccl_state_t *s)
{
    for (int i = 0; i < 2 * c->nranks; i++) {
        nccl_link_t *l = link_at(c, s, i);
        if (l->comm &&
            cudaStreamCreateWithFlags(&l->stream, cudaStreamNonBlocking) != cudaSuccess) {
            weft_error("comm: no CUDA stream for the NCCL communicator with rank %d", l->peer);
            return 0;
        }
    }
    return 1;
}

/* One byte over every link, both directions at once in one group. NCCL
 * connects a pair's channels at their first operation, which needs both
 * ranks: here both are, whereas the engine thread's first receive would
 * wait for a sender that has not had the GET yet. It also takes the
 * connection's cost out of the first transfer. */
static int warm_links(weft_comm_t *c, nccl_state_t *s)
{
    char *buf = NULL;
    if (cudaMalloc((void **)&buf, 2 * (size_t)c->nranks) != cudaSuccess) return 0;
    ncclGroupStart();
    for (int i = 0; i < 2 * c->nranks; i++) {
        nccl_link_t *l = link_at(c, s, i);
        if (!l->comm) continue;
        if (l->send)
            ncclSend(buf + i, 1, ncclChar, 1, l->comm, l->stream);
        else
            ncclRecv(buf + i, 1, ncclChar, 0, l->comm, l->stream);
    }
    ncclResult_t g = ncclGroupEnd();
    int ok = g == ncclSuccess && links_ok(c, s, "first exchange");
    int64_t end = weft_clock_ns() + (int64_t)NCCL_SETUP_SECONDS * 1000000000LL;
    for (int i = 0; i < 2 * c->nranks && ok; i++) {
        nccl_link_t *l = link_at(c, s, i);
        cudaError_t e = cudaSuccess;
        while (l->comm && (e = cudaStreamQuery(l->stream)) == cudaErrorNotReady &&
               weft_clock_ns() < end)
            nanosleep(&(struct timespec){0, 100000}, NULL);
        ok = e == cudaSuccess;
    }
    /* After a failure a peer's kernel may still spin on buf, and cudaFree
     * would wait for it (it synchronizes the device) before the
     * communicators are aborted: buf is left (2 bytes a rank). */
    if (!ok) weft_error("comm: the first NCCL exchange with the peers did not complete");
    if (ok) cudaFree(buf);
    return ok;
}

static void drop_links(weft_comm_t *c, nccl_state_t *s)
{
    if (s->dev) nccl_use_device(s);
    for (int r = 0; r < c->nranks; r++) {
        link_close(&s->to[r]);
        link_close(&s->from[r]);
    }
}

static int nccl_connect(weft_comm_t *c, void *state)
{
    nccl_state_t *s = state;
    nccl_card_t me = my_card(c, s);
    nccl_card_t *cards = calloc((size_t)c->nranks, sizeof *cards);
    ncclUniqueId *ids = calloc(2 * (size_t)c->nranks, sizeof *ids);
    if (!cards || !ids) {
        /* The others are about to wait for this rank in a collective. */
        weft_error("comm: no host memory for the nccl set-up of %d ranks", c->nranks);
        MPI_Abort(c->cfg.comm, 1);
    }
    /* Every rank enters every collective below, whatever failed here. */
    int ok = MPI_Allgather(&me, sizeof me, MPI_BYTE, cards, sizeof me, MPI_BYTE, c->cfg.comm) ==
             MPI_SUCCESS;
    if (!all_ranks_ok(c, ok)) {
        free(cards);
        free(ids);
        weft_error("comm: the nccl transport could not be set up (MPI failed)");
        return me.all ? WEFT_ERR_MPI : WEFT_SUCCESS;
    }
    int used = 0;
    for (int i = 0; i < c->nranks; i++)
        for (int j = 0; j < c->nranks; j++) used |= pair_uses_nccl(c, cards, i, j);
    ok = !used || exchange_ids(c, cards, ids, ids + c->nranks);
    if (used && ok)
        ok = start_links(c, s, cards, ids, ids + c->nranks) &&
             links_ok(c, s, "communicator set-up") && make_streams(c, s);
    ok = !used || all_ranks_ok(c, ok);
    /* Every rank has its communicators: the first exchange can pair up. */
    if (used && ok) ok = all_ranks_ok(c, warm_links(c, s));
    free(cards);
    free(ids);
    if (ok) return WEFT_SUCCESS;
    drop_links(c, s);
    if (me.all) {
        weft_error("comm_transport=nccl: the NCCL communicators could not be set up (see above)");
        return WEFT_ERR_UNSUPPORTED;
    }
    weft_warn("comm: NCCL communicators could not be set up; tiles in device memory between "
              "nodes go staged");
    return WEFT_SUCCESS;
}

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
        nccl_link_t *l = link_at(c, s, i);
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
    .open = nccl_open,
    .close = nccl_close,
    .connect = nccl_connect,
    .describe = nccl_describe,
    .reaches = nccl_reaches,
    .recv_start = nccl_recv_start,
    .send_start = nccl_send_start,
    .release = weft_comm__tp_release_nothing,
    .progress = nccl_progress,
    .peer_down = nccl_peer_down,
};
