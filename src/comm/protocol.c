/* The activation / GET / data protocol on the engine thread. */
#include <stdlib.h>
#include <string.h>

#include "comm/comm_internal.h"
#include "util/log.h"

/* ---- rendezvous table ----------------------------------------------------- */

static pending_t **bucket(weft_comm_t *c, int peer, uint64_t key, uint32_t v, int kind)
{
    uint64_t h = key * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)v << 20) ^ ((uint64_t)peer << 8) ^
                 (uint64_t)kind;
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
                                 "send waits for the GET of"};
    int n = 0;
    for (int i = 0; i < WEFT_COMM_BUCKETS; i++)
        for (pending_t *p = c->table[i]; p; p = p->next)
            if (n++ < 32)
                weft_error("stall: comm: %s data %llu v%u (peer rank %d)", what[p->kind],
                           (unsigned long long)p->key, p->version, p->peer);
    weft_error("stall: comm: %d rendezvous open, %d fetches in flight, %d throttled", n,
               c->ndata_inflight, c->nthrottled);
}

/* ---- tile layout on the wire ----------------------------------------------- */

/* A strided tile is described to MPI as a vector of columns, so that a
 * LAPACK-layout tile travels without a packing copy of ours. */
static MPI_Datatype tile_type(const weft_data_copy_t *cp)
{
    const weft_data_t *d = cp->data;
    MPI_Datatype t;
    MPI_Type_vector(d->cols, (int)((size_t)d->rows * d->elem), (int)((size_t)cp->ld * d->elem),
                    MPI_BYTE, &t);
    MPI_Type_commit(&t);
    return t;
}

static void pack_tile(const weft_data_copy_t *cp, void *out)
{
    const weft_data_t *d = cp->data;
    size_t col = (size_t)d->rows * d->elem;
    for (int j = 0; j < d->cols; j++)
        memcpy((char *)out + j * col, (const char *)cp->ptr + (size_t)j * cp->ld * d->elem, col);
}

static void unpack_tile(weft_data_copy_t *cp, const void *in)
{
    const weft_data_t *d = cp->data;
    size_t col = (size_t)d->rows * d->elem;
    for (int j = 0; j < d->cols; j++)
        memcpy((char *)cp->ptr + (size_t)j * cp->ld * d->elem, (const char *)in + j * col, col);
}

static void task_done(weft_comm_t *c, weft_task_t *t, int status)
{
    c->cfg.done(c->cfg.done_arg, t, status);
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

static int send_ctrl(weft_comm_t *c, msg_hdr_t *m, size_t bytes, int dest)
{
    MPI_Request r;
    MPI_Isend(m, (int)bytes, MPI_BYTE, dest, WEFT_COMM_CTRL_TAG, c->cfg.comm, &r);
    return weft_comm_post(c, r, free_buf, m, NULL);
}

/* ---- sending side ------------------------------------------------------------ */

static void send_finished(weft_comm_t *c, void *a, void *b)
{
    weft_task_t *t = a;
    weft_data_t *d = t->flow[0].data;
    weft_data_lock(d);
    weft_data_copy_reader_release_locked(t->flow[0].copy);
    weft_data_unlock(d);
    if (b) MPI_Type_free(&((weft_comm_action_t *)t->action)->dtype);
    task_done(c, t, WEFT_SUCCESS);
}

static void eager_sent(weft_comm_t *c, void *a, void *b)
{
    free(b);
    send_finished(c, a, NULL);
}

static void handle_send(weft_comm_t *c, weft_task_t *t)
{
    weft_comm_action_t *act = t->action;
    weft_data_t *d = t->flow[0].data;
    weft_data_lock(d);
    weft_data_copy_t *cp = weft_data_newest_copy_locked(d, 0);
    if (cp) weft_data_copy_reader_acquire_locked(cp);
    weft_data_unlock(d);
    if (!cp || cp->device != 0) {
        weft_error("send of data %llu v%u: no host copy at the newest version",
                   (unsigned long long)d->key, act->version);
        task_done(c, t, WEFT_ERR_INTERNAL);
        return;
    }
    t->flow[0].copy = cp;
    int eager = d->bytes <= c->cfg.eager_limit;
    size_t bytes = sizeof(msg_hdr_t) + (eager ? d->bytes : 0);
    msg_hdr_t *m = malloc(bytes);
    *m = (msg_hdr_t){.type = MSG_ACTIVATE, .src = c->rank, .key = d->key,
                     .version = act->version, .rows = d->rows, .cols = d->cols,
                     .elem = (int32_t)d->elem, .eager = eager, .bytes = (int64_t)d->bytes};
    atomic_fetch_add(&c->n_act, 1);
    if (eager) {
        pack_tile(cp, m + 1);
        atomic_fetch_add(&c->n_eager, 1);
        atomic_fetch_add(&c->n_bytes_out, (long long)d->bytes);
        MPI_Request r;
        MPI_Isend(m, (int)bytes, MPI_BYTE, act->peer, WEFT_COMM_CTRL_TAG, c->cfg.comm, &r);
        weft_comm_post(c, r, eager_sent, t, m);
        return;
    }
    pending_t *p = table_put(c, PEND_SEND, act->peer, d->key, act->version);
    p->task = t;
    send_ctrl(c, m, bytes, act->peer);
}

static void on_get(weft_comm_t *c, const msg_hdr_t *m)
{
    pending_t *p = table_take(c, PEND_SEND, m->src, m->key, m->version);
    if (!p) {
        weft_error("GET from rank %d for data %llu v%u that this rank never announced", m->src,
                   (unsigned long long)m->key, m->version);
        return;
    }
    weft_task_t *t = p->task;
    free(p);
    weft_data_copy_t *cp = t->flow[0].copy;
    weft_comm_action_t *act = t->action;
    act->dtype = tile_type(cp);
    MPI_Request r;
    MPI_Isend(cp->ptr, 1, act->dtype, m->src, m->tag, c->cfg.comm, &r);
    atomic_fetch_add(&c->n_bytes_out, (long long)cp->data->bytes);
    weft_comm_post(c, r, send_finished, t, act);
}

/* ---- receiving side ------------------------------------------------------------ */

static int shape_matches(weft_comm_t *c, const weft_data_t *d, const msg_hdr_t *m)
{
    if (m->rows == d->rows && m->cols == d->cols && (size_t)m->elem == d->elem) return 1;
    weft_error("rejected data %llu v%u from rank %d: it is %d x %d of %d-byte elements, this "
               "rank declared %d x %d of %zu-byte elements", (unsigned long long)m->key,
               m->version, m->src, m->rows, m->cols, m->elem, d->rows, d->cols, d->elem);
    atomic_fetch_add(&c->n_rejected, 1);
    return 0;
}

/* The host copy a RECV writes into, created when the rank has none. */
static weft_data_copy_t *recv_target(weft_data_t *d)
{
    weft_data_lock(d);
    weft_data_copy_t *cp = d->copies[0];
    if (!cp) {
        void *p = weft_host_alloc(d->bytes);
        if (p) cp = weft_data_copy_attach(d, 0, p, d->rows, WEFT_MEM_RUNTIME, weft_host_free, NULL);
        if (!cp) weft_host_free(NULL, p, d->bytes);
    }
    if (cp) cp->xfer = WEFT_XFER_UNDER;
    weft_data_unlock(d);
    return cp;
}

static void recv_finished(weft_comm_t *c, void *a, void *b)
{
    weft_task_t *t = a;
    weft_comm_action_t *act = t->action;
    weft_data_t *d = t->flow[0].data;
    if (b) {
        MPI_Type_free(&act->dtype);
        c->ndata_inflight--;
        atomic_fetch_add(&c->n_bytes_in, (long long)d->bytes);
    }
    weft_data_lock(d);
    weft_data_copied_locked(d, 0, act->version);
    weft_data_unlock(d);
    task_done(c, t, WEFT_SUCCESS);
}

static void fetch(weft_comm_t *c, weft_task_t *t, weft_data_copy_t *cp, int src)
{
    weft_comm_action_t *act = t->action;
    weft_data_t *d = t->flow[0].data;
    int tag = c->next_tag;
    c->next_tag = c->next_tag >= c->tag_ub ? WEFT_COMM_FIRST_DATA_TAG : c->next_tag + 1;
    act->dtype = tile_type(cp);
    MPI_Request r;
    MPI_Irecv(cp->ptr, 1, act->dtype, src, tag, c->cfg.comm, &r);
    weft_comm_post(c, r, recv_finished, t, act);
    c->ndata_inflight++;
    msg_hdr_t *g = malloc(sizeof *g);
    *g = (msg_hdr_t){.type = MSG_GET, .src = c->rank, .key = d->key, .version = act->version,
                     .tag = tag};
    atomic_fetch_add(&c->n_get, 1);
    send_ctrl(c, g, sizeof *g, src);
}

static int throttle(weft_comm_t *c, pending_t *p)
{
    if (c->nthrottled == c->throttled_cap) {
        int cap = c->throttled_cap ? c->throttled_cap * 2 : 64;
        pending_t **v = realloc(c->throttled, sizeof *v * (size_t)cap);
        if (!v) return WEFT_ERR_NOMEM;
        c->throttled = v;
        c->throttled_cap = cap;
    }
    c->throttled[c->nthrottled++] = p;
    return WEFT_SUCCESS;
}

/* Both halves are here: the RECV task and its activation. */
static void start_recv(weft_comm_t *c, weft_task_t *t, msg_hdr_t *m)
{
    weft_data_t *d = t->flow[0].data;
    if (!shape_matches(c, d, m)) {
        free(m);
        task_done(c, t, WEFT_ERR_INVALID);
        return;
    }
    if (!m->eager && c->ndata_inflight >= c->cfg.max_requests) {
        pending_t *p = calloc(1, sizeof *p);
        *p = (pending_t){.task = t, .act = m, .peer = m->src};
        if (throttle(c, p) == 0) return;
    }
    weft_data_copy_t *cp = recv_target(d);
    if (!cp) {
        weft_error("out of host memory receiving data %llu", (unsigned long long)d->key);
        free(m);
        task_done(c, t, WEFT_ERR_NOMEM);
        return;
    }
    t->flow[0].copy = cp;
    if (m->eager) {
        unpack_tile(cp, m + 1);
        atomic_fetch_add(&c->n_bytes_in, (long long)d->bytes);
        recv_finished(c, t, NULL);
    } else {
        fetch(c, t, cp, m->src);
    }
    free(m);
}

int weft_comm_start_throttled(weft_comm_t *c)
{
    int started = 0;
    while (c->nthrottled > 0 && c->ndata_inflight < c->cfg.max_requests) {
        /* Highest priority first: the critical path waits on it. */
        int best = 0;
        for (int i = 1; i < c->nthrottled; i++)
            if (c->throttled[i]->task->priority > c->throttled[best]->task->priority) best = i;
        pending_t *p = c->throttled[best];
        c->throttled[best] = c->throttled[--c->nthrottled];
        weft_task_t *t = p->task;
        msg_hdr_t *m = p->act;
        free(p);
        start_recv(c, t, m);
        started = 1;
    }
    return started;
}

static void on_activation(weft_comm_t *c, const msg_hdr_t *m, size_t bytes)
{
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
        on_activation(c, m, sizeof *m + (m->eager ? (size_t)m->bytes : 0));
    else if (m->type == MSG_GET)
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
