/* The nccl transport's communicators (transport_nccl.c says what they
 * carry): their state opened and closed, and their set-up at connect.
 *
 * The communicators are made at weft_init (connect, collective), all in one
 * NCCL group, rather than on first use: NCCL's set-up needs both ranks at
 * once and would stall the engine thread mid-run, and a pair NCCL refuses
 * is then found and agreed on before any task. They are blocking
 * communicators: with nonblocking ones each operation cost a move about
 * 150 us more than bare NCCL on 2 H200s (NCCL launches their work from a
 * thread of its own); a blocking ncclSend/ncclRecv only enqueues, and the
 * set-up blocks only after every rank agreed that it has its ids (a rank
 * that dies there ends the job through mpiexec). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "comm/transport_nccl.h"
#include "util/clock.h"
#include "util/ending.h"
#include "util/log.h"

#define NCCL_SETUP_SECONDS 60

/* What each rank tells the others at connect. */
typedef struct nccl_card {
    int32_t want;                       /* has a CUDA device and may use nccl */
    int32_t all;                        /* comm_transport=nccl: every pair, not only across nodes */
    char identity[WEFT_DEVICE_KEY_MAX]; /* the physical GPU (two ranks on one: no nccl) */
} nccl_card_t;

int weft_comm__nccl_open(weft_comm_t *c, void **state)
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

/* Closes every link of this rank. */
static void drop_links(weft_comm_t *c, nccl_state_t *s)
{
    if (s->dev) nccl_use_device(s);
    for (int r = 0; r < c->nranks; r++) {
        link_close(&s->to[r]);
        link_close(&s->from[r]);
    }
}

void weft_comm__nccl_close(weft_comm_t *c, void *state)
{
    nccl_state_t *s = state;
    drop_links(c, s);
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

/* 1 when no communicator of this rank reports an asynchronous error (the
 * communicators are blocking: a call that returned is done); 0 after
 * logging the first error. */
static int links_ok(weft_comm_t *c, nccl_state_t *s, const char *what)
{
    for (int i = 0; i < 2 * c->nranks; i++) {
        nccl_link_t *l = nccl_link_at(c, s, i);
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
        nccl_link_t *l = nccl_link_at(c, s, i);
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
        nccl_link_t *l = nccl_link_at(c, s, i);
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
        nccl_link_t *l = nccl_link_at(c, s, i);
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

int weft_comm__nccl_connect(weft_comm_t *c, void *state)
{
    nccl_state_t *s = state;
    nccl_card_t me = my_card(c, s);
    nccl_card_t *cards = calloc((size_t)c->nranks, sizeof *cards);
    ncclUniqueId *ids = calloc(2 * (size_t)c->nranks, sizeof *ids);
    if (!cards || !ids) {
        /* The others are about to wait for this rank in a collective. */
        weft_error("comm: no host memory for the nccl set-up of %d ranks", c->nranks);
        weft_abort_job(c->cfg.comm, 1);
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
