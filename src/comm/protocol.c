/* The control plane on the engine thread: activation, GET and DONE
 * messages, and the table that pairs each with its task. The bytes
 * themselves move in transfer.c. */
#include <stdlib.h>
#include <string.h>

#include "comm/comm_internal.h"
#include "trace/trace.h"
#include "util/log.h"

/* ---- rendezvous table ----------------------------------------------------- */

static pending_t **bucket(weft_comm_t *c, int peer, uint64_t key, uint32_t v, int kind)
{
    uint64_t h =
        key * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)v << 20) ^ ((uint64_t)peer << 8) ^ (uint64_t)kind;
    h ^= h >> 29;
    return &c->table[h % WEFT_COMM_BUCKETS];
}

static pending_t *table_take(weft_comm_t *c, int kind, int peer, uint64_t key, uint32_t v)
{
    for (pending_t **pp = bucket(c, peer, key, v, kind); *pp; pp = &(*pp)->next) {
        pending_t *p = *pp;
        if (p->kind == kind && p->peer == peer && p->key == key && p->version == v) {
            *pp = p->next;
            return p;
        }
    }
    return NULL;
}

static pending_t *table_put(weft_comm_t *c, int kind, int peer, uint64_t key, uint32_t v)
{
    pending_t *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    *p = (pending_t){.kind = kind, .peer = peer, .key = key, .version = v};
    pending_t **b = bucket(c, peer, key, v, kind);
    p->next = *b;
    *b = p;
    return p;
}

void weft_comm_table_clear(weft_comm_t *c)
{
    for (int i = 0; i < WEFT_COMM_BUCKETS; i++) {
        while (c->table[i]) {
            pending_t *p = c->table[i];
            c->table[i] = p->next;
            free(p->act);
            free(p);
        }
    }
}

void weft_comm_table_dump(weft_comm_t *c)
{
    static const char *what[] = {"receive waits for the activation of",
                                 "activation arrived, no receive inserted yet for",
                                 "send waits for the GET (or DONE) of"};
    int n = 0;
    for (int i = 0; i < WEFT_COMM_BUCKETS; i++)
        for (pending_t *p = c->table[i]; p; p = p->next)
            if (n++ < 32)
                weft_error("stall: comm: %s data %llu v%u (peer rank %d)", what[p->kind],
                           (unsigned long long)p->key, p->version, p->peer);
    weft_error("stall: comm: %d rendezvous open, %d fetches in flight, %d throttled", n,
               c->ndata_inflight, c->nthrottled);
}

void weft_comm_task_done(weft_comm_t *c, weft_task_t *t, int status)
{
    c->cfg.done(c->cfg.done_arg, t, status);
}

int weft_comm_next_tags(weft_comm_t *c, int n)
{
    if (c->next_tag + n > c->tag_ub) c->next_tag = WEFT_COMM_FIRST_DATA_TAG;
    int tag = c->next_tag;
    c->next_tag += n;
    return tag;
}

/* ---- control messages ------------------------------------------------------ */

static void on_ctrl(weft_comm_t *c, void *a, void *b);

static int post_ctrl_recv(weft_comm_t *c, int slot)
{
    MPI_Request r;
    ctrl_slot_t *s = &c->ctrl[slot];
    MPI_Irecv(s->buf, (int)s->bytes, MPI_BYTE, MPI_ANY_SOURCE, WEFT_COMM_CTRL_TAG, c->cfg.comm, &r);
    return weft_comm_post(c, r, on_ctrl, s, NULL);
}

int weft_comm_ctrl_start(weft_comm_t *c)
{
    for (int i = 0; i < WEFT_COMM_NCTRL; i++) {
        c->ctrl[i].bytes = sizeof(msg_hdr_t) + c->cfg.eager_limit;
        c->ctrl[i].buf = malloc(c->ctrl[i].bytes);
        if (!c->ctrl[i].buf || post_ctrl_recv(c, i) != 0) return WEFT_ERR_NOMEM;
    }
    return WEFT_SUCCESS;
}

void weft_comm_ctrl_stop(weft_comm_t *c)
{
    for (int i = 0; i < c->nreq; i++) {
        if (c->cbs[i].fn != on_ctrl) continue;
        MPI_Cancel(&c->reqs[i]);
        MPI_Wait(&c->reqs[i], MPI_STATUS_IGNORE);
    }
    for (int i = 0; i < WEFT_COMM_NCTRL; i++) free(c->ctrl[i].buf);
}

static void free_buf(weft_comm_t *c, void *a, void *b) { free(a); }

static size_t msg_bytes(const msg_hdr_t *m)
{
    return sizeof *m + (m->type == MSG_ACTIVATE && m->eager ? (size_t)m->bytes : 0);
}

int weft_comm_send_ctrl(weft_comm_t *c, msg_hdr_t *m, int dest)
{
    MPI_Request r;
    MPI_Isend(m, (int)msg_bytes(m), MPI_BYTE, dest, WEFT_COMM_CTRL_TAG, c->cfg.comm, &r);
    return weft_comm_post(c, r, free_buf, m, NULL);
}

/* ---- sending side ------------------------------------------------------------ */

/* The copy a send reads: from device memory when GPU-aware sends are on,
 * otherwise the newest version brought to host first. */
static int send_copy(weft_comm_t *c, weft_data_t *d, weft_data_copy_t **out)
{
    weft_data_lock(d);
    weft_data_copy_t *cp = weft_data_newest_copy_locked(d, 0);
    int ok = cp && (cp->device == 0 || c->cfg.gpu_aware_send);
    if (ok) weft_data_copy_reader_acquire_locked(cp);
    weft_data_unlock(d);
    if (ok) {
        *out = cp;
        return WEFT_SUCCESS;
    }
    if (!cp || !c->cfg.host_copy) return WEFT_ERR_INTERNAL;
    return c->cfg.host_copy(c->cfg.copy_arg, d, 0, out);
}

static void eager_sent(weft_comm_t *c, void *a, void *b)
{
    free(b);
    weft_xfer_send_finished(c, a);
}

static void handle_send(weft_comm_t *c, weft_task_t *t)
{
    weft_comm_action_t *act = t->action;
    weft_data_t *d = t->flow[0].data;
    xfer_t *x = calloc(1, sizeof *x);
    int rc = x ? send_copy(c, d, &x->copy) : WEFT_ERR_NOMEM;
    if (rc != WEFT_SUCCESS) {
        weft_error("send of data %llu v%u: no copy at the newest version (%s)",
                   (unsigned long long)d->key, act->version, weft_strerror(rc));
        free(x);
        weft_comm_task_done(c, t, WEFT_ERR_INTERNAL);
        return;
    }
    x->t = t;
    x->peer = act->peer;
    x->t0 = weft_trace_stamp(c->cfg.trace);
    act->xfer = x;
    t->flow[0].copy = x->copy;
    /* Tiles in device memory always take the rendezvous: the receiver
     * picks a transport that reads them where they are. */
    int eager = x->copy->device == 0 && d->bytes <= c->cfg.eager_limit;
    msg_hdr_t *m = calloc(1, sizeof *m + (eager ? d->bytes : 0));
    *m = (msg_hdr_t){.type = MSG_ACTIVATE,
                     .src = c->rank,
                     .key = d->key,
                     .version = act->version,
                     .rows = d->rows,
                     .cols = d->cols,
                     .elem = (int32_t)d->elem,
                     .eager = eager,
                     .bytes = (int64_t)d->bytes};
    weft_xfer_describe(c, x->copy, m);
    atomic_fetch_add(&c->n_act, 1);
    if (eager) {
        const weft_data_copy_t *cp = x->copy;
        size_t col = (size_t)d->rows * d->elem;
        for (int j = 0; j < d->cols; j++)
            memcpy((char *)(m + 1) + j * col, (const char *)cp->ptr + (size_t)j * cp->ld * d->elem,
                   col);
        atomic_fetch_add(&c->n_eager, 1);
        atomic_fetch_add(&c->n_bytes_out, (long long)d->bytes);
        MPI_Request r;
        MPI_Isend(m, (int)msg_bytes(m), MPI_BYTE, act->peer, WEFT_COMM_CTRL_TAG, c->cfg.comm, &r);
        weft_comm_post(c, r, eager_sent, x, m);
        return;
    }
    pending_t *p = table_put(c, PEND_SEND, act->peer, d->key, act->version);
    p->task = t;
    weft_comm_send_ctrl(c, m, act->peer);
}

static void on_get(weft_comm_t *c, const msg_hdr_t *m)
{
    pending_t *p = table_take(c, PEND_SEND, m->src, m->key, m->version);
    if (!p) {
        weft_error("%s from rank %d for data %llu v%u that this rank never announced",
                   m->type == MSG_GET ? "GET" : "DONE", m->src, (unsigned long long)m->key,
                   m->version);
        return;
    }
    weft_task_t *t = p->task;
    free(p);
    xfer_t *x = ((weft_comm_action_t *)t->action)->xfer;
    if (m->type == MSG_REJECT) {
        weft_error("rank %d rejected data %llu v%u (shape mismatch): send failed", m->src,
                   (unsigned long long)m->key, m->version);
        x->status = WEFT_ERR_INVALID;
        weft_xfer_send_finished(c, x);
        return;
    }
    if (m->type == MSG_DONE) {
        /* ipc: the receiver pulled the bytes itself. */
        atomic_fetch_add(&c->n_bytes_out, (long long)t->flow[0].data->bytes);
        if (x->copy->device > 0)
            atomic_fetch_add(&c->n_from_dev, (long long)t->flow[0].data->bytes);
        weft_xfer_send_finished(c, x);
        return;
    }
    weft_xfer_send_start(c, x, m);
}

/* ---- receiving side ------------------------------------------------------------ */

static int shape_matches(weft_comm_t *c, const weft_data_t *d, const msg_hdr_t *m)
{
    if (m->rows == d->rows && m->cols == d->cols && (size_t)m->elem == d->elem) return 1;
    weft_error("rejected data %llu v%u from rank %d: it is %d x %d of %d-byte elements, this "
               "rank declared %d x %d of %zu-byte elements",
               (unsigned long long)m->key, m->version, m->src, m->rows, m->cols, m->elem, d->rows,
               d->cols, d->elem);
    atomic_fetch_add(&c->n_rejected, 1);
    return 0;
}

static int throttle(weft_comm_t *c, weft_task_t *t, msg_hdr_t *m)
{
    if (c->nthrottled == c->throttled_cap) {
        int cap = c->throttled_cap ? c->throttled_cap * 2 : 64;
        pending_t **v = realloc(c->throttled, sizeof *v * (size_t)cap);
        if (!v) return WEFT_ERR_NOMEM;
        c->throttled = v;
        c->throttled_cap = cap;
    }
    pending_t *p = calloc(1, sizeof *p);
    if (!p) return WEFT_ERR_NOMEM;
    *p = (pending_t){.task = t, .act = m, .peer = m->src};
    c->throttled[c->nthrottled++] = p;
    return WEFT_SUCCESS;
}

/* The device the bytes land on: the consumer's, when GPU-aware receives
 * are on; host memory otherwise. */
static int recv_device(weft_comm_t *c, const weft_task_t *t)
{
    const weft_comm_action_t *act = t->action;
    if (!c->cfg.gpu_aware_recv || act->device <= 0 || act->device > c->cfg.ndevices) return 0;
    return act->device;
}

/* Both halves are here: the RECV task and its activation. Returns 1 when
 * it must be retried later (over the limit, or device memory busy). */
static int start_recv(weft_comm_t *c, weft_task_t *t, msg_hdr_t *m)
{
    weft_data_t *d = t->flow[0].data;
    if (!shape_matches(c, d, m)) {
        /* Tell a rendezvous sender, or it would wait for a GET forever. */
        if (!m->eager) {
            msg_hdr_t *r = calloc(1, sizeof *r);
            *r = (msg_hdr_t){
                .type = MSG_REJECT, .src = c->rank, .key = m->key, .version = m->version};
            weft_comm_send_ctrl(c, r, m->src);
        }
        free(m);
        weft_comm_task_done(c, t, WEFT_ERR_INVALID);
        return 0;
    }
    if (!m->eager && c->ndata_inflight >= c->cfg.max_requests) return throttle(c, t, m) == 0;
    int target = recv_device(c, t);
    weft_data_copy_t *cp = NULL;
    int rc = c->cfg.recv_copy(c->cfg.copy_arg, d, target, &cp);
    if (rc == WEFT_AGAIN) return throttle(c, t, m) == 0;
    xfer_t *x = rc == WEFT_SUCCESS ? calloc(1, sizeof *x) : NULL;
    if (!x) {
        weft_error("no memory on device %d to receive data %llu: %s", target,
                   (unsigned long long)d->key, weft_strerror(rc));
        free(m);
        weft_comm_task_done(c, t, rc ? rc : WEFT_ERR_NOMEM);
        return 0;
    }
    *x = (xfer_t){.t = t, .copy = cp, .peer = m->src, .t0 = weft_trace_stamp(c->cfg.trace)};
    ((weft_comm_action_t *)t->action)->xfer = x;
    t->flow[0].copy = cp;
    if (m->eager) {
        x->status = weft_xfer_eager_in(c, x, m + 1);
        atomic_fetch_add(&c->n_bytes_in, (long long)d->bytes);
        weft_xfer_recv_finished(c, x);
    } else {
        x->mode = weft_xfer_choose(c, m, target);
        x->counter = !m->on_device && target == 0 ? WEFT_TRANSPORT_AUTO : x->mode;
        c->ndata_inflight++;
        weft_xfer_recv_start(c, x, m);
    }
    free(m);
    return 0;
}

int weft_comm_start_throttled(weft_comm_t *c)
{
    int started = 0, n = c->nthrottled;
    /* Each waiting receive gets one try a turn, highest priority first. */
    for (int k = 0; k < n && c->nthrottled > 0 && c->ndata_inflight < c->cfg.max_requests; k++) {
        int best = 0;
        for (int i = 1; i < c->nthrottled; i++)
            if (c->throttled[i]->task->priority > c->throttled[best]->task->priority) best = i;
        pending_t *p = c->throttled[best];
        c->throttled[best] = c->throttled[--c->nthrottled];
        weft_task_t *t = p->task;
        msg_hdr_t *m = p->act;
        free(p);
        if (!start_recv(c, t, m)) started = 1;
    }
    return started;
}

static void on_activation(weft_comm_t *c, const msg_hdr_t *m)
{
    size_t bytes = msg_bytes(m);
    msg_hdr_t *copy = malloc(bytes);
    memcpy(copy, m, bytes);
    pending_t *p = table_take(c, PEND_RECV_TASK, m->src, m->key, m->version);
    if (p) {
        weft_task_t *t = p->task;
        free(p);
        start_recv(c, t, copy);
        return;
    }
    p = table_put(c, PEND_ACTIVATION, m->src, m->key, m->version);
    p->act = copy;
}

static void handle_recv(weft_comm_t *c, weft_task_t *t)
{
    weft_comm_action_t *act = t->action;
    weft_data_t *d = t->flow[0].data;
    pending_t *p = table_take(c, PEND_ACTIVATION, act->peer, d->key, act->version);
    if (p) {
        msg_hdr_t *m = p->act;
        free(p);
        start_recv(c, t, m);
        return;
    }
    p = table_put(c, PEND_RECV_TASK, act->peer, d->key, act->version);
    p->task = t;
}

static void on_ctrl(weft_comm_t *c, void *a, void *b)
{
    ctrl_slot_t *s = a;
    msg_hdr_t *m = s->buf;
    if (m->type == MSG_ACTIVATE)
        on_activation(c, m);
    else if (m->type == MSG_GET || m->type == MSG_DONE || m->type == MSG_REJECT)
        on_get(c, m);
    else
        weft_error("unknown control message type %d from rank %d", m->type, m->src);
    post_ctrl_recv(c, (int)(s - c->ctrl));
}

void weft_comm_handle_task(weft_comm_t *c, weft_task_t *t)
{
    if (t->kind == WEFT_TASK_SEND)
        handle_send(c, t);
    else
        handle_recv(c, t);
}
