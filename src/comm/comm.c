/* The comm engine's thread and its plumbing: the table of MPI requests in
 * flight with what to run when each completes, the device events it
 * polls, the queue that hands it SEND/RECV tasks, its start and end. The
 * protocol is in protocol.c, the moving of bytes in xfer.c and the
 * transports (transport.h). */
#include "comm/comm.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "comm/comm_internal.h"
#include "trace/trace.h"
#include "util/bodythread.h"
#include "util/clock.h"
#include "util/fault.h"
#include "util/ending.h"
#include "util/log.h"

/* ---- request table: every MPI request in flight and what to do after ---- */

/* Room for one more request, made before posting it: a request MPI has
 * taken must always be tracked. */
static int reserve_request(weft_comm_t *c)
{
    size_t want = c->reqs.n + 1;
    int rc = weft_vec_reserve(&c->reqs, want);
    if (rc == WEFT_SUCCESS) rc = weft_vec_reserve(&c->cbs, want);
    if (rc == WEFT_SUCCESS) rc = weft_vec_reserve(&c->idx, want);
    return rc;
}

static void tables_init(weft_comm_t *c)
{
    weft_vec_init(&c->reqs, sizeof(MPI_Request), 64);
    weft_vec_init(&c->cbs, sizeof(weft_comm_req_cb_t), 64);
    weft_vec_init(&c->idx, sizeof(int), 64);
    weft_vec_init(&c->waits, sizeof(weft_comm_dev_wait_t), 32);
    weft_vec_init(&c->throttled, sizeof(weft_comm_pending_t *), 64);
    weft_vec_init(&c->deferred, sizeof(weft_task_t *), 16);
    weft_vec_init(&c->owed, sizeof(weft_comm_owed_t), 4);
    weft_vec_init_inline(&c->lost, sizeof(weft_comm_lost_t), c->lost_room, WEFT_COMM_LOST);
}

static void tables_free(weft_comm_t *c)
{
    weft_vec_fini(&c->reqs);
    weft_vec_fini(&c->cbs);
    weft_vec_fini(&c->idx);
    weft_vec_fini(&c->waits);
    weft_vec_fini(&c->throttled);
    weft_vec_fini(&c->deferred);
    weft_vec_fini(&c->owed);
    weft_vec_fini(&c->lost);
}

void *weft_comm__alloc(weft_comm_t *c, size_t bytes)
{
    if (weft_fault_hit(c->cfg.fault, WEFT_FAULT_COMM_ALLOC, NULL)) {
        weft_error("comm: allocation of %zu bytes fails (fault_inject)", bytes);
        return NULL;
    }
    return calloc(1, bytes);
}

void *weft_comm__alloc_spare(weft_comm_t *c, size_t bytes, const char *instead)
{
    if (weft_fault_hit(c->cfg.fault, WEFT_FAULT_COMM_ALLOC, NULL)) {
        weft_warn("comm: allocation of %zu bytes fails (fault_inject): %s instead", bytes, instead);
        return NULL;
    }
    return calloc(1, bytes);
}

typedef enum { POST_SEND, POST_RECV, POST_CTRL_RECV } post_kind_t;

/* level is WEFT_LOG_WARN (or WEFT_LOG_INFO, for the later tries) for a
 * control message the caller posts again, WEFT_LOG_ERROR otherwise: a
 * failure that a later post mends is not an error of the run. */
static int post(weft_comm_t *c, post_kind_t kind, void *buf, int count, MPI_Datatype type, int peer,
                int tag, weft_comm_req_cb_t cb, int level)
{
    const char *then = level == WEFT_LOG_ERROR ? "" : "; posting it again";
    if (reserve_request(c) != WEFT_SUCCESS) {
        weft_log(level, -1, "comm: no memory to track one more MPI request (%zu in flight)%s",
                 c->reqs.n, then);
        return WEFT_ERR_NOMEM;
    }
    const char *what = kind == POST_SEND ? "Isend to" : "Irecv from";
    if (kind != POST_CTRL_RECV && weft_fault_hit(c->cfg.fault, WEFT_FAULT_COMM_POST, NULL)) {
        weft_log(level, -1, "comm: MPI_%s rank %d (tag %d) fails (fault_inject)%s", what, peer, tag,
                 then);
        return WEFT_ERR_MPI;
    }
    MPI_Request r;
    int err = kind == POST_SEND ? MPI_Isend(buf, count, type, peer, tag, c->cfg.comm, &r)
                                : MPI_Irecv(buf, count, type, peer, tag, c->cfg.comm, &r);
    if (err != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(err, msg, &len);
        weft_log(level, -1, "comm: MPI_%s rank %d (tag %d) failed: %s%s", what, peer, tag, msg,
                 then);
        return WEFT_ERR_MPI;
    }
    /* Room is reserved above: a request MPI has taken is always tracked. */
    cb.send = kind == POST_SEND;
    c->nsends += cb.send;
    int rc = weft_vec_push(&c->reqs, &r);
    if (rc == WEFT_SUCCESS) rc = weft_vec_push(&c->cbs, &cb);
    assert(rc == WEFT_SUCCESS);
    return rc;
}

int weft_comm__post_send(weft_comm_t *c, const void *buf, int count, MPI_Datatype type, int dest,
                         int tag, weft_comm_req_cb_t cb, int level)
{
    return post(c, POST_SEND, (void *)buf, count, type, dest, tag, cb, level);
}

int weft_comm__isend(weft_comm_t *c, const void *buf, int count, MPI_Datatype type, int dest,
                     int tag, weft_comm_cb_fn cb, void *a, void *b)
{
    weft_comm_req_cb_t on = {.fn = cb, .a = a, .b = b};
    /* Behind a control message owed to dest: MPI's order between them is
     * the protocol's (a DONE before the next activation), kept by the
     * owed list's. */
    if (tag == WEFT_COMM_CTRL_TAG && weft_comm__owed_to(c, dest))
        return weft_comm__owe(c, buf, count, dest, "a control message", on, 0);
    return post(c, POST_SEND, (void *)buf, count, type, dest, tag, on, WEFT_LOG_ERROR);
}

int weft_comm__irecv(weft_comm_t *c, void *buf, int count, MPI_Datatype type, int src, int tag,
                     weft_comm_cb_fn cb, void *a, void *b)
{
    return post(c, POST_RECV, buf, count, type, src, tag,
                (weft_comm_req_cb_t){.fn = cb, .a = a, .b = b}, WEFT_LOG_ERROR);
}

int weft_comm__irecv_ctrl(weft_comm_t *c, void *buf, int count, weft_comm_cb_fn cb, void *a)
{
    return post(c, POST_CTRL_RECV, buf, count, MPI_BYTE, MPI_ANY_SOURCE, WEFT_COMM_CTRL_TAG,
                (weft_comm_req_cb_t){.fn = cb, .a = a}, WEFT_LOG_ERROR);
}

void weft_comm__cancel_recvs(weft_comm_t *c, const void *x)
{
    MPI_Request *reqs = c->reqs.data;
    weft_comm_req_cb_t *cbs = c->cbs.data;
    /* A request that completed in the Testsome whose callbacks are being
     * run is MPI_REQUEST_NULL already, its callback still to come: it is
     * over, not to be cancelled (MPI_Cancel of it aborted the job with
     * MPI_ERR_REQUEST when the sender's ABORT came in the same batch as a
     * chunk). */
    for (size_t i = 0; i < c->reqs.n; i++)
        if (cbs[i].fn && cbs[i].a == x && reqs[i] != MPI_REQUEST_NULL) MPI_Cancel(&reqs[i]);
}

/* Tests every request once; runs the callbacks of the finished ones.
 * Returns how many finished. Callbacks may post new requests (appended). */
static int progress_requests(weft_comm_t *c)
{
    int n = (int)c->reqs.n, done = 0;
    if (n == 0) return 0;
    int rc = MPI_Testsome(n, c->reqs.data, &done, c->idx.data, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) {
        /* A request that completed in error (a truncated message, a peer
         * gone) has no callback that could fail its transfer, and both
         * ends would wait for it forever: end the job, loudly, instead. */
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, text, &len);
        weft_error("comm: a message completed in error in MPI (%s): ending the job, since the "
                   "ranks waiting for it would otherwise hang",
                   text);
        weft_abort_job(c->cfg.comm, 1);
    }
    if (done == MPI_UNDEFINED || done == 0) return 0;
    /* Callbacks first (they may append), then squeeze out the finished. */
    for (int k = 0; k < done; k++) {
        /* Read afresh: an earlier callback may have grown the tables. */
        size_t i = (size_t)((int *)c->idx.data)[k];
        weft_comm_req_cb_t *slot = weft_vec_at(&c->cbs, i), cb = *slot;
        slot->fn = NULL;
        c->nsends -= cb.send;
        cb.fn(c, cb.a, cb.b);
    }
    MPI_Request *reqs = c->reqs.data;
    weft_comm_req_cb_t *cbs = c->cbs.data;
    size_t w = 0;
    for (size_t i = 0; i < c->reqs.n; i++) {
        if (!cbs[i].fn) continue;
        reqs[w] = reqs[i];
        cbs[w] = cbs[i];
        w++;
    }
    c->reqs.n = c->cbs.n = w;
    return done;
}

/* ---- device events the engine waits for ------------------------------------ */

int weft_comm__wait_device(weft_comm_t *c, weft_device_t *dev, weft_event_t ev, weft_comm_cb_fn fn,
                           void *a, void *b, int *status)
{
    weft_comm_dev_wait_t w = {.dev = dev, .ev = ev, .fn = fn, .a = a, .b = b, .status = status};
    return weft_vec_push(&c->waits, &w);
}

/* Queries each waited event once; runs the callbacks of those done. */
static int progress_devices(weft_comm_t *c)
{
    int done = 0;
    for (size_t i = 0; i < c->waits.n;) {
        weft_comm_dev_wait_t w = *(weft_comm_dev_wait_t *)weft_vec_at(&c->waits, i);
        int rc = w.dev->ops->event_query(w.dev, &w.ev);
        if (rc == WEFT_AGAIN) {
            i++;
            continue;
        }
        if (rc == WEFT_SUCCESS && weft_fault_hit(c->cfg.fault, WEFT_FAULT_DEVICE_LAND, NULL)) {
            weft_device_set_broken(w.dev, "a copy the comm engine waited for reported an error "
                                          "at its end (injected: fault_inject device_land)");
            rc = WEFT_ERR_DEVICE;
        }
        /* Remove before the callback: it may add waits. */
        weft_vec_swap_remove(&c->waits, i);
        w.dev->ops->event_destroy(w.dev, &w.ev);
        if (rc != WEFT_SUCCESS && w.status) *w.status = rc;
        w.fn(c, w.a, w.b);
        done++;
    }
    return done;
}

/* ---- submission queue (any thread -> engine thread) ---------------------- */

void weft_comm_submit(weft_comm_t *c, weft_task_t *t)
{
    pthread_mutex_lock(&c->qlock);
    t->next = NULL;
    if (c->qtail)
        c->qtail->next = t;
    else
        c->qhead = t;
    c->qtail = t;
    pthread_cond_signal(&c->qcond);
    pthread_mutex_unlock(&c->qlock);
}

static weft_task_t *take_submitted(weft_comm_t *c)
{
    pthread_mutex_lock(&c->qlock);
    weft_task_t *list = c->qhead;
    c->qhead = c->qtail = NULL;
    pthread_mutex_unlock(&c->qlock);
    return list;
}

/* CPU time of all the rank's threads, ns. */
static int64_t process_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Where a nap started: the time, the rank's CPU time, host bodies ended. */
typedef struct nap_mark {
    int64_t wall, cpu;
    long ended;
} nap_mark_t;

static nap_mark_t nap_mark(const weft_comm_t *c)
{
    return (nap_mark_t){
        .wall = weft_clock_ns(),
        .cpu = process_cpu_ns(),
        .ended = c->cfg.ended ? atomic_load_explicit(c->cfg.ended, memory_order_relaxed) : 0};
}

/* Naps never grow on a rank with accelerators: busy counts kernels there
 * too, and a move between GPUs waits on the nap (issue 17's move cost). */
static int naps_grow(const weft_comm_t *c)
{
    return c->cfg.ndevices == 0 && c->cfg.nap_max_ns > c->cfg.nap_ns;
}

/* A move is half-way and its peer waits on this engine's next poll: a
 * send announced its tile and the receiver's GET is due (the receiver may
 * sit idle until the bytes come), a fetch's bytes are on the way (Open
 * MPI's receiver copies them when it polls), or a send's are: where Open
 * MPI moves shared memory in two copies (no CMA, as in many containers;
 * btl_vader_single_copy_mechanism=none) the sender copies each fragment
 * in when it polls, and a reader on another rank waited a long nap per
 * fragment (400 ms for a 320 KB tile; test comm_nap_held_twocopy). Grown
 * naps held each such step up to comm_nap_max_us: tile QR on 2 ranks x 1
 * core waited a median 9-12 ms per 800 KB tile, and its ranks idled on
 * it. A receive waiting for its activation does not count: it waits for
 * its producer's whole run, so naps would stay short for good (tried: no
 * better for QR, gemm or potrf on 2 ranks x 1 core than this rule). */
static int peer_waits(const weft_comm_t *c)
{
    return c->npend[WEFT_COMM_PEND_SEND] > 0 || c->ndata_inflight > 0 || c->nsends > 0;
}

/* A worker computes on the engine's core: a yield would hand the core
 * back to it until the next scheduler tick (4 ms at HZ=250), and the
 * messages its tasks release, and the GETs of their readers, would wait
 * that long. A timed wait instead returns in a nap (naps.c), or at once
 * when a task is submitted, and the wakeup preempts the worker. */
static int nap_while_busy(weft_comm_t *c)
{
    if (c->cfg.nap_ns <= 0 || !c->cfg.busy ||
        atomic_load_explicit(c->cfg.busy, memory_order_relaxed) == 0)
        return 0;
    /* Device events (an ipc pull, staged chunks) and transport operations
     * end without a submission to wake a nap: napping then would hold the
     * end of a receive, and the release of its consumer, up to a nap
     * after the copy landed. busy also counts tasks running on devices,
     * which need no host core. Yield instead. */
    if (c->waits.n > 0 || c->tp_busy > 0 || c->owed.n > 0) return 0;
    atomic_fetch_add_explicit(&c->n_naps, 1, memory_order_relaxed);
    long nap = c->naps.next_ns;
    int grows = naps_grow(c);
    if (peer_waits(c)) { /* short, and says nothing of the cores */
        nap = c->cfg.nap_ns;
        grows = 0;
    }
    nap_mark_t from = grows ? nap_mark(c) : (nap_mark_t){0};
    struct timespec ts = weft_deadline_in(nap);
    int rc = 0;
    pthread_mutex_lock(&c->qlock);
    if (!c->qhead && !atomic_load(&c->stop)) rc = pthread_cond_timedwait(&c->qcond, &c->qlock, &ts);
    pthread_mutex_unlock(&c->qlock);
    /* A nap a submission ended says nothing about the cores. */
    if (grows && rc == ETIMEDOUT) {
        nap_mark_t now = nap_mark(c);
        weft_comm__nap_ran_out(&c->naps, now.wall, now.wall - from.wall, now.cpu - from.cpu,
                               now.ended != from.ended);
    }
    return 1;
}

/* While nothing moves: spin a little, then yield the core (a worker may
 * share it, and an activation or GET from a peer is noticed at the next
 * turn, with no sleep to wait out), and only after a long quiet spell
 * (between taskpools) with no device work to poll and no message
 * expected from a peer, sleep until a submission or a timeout. On a core
 * where a worker computes, nap instead (nap_while_busy). */
static void wait_when_idle(weft_comm_t *c, int idle_turns)
{
    if (idle_turns > 0 && nap_while_busy(c)) return;
    if (idle_turns < 64) return;
    /* A receive waiting for its activation, a send for its GET or DONE, or
     * bytes in flight: the message ends no sleep (only a submission does),
     * so a sleep of 200 us would hold it that long after it came. After
     * 20000 quiet turns (tens of ms: a long task upstream) it still comes
     * when it comes: yield. */
    if (idle_turns < 20000 || c->waits.n > 0 || c->tp_busy > 0 || weft_comm__expects_peer(c) ||
        c->ndata_inflight > 0 || c->owed.n > 0) {
        sched_yield();
        return;
    }
    struct timespec ts = weft_deadline_in(200 * 1000);
    pthread_mutex_lock(&c->qlock);
    if (!c->qhead && !atomic_load(&c->stop)) pthread_cond_timedwait(&c->qcond, &c->qlock, &ts);
    pthread_mutex_unlock(&c->qlock);
}

static void *engine_main(void *arg)
{
    weft_comm_t *c = arg;
    int idle_turns = 0; /* turns in a row that moved nothing */
    weft_trace_thread_track = c->cfg.trace_track;
    while (!atomic_load(&c->stop)) {
        int moved = 0;
        for (weft_task_t *t = take_submitted(c), *next; t; t = next) {
            next = t->next;
            weft_comm__handle_task(c, t);
            moved = 1;
        }
        moved |= progress_requests(c) > 0;
        moved |= progress_devices(c) > 0;
        moved |= weft_comm__transports_progress(c) > 0;
        moved |= weft_comm__start_throttled(c);
        moved |= weft_comm__start_deferred(c);
        weft_comm__ctrl_repost(c);
        moved |= weft_comm__owed_progress(c);
        int dump = atomic_exchange(&c->dump, 0);
        if (dump) weft_comm__table_dump(c, dump - 1);
        idle_turns = moved ? 0 : idle_turns + 1;
        wait_when_idle(c, idle_turns);
    }
    return NULL;
}

/* Ranks of one node share a node id (the ipc transport needs both ends on
 * one node): a copy of the caller's table. No collective here: the engine
 * starts in a step of weft_init that may fail on one rank only. */
static int find_nodes(weft_comm_t *c)
{
    c->node_of = malloc(sizeof *c->node_of * (size_t)c->nranks);
    if (!c->node_of) return WEFT_ERR_NOMEM;
    memcpy(c->node_of, c->cfg.node_of, sizeof *c->node_of * (size_t)c->nranks);
    return WEFT_SUCCESS;
}

int weft_comm_create(const weft_comm_config_t *cfg, weft_comm_t **out)
{
    weft_comm_t *c = calloc(1, sizeof *c);
    if (!c) return WEFT_ERR_NOMEM;
    c->cfg = *cfg;
    /* Apart from the comm thread's own track, which an eviction made on
     * that thread draws on. */
    weft_trace_lanes_init(&c->lanes, -1, "comm transfers");
    c->naps = (weft_comm_naps_t){
        .base_ns = cfg->nap_ns, .max_ns = cfg->nap_max_ns, .next_ns = cfg->nap_ns};
    if (c->cfg.max_requests <= 0) c->cfg.max_requests = 16;
    /* MPI errors come back as return codes: the engine fails the transfer
     * they belong to instead of aborting the job. */
    MPI_Comm_set_errhandler(cfg->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(cfg->comm, &c->rank);
    MPI_Comm_size(cfg->comm, &c->nranks);
    int flag = 0;
    void *ub = NULL;
    MPI_Comm_get_attr(cfg->comm, MPI_TAG_UB, &ub, &flag);
    int tag_ub = flag && ub ? *(int *)ub : 32767;
    int rc = WEFT_SUCCESS;
    if (tag_ub < WEFT_COMM_FIRST_DATA_TAG + WEFT_COMM_MIN_DATA_TAGS - 1) {
        /* Too few for a transfer's tags to be told from the next ones'. */
        weft_error("comm: this MPI's MPI_TAG_UB is %d: weft needs %d at least (the MPI standard "
                   "promises 32767)",
                   tag_ub, WEFT_COMM_FIRST_DATA_TAG + WEFT_COMM_MIN_DATA_TAGS - 1);
        rc = WEFT_ERR_MPI;
        goto undo_alloc;
    }
    weft_comm__tags_init(&c->tags, WEFT_COMM_FIRST_DATA_TAG, tag_ub);
    tables_init(c);
    rc = find_nodes(c);
    if (rc != WEFT_SUCCESS) goto undo_alloc;
    rc = weft_comm__transports_open(c);
    if (rc != WEFT_SUCCESS) goto undo_nodes;
    pthread_mutex_init(&c->qlock, NULL);
    pthread_cond_init(&c->qcond, NULL);
    /* A failed start may have posted some control receives: stop them. */
    rc = weft_comm__ctrl_start(c);
    if (rc != WEFT_SUCCESS) goto undo_ctrl;
    int trc = pthread_create(&c->thread, NULL, engine_main, c);
    if (trc != 0) {
        weft_error("comm: the comm thread could not be started: %s",
                   weft_thread_failure_words(trc));
        rc = WEFT_ERR_INTERNAL;
        goto undo_ctrl;
    }
    *out = c;
    return WEFT_SUCCESS;

undo_ctrl:
    weft_comm__ctrl_stop(c);
    pthread_cond_destroy(&c->qcond);
    pthread_mutex_destroy(&c->qlock);
    weft_comm__transports_close(c);
undo_nodes:
    free(c->node_of);
undo_alloc:
    tables_free(c);
    free(c);
    return rc;
}

int weft_comm_connect(weft_comm_t *c) { return weft_comm__transports_connect(c); }

void weft_comm_destroy(weft_comm_t *c)
{
    if (!c) return;
    pthread_mutex_lock(&c->qlock);
    atomic_store(&c->stop, 1);
    pthread_cond_signal(&c->qcond);
    pthread_mutex_unlock(&c->qlock);
    pthread_join(c->thread, NULL);
    /* Owed messages never went (the ranks stopped in disagreement): their
     * buffers go as a failed post's did. */
    for (size_t i = 0; i < c->owed.n; i++) {
        weft_comm_owed_t *o = weft_vec_at(&c->owed, i);
        o->cb.fn(c, o->cb.a, o->cb.b);
    }
    weft_comm__ctrl_stop(c);
    weft_comm__table_clear(c);
    weft_comm__transports_close(c);
    free(c->node_of);
    tables_free(c);
    pthread_cond_destroy(&c->qcond);
    pthread_mutex_destroy(&c->qlock);
    free(c);
}

void weft_comm_dump(weft_comm_t *c, int level)
{
    atomic_store(&c->dump, level + 1);
    pthread_mutex_lock(&c->qlock);
    pthread_cond_signal(&c->qcond);
    pthread_mutex_unlock(&c->qlock);
}

int weft_comm_send_may_wait(const weft_comm_t *c, const weft_data_t *d)
{
    return d->bytes > c->cfg.eager_limit ||
           (c->cfg.ndevices > 0 && c->cfg.gpu_aware_send && weft_comm__device_direct(d));
}

void weft_comm_counters(weft_comm_t *c, weft_comm_counters_t *out)
{
    out->activations_sent = atomic_load(&c->n_act);
    out->eager_sent = atomic_load(&c->n_eager);
    out->gets_sent = atomic_load(&c->n_get);
    out->bytes_sent = atomic_load(&c->n_bytes_out);
    out->bytes_received = atomic_load(&c->n_bytes_in);
    out->rejected = atomic_load(&c->n_rejected);
    out->naps = atomic_load(&c->n_naps);
    out->recv_retries = atomic_load(&c->n_recv_retries);
    out->send_retries = atomic_load(&c->n_send_retries);
    out->send_pulls = atomic_load(&c->n_send_pulls);
    out->skipped = atomic_load(&c->n_skipped);
    out->tag_waits = atomic_load(&c->n_tag_waits);
    out->bytes_sent_from_device = atomic_load(&c->n_from_dev);
    out->bytes_received_into_device = atomic_load(&c->n_into_dev);
    out->bytes_staged = atomic_load(&c->n_staged);
    for (int i = 0; i < WEFT_TRANSPORT_COUNT; i++)
        out->bytes_by_transport[i] = atomic_load(&c->n_by_transport[i]);
}
