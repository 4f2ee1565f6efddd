/* Moving a tile's bytes once both ends agreed, by transport:
 *   mpi:    the copies' addresses (host, or device memory MPI can read)
 *           go straight to MPI_Isend/MPI_Irecv, strided tiles described
 *           as a vector of columns;
 *   ipc:    the receiver maps the sender's device zone (once per peer and
 *           device), pulls the tile with a device copy, then sends DONE;
 *   staged: host bounce buffers, pinned, the tile cut in column chunks so
 *           that device copies and network transfers of chunks overlap.
 * Device copies are 2D: a strided tile is converted on the way. */
#include <stdlib.h>
#include <string.h>

#include "comm/comm_internal.h"
#include "trace/trace.h"
#include "util/fault.h"
#include "util/log.h"

static weft_device_t *local_dev(weft_comm_t *c, int index)
{
    return index > 0 && index <= c->cfg.ndevices ? c->cfg.devices[index] : NULL;
}

/* n columns of a copy with leading dimension ld, for MPI. */
static int cols_type(const weft_data_t *d, int64_t ld, int n, MPI_Datatype *out)
{
    MPI_Datatype t;
    if (MPI_Type_vector(n, (int)((size_t)d->rows * d->elem), (int)((size_t)ld * d->elem), MPI_BYTE,
                        &t) != MPI_SUCCESS)
        return WEFT_ERR_MPI;
    if (MPI_Type_commit(&t) != MPI_SUCCESS) {
        MPI_Type_free(&t);
        return WEFT_ERR_MPI;
    }
    *out = t;
    return WEFT_SUCCESS;
}

static char *col_ptr(const weft_data_t *d, void *base, int64_t ld, int j)
{
    return (char *)base + (size_t)j * (size_t)ld * d->elem;
}

/* ---- bounce buffers and ipc mappings, kept for reuse -------------------- */

static bounce_t *bounce_get(weft_comm_t *c, size_t bytes, weft_device_t *dev)
{
    for (bounce_t **pp = &c->bounces; *pp; pp = &(*pp)->next) {
        bounce_t *b = *pp;
        if (b->bytes >= bytes && b->dev == dev) {
            *pp = b->next;
            return b;
        }
    }
    bounce_t *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->bytes = bytes;
    b->ptr = weft_host_alloc(bytes);
    if (!b->ptr) {
        free(b);
        return NULL;
    }
    /* Pinned so the device copies into and out of it are asynchronous. */
    b->dev = dev;
    b->pinned = dev && dev->ops->host_register(dev, b->ptr, bytes) == WEFT_SUCCESS;
    return b;
}

static void bounce_put(weft_comm_t *c, bounce_t *b)
{
    if (!b) return;
    b->next = c->bounces;
    c->bounces = b;
}

static void *ipc_map(weft_comm_t *c, int peer, weft_device_t *by, const msg_hdr_t *m)
{
    for (ipc_map_t *p = c->maps; p; p = p->next)
        if (p->peer == peer && p->by == by->index && p->len == (size_t)m->ipc_len &&
            memcmp(p->handle, m->ipc, p->len) == 0)
            return p->base;
    ipc_map_t *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    if (by->ops->ipc_import(by, m->ipc, (size_t)m->ipc_len, &p->base) != WEFT_SUCCESS) {
        free(p);
        return NULL;
    }
    p->peer = peer;
    p->by = by->index;
    p->len = (size_t)m->ipc_len;
    memcpy(p->handle, m->ipc, p->len);
    p->next = c->maps;
    c->maps = p;
    return p->base;
}

void weft_xfer_release_all(weft_comm_t *c)
{
    while (c->maps) {
        ipc_map_t *p = c->maps;
        c->maps = p->next;
        weft_device_t *by = local_dev(c, p->by);
        if (by) by->ops->ipc_close(by, p->base);
        free(p);
    }
    while (c->bounces) {
        bounce_t *b = c->bounces;
        c->bounces = b->next;
        if (b->pinned) b->dev->ops->host_unregister(b->dev, b->ptr);
        weft_host_free(NULL, b->ptr, b->bytes);
        free(b);
    }
}

/* ---- what the activation says about the sender's copy -------------------- */

static size_t zone_handle(weft_comm_t *c, weft_device_t *dev)
{
    size_t *len = &c->zone_handle_len[dev->index];
    if (*len == 0) {
        size_t n = WEFT_IPC_HANDLE_MAX;
        int ok = (dev->caps & WEFT_DEVCAP_IPC) &&
                 dev->ops->ipc_export(dev, c->zone_handle[dev->index], &n) == WEFT_SUCCESS;
        *len = ok ? n : (size_t)-1;
    }
    return *len == (size_t)-1 ? 0 : *len;
}

void weft_xfer_describe(weft_comm_t *c, const weft_data_copy_t *cp, msg_hdr_t *m)
{
    m->node = c->node_of[c->rank];
    m->ld = cp->ld;
    weft_device_t *dev = local_dev(c, cp->device);
    if (!dev) return;
    m->on_device = 1;
    m->dev_type = (int32_t)dev->ops->type;
    m->dev_caps = dev->caps;
    char *base = dev->zone_base, *p = cp->ptr;
    if (!base || p < base || p >= base + dev->zone_bytes) return; /* user memory: no ipc */
    size_t n = zone_handle(c, dev);
    if (n == 0) return;
    m->offset = p - base;
    m->ipc_len = (int32_t)n;
    memcpy(m->ipc, c->zone_handle[dev->index], n);
}

/* ---- choosing the transport ------------------------------------------------ */

/* A local device that can pull from an ipc-mapped zone of type `type` into
 * a copy on `target`. */
static weft_device_t *ipc_device(weft_comm_t *c, int type, int target)
{
    weft_device_t *t = local_dev(c, target);
    if (t) return (int)t->ops->type == type && (t->caps & WEFT_DEVCAP_IPC) ? t : NULL;
    for (int i = 1; i <= c->cfg.ndevices; i++) {
        weft_device_t *d = c->cfg.devices[i];
        if ((int)d->ops->type == type && (d->caps & WEFT_DEVCAP_IPC)) return d;
    }
    return NULL;
}

#ifdef WEFT_GPU_AWARE_COMM
static int mpi_reads(const weft_comm_t *c, int on_device, unsigned caps)
{
    return !on_device || (caps & WEFT_DEVCAP_HOST_ADDRESSABLE) || c->cfg.mpi_device_ok;
}
#endif

int weft_xfer_choose(weft_comm_t *c, const msg_hdr_t *m, int target)
{
#ifndef WEFT_GPU_AWARE_COMM
    return WEFT_TRANSPORT_MPI; /* device paths compiled out: host to host */
#else
    weft_device_t *t = local_dev(c, target);
    int mpi_ok =
        mpi_reads(c, m->on_device, m->dev_caps) && mpi_reads(c, t != NULL, t ? t->caps : 0);
    int ipc_ok = m->on_device && m->ipc_len > 0 && m->node == c->node_of[c->rank] &&
                 ipc_device(c, m->dev_type, target) != NULL;
    int want = c->cfg.transport;
    if (want == WEFT_TRANSPORT_IPC && ipc_ok) return WEFT_TRANSPORT_IPC;
    if (want == WEFT_TRANSPORT_MPI && mpi_ok) return WEFT_TRANSPORT_MPI;
    if (want == WEFT_TRANSPORT_STAGED) return WEFT_TRANSPORT_STAGED;
    if (want != WEFT_TRANSPORT_AUTO && !c->warned_transport) {
        weft_warn("comm_transport: this transfer cannot use the transport asked for; choosing "
                  "another (reported once)");
        c->warned_transport = 1;
    }
    if (!m->on_device && !t) return WEFT_TRANSPORT_MPI;
    if (ipc_ok) return WEFT_TRANSPORT_IPC;
    return mpi_ok ? WEFT_TRANSPORT_MPI : WEFT_TRANSPORT_STAGED;
#endif
}

/* ---- ends of a transfer ---------------------------------------------------- */

static const char *transport_name(int mode)
{
    static const char *names[] = {"host", "mpi", "ipc", "staged"};
    return mode >= 0 && mode < 4 ? names[mode] : "?";
}

void weft_xfer_recv_finished(weft_comm_t *c, xfer_t *x)
{
    weft_task_t *t = x->t;
    weft_comm_action_t *act = t->action;
    weft_data_t *d = t->flow[0].data;
    weft_trace_slice(c->cfg.trace, c->cfg.trace_track, x->t0, weft_trace_now(), "net recv", "net",
                     "\"key\":%llu,\"bytes\":%zu,\"transport\":\"%s\",\"peer\":%d,\"device\":%d",
                     (unsigned long long)d->key, d->bytes,
                     x->rendezvous ? transport_name(x->counter) : "eager", x->peer,
                     x->copy->device);
    weft_comm_xfer_listed(c, x, 0);
    if (x->rendezvous) c->ndata_inflight--;
    if (x->rendezvous && x->status == WEFT_SUCCESS) {
        atomic_fetch_add(&c->n_bytes_in, (long long)d->bytes);
        atomic_fetch_add(&c->n_by_transport[x->counter], (long long)d->bytes);
    }
    if (x->copy->device > 0 && x->status == WEFT_SUCCESS)
        atomic_fetch_add(&c->n_into_dev, (long long)d->bytes);
    weft_data_lock(d);
    weft_data_copy_reader_release_locked(x->copy);
    if (x->status == WEFT_SUCCESS) weft_data_copied_locked(d, x->copy->device, act->version);
    weft_data_unlock(d);
    bounce_put(c, x->bounce);
    int status = x->status;
    act->xfer = NULL;
    weft_comm_task_done(c, t, status);
}

void weft_xfer_send_finished(weft_comm_t *c, xfer_t *x)
{
    weft_task_t *t = x->t;
    weft_data_t *d = t->flow[0].data;
    weft_trace_slice(c->cfg.trace, c->cfg.trace_track, x->t0, weft_trace_now(), "net send", "net",
                     "\"key\":%llu,\"bytes\":%zu,\"peer\":%d,\"device\":%d",
                     (unsigned long long)d->key, d->bytes, x->peer, x->copy->device);
    weft_data_lock(d);
    weft_data_copy_reader_release_locked(x->copy);
    weft_data_unlock(d);
    bounce_put(c, x->bounce);
    int status = x->status;
    ((weft_comm_action_t *)t->action)->xfer = NULL;
    weft_comm_task_done(c, t, status);
}

void weft_xfer_part_done(weft_comm_t *c, xfer_t *x)
{
    if (--x->left > 0) return;
    if (x->t->kind == WEFT_TASK_RECV)
        weft_xfer_recv_finished(c, x);
    else
        weft_xfer_send_finished(c, x);
}

static void notice_left(weft_comm_t *c, void *a, void *b) { weft_xfer_part_done(c, a); }

void weft_xfer_fail(weft_comm_t *c, xfer_t *x, int status, const char *what)
{
    int recv = x->t->kind == WEFT_TASK_RECV;
    const weft_data_t *d = x->t->flow[0].data;
    weft_error("%s of data %llu v%u %s rank %d: %s (%s)", recv ? "receive" : "send",
               (unsigned long long)d->key, ((weft_comm_action_t *)x->t->action)->version,
               recv ? "from" : "to", x->peer, what, weft_strerror(status));
    if (x->status != WEFT_SUCCESS) return; /* the peer was told at the first failure */
    x->status = status;
    int type = MSG_ABORT;
    if (recv) {
        /* After the GET the sender's bytes are on their way: they land
         * and are dropped. Before it, nothing will come: the receives
         * posted are cancelled and the sender told not to wait. */
        if (x->get_sent) return;
        weft_comm_cancel_recvs(c, x);
        type = MSG_CANCEL;
    }
    x->left++;
    weft_comm_send_notice(c, x->t, type, x->tag, notice_left, x, NULL);
}

int weft_xfer_eager_in(weft_comm_t *c, xfer_t *x, const void *payload)
{
    weft_data_copy_t *cp = x->copy;
    const weft_data_t *d = cp->data;
    weft_device_t *dev = local_dev(c, cp->device);
    if (!dev) {
        size_t col = (size_t)d->rows * d->elem;
        for (int j = 0; j < d->cols; j++)
            memcpy(col_ptr(d, cp->ptr, cp->ld, j), (const char *)payload + j * col, col);
        return WEFT_SUCCESS;
    }
    /* A small tile for a device consumer goes to the device now, so the
     * task finds it there instead of re-staging a host copy. */
    weft_region_t dst = {cp->ptr, cp->ld}, src = {(void *)payload, d->rows};
    weft_event_t ev;
    int rc = dev->ops->copy_async(dev, WEFT_STREAM_IN, dst, cp->device, src, 0, d->rows, d->cols,
                                  d->elem);
    if (rc == WEFT_SUCCESS) rc = dev->ops->event_record(dev, WEFT_STREAM_IN, &ev);
    if (rc == WEFT_SUCCESS) {
        rc = dev->ops->event_sync(dev, &ev);
        dev->ops->event_destroy(dev, &ev);
    }
    return rc;
}

/* ---- mpi: addresses straight to MPI ------------------------------------------ */

static void mpi_part_done(weft_comm_t *c, void *a, void *b)
{
    MPI_Type_free(&((weft_comm_action_t *)((xfer_t *)a)->t->action)->dtype);
    weft_xfer_part_done(c, a);
}

/* Receiver: the GET naming the transport and the tags the bytes come
 * with; from then on the sender sends. */
static void send_get(weft_comm_t *c, xfer_t *x, int mode, int tag, int chunk_cols)
{
    const weft_data_t *d = x->t->flow[0].data;
    msg_hdr_t *g = weft_comm_alloc(c, sizeof *g);
    if (!g) {
        weft_xfer_fail(c, x, WEFT_ERR_NOMEM, "no memory for the GET");
        return;
    }
    *g = (msg_hdr_t){.type = MSG_GET,
                     .src = c->rank,
                     .key = d->key,
                     .version = ((weft_comm_action_t *)x->t->action)->version,
                     .mode = mode,
                     .tag = tag,
                     .chunk_cols = chunk_cols};
    weft_comm_xfer_listed(c, x, 1);
    int rc = weft_comm_send_ctrl(c, g, x->peer);
    if (rc != WEFT_SUCCESS) {
        weft_comm_xfer_listed(c, x, 0);
        weft_xfer_fail(c, x, rc, "posting the GET failed");
        return;
    }
    x->get_sent = 1;
    atomic_fetch_add(&c->n_get, 1);
}

/* The whole tile by one MPI operation (recv: receive, else send). */
static int mpi_post_tile(weft_comm_t *c, xfer_t *x, int recv, int tag)
{
    weft_comm_action_t *act = x->t->action;
    const weft_data_t *d = x->copy->data;
    int rc = cols_type(d, x->copy->ld, d->cols, &act->dtype);
    if (rc != WEFT_SUCCESS) return rc;
    rc =
        recv
            ? weft_comm_irecv(c, x->copy->ptr, 1, act->dtype, x->peer, tag, mpi_part_done, x, NULL)
            : weft_comm_isend(c, x->copy->ptr, 1, act->dtype, x->peer, tag, mpi_part_done, x, NULL);
    if (rc != WEFT_SUCCESS) {
        MPI_Type_free(&act->dtype);
        return rc;
    }
    x->left++;
    return WEFT_SUCCESS;
}

static void mpi_recv_start(weft_comm_t *c, xfer_t *x)
{
    x->tag = weft_comm_next_tags(c, 1);
    int rc = mpi_post_tile(c, x, 1, x->tag);
    if (rc != WEFT_SUCCESS) {
        weft_xfer_fail(c, x, rc, "posting the receive failed");
        return;
    }
    send_get(c, x, WEFT_TRANSPORT_MPI, x->tag, 0);
}

static void mpi_send_start(weft_comm_t *c, xfer_t *x, int tag)
{
    x->tag = tag;
    int rc = mpi_post_tile(c, x, 0, tag);
    if (rc != WEFT_SUCCESS) weft_xfer_fail(c, x, rc, "posting the send of the bytes failed");
}

/* ---- staged: chunks of columns through host bounce buffers ------------------ */

static int nchunks_of(const weft_data_t *d, int chunk_cols)
{
    return (d->cols + chunk_cols - 1) / chunk_cols;
}

static int chunk_width(const weft_data_t *d, int chunk_cols, int k)
{
    int left = d->cols - k * chunk_cols;
    return left < chunk_cols ? left : chunk_cols;
}

static void chunk_over(weft_comm_t *c, void *a, void *b)
{
    if (b) MPI_Type_free((MPI_Datatype *)b), free(b);
    weft_xfer_part_done(c, a);
}

/* A device copy of a chunk is over: a failure of it fails x. */
static int chunk_copy_ok(weft_comm_t *c, xfer_t *x)
{
    if (x->dev_status != WEFT_SUCCESS && x->status == WEFT_SUCCESS)
        weft_xfer_fail(c, x, x->dev_status, "a device copy of a chunk failed");
    return x->status == WEFT_SUCCESS;
}

static void chunk_copied(weft_comm_t *c, void *a, void *b)
{
    chunk_copy_ok(c, a);
    weft_xfer_part_done(c, a);
}

/* Chunk k straight between MPI and a host copy (no bounce needed). */
static int chunk_host_mpi(weft_comm_t *c, xfer_t *x, int k, int recv)
{
    const weft_data_t *d = x->copy->data;
    MPI_Datatype *t = weft_comm_alloc(c, sizeof *t);
    if (!t) return WEFT_ERR_NOMEM;
    int rc = cols_type(d, x->copy->ld, chunk_width(d, x->chunk_cols, k), t);
    if (rc != WEFT_SUCCESS) {
        free(t);
        return rc;
    }
    void *p = col_ptr(d, x->copy->ptr, x->copy->ld, k * x->chunk_cols);
    rc = recv ? weft_comm_irecv(c, p, 1, *t, x->peer, x->tag + k, chunk_over, x, t)
              : weft_comm_isend(c, p, 1, *t, x->peer, x->tag + k, chunk_over, x, t);
    if (rc != WEFT_SUCCESS) {
        MPI_Type_free(t);
        free(t);
        return rc;
    }
    x->left++;
    return WEFT_SUCCESS;
}

static char *bounce_chunk(const xfer_t *x, int k)
{
    const weft_data_t *d = x->copy->data;
    return (char *)x->bounce->ptr + (size_t)k * x->chunk_cols * d->rows * d->elem;
}

/* A device copy of chunk k between the bounce buffer and the tile (into
 * the tile: receiver; out of it: sender); done(c, x, k + 1) follows it. */
static int chunk_copy(weft_comm_t *c, xfer_t *x, int k, int to_device, weft_comm_cb_fn done)
{
    const weft_data_t *d = x->copy->data;
    weft_region_t tile = {col_ptr(d, x->copy->ptr, x->copy->ld, k * x->chunk_cols), x->copy->ld};
    weft_region_t host = {bounce_chunk(x, k), d->rows};
    int dev = x->copy->device, w = chunk_width(d, x->chunk_cols, k);
    int stream = to_device ? WEFT_STREAM_IN : WEFT_STREAM_OUT;
    weft_event_t ev;
    int rc = to_device
                 ? x->dev->ops->copy_async(x->dev, stream, tile, dev, host, 0, d->rows, w, d->elem)
                 : x->dev->ops->copy_async(x->dev, stream, host, 0, tile, dev, d->rows, w, d->elem);
    if (rc == WEFT_SUCCESS) rc = x->dev->ops->event_record(x->dev, stream, &ev);
    if (rc != WEFT_SUCCESS) return rc;
    rc = weft_comm_wait_device(c, x->dev, ev, done, x, (void *)(intptr_t)(k + 1), &x->dev_status);
    if (rc != WEFT_SUCCESS) {
        int sync = x->dev->ops->event_sync(x->dev, &ev); /* nothing may still write the bounce */
        (void)sync;
        x->dev->ops->event_destroy(x->dev, &ev);
        return rc;
    }
    x->left++;
    return WEFT_SUCCESS;
}

/* Chunks, tags and bounce buffer of a staged transfer (tag < 0: new tags). */
static int staged_prepare(weft_comm_t *c, xfer_t *x, int chunk_cols, int tag)
{
    const weft_data_t *d = x->copy->data;
    x->chunk_cols = chunk_cols;
    x->nchunks = nchunks_of(d, chunk_cols);
    x->tag = tag >= 0 ? tag : weft_comm_next_tags(c, x->nchunks);
    x->dev = local_dev(c, x->copy->device);
    if (!x->dev) return WEFT_SUCCESS; /* a host copy: chunks go straight to MPI */
    x->bounce = weft_fault_hit(c->cfg.fault, WEFT_FAULT_COMM_ALLOC, NULL)
                    ? NULL
                    : bounce_get(c, d->bytes, x->dev);
    if (!x->bounce) return WEFT_ERR_NOMEM;
    atomic_fetch_add(&c->n_staged, (long long)d->bytes);
    return WEFT_SUCCESS;
}

/* Receiver, device target: chunk k arrived in the bounce buffer. */
static void staged_chunk_arrived(weft_comm_t *c, void *a, void *b)
{
    xfer_t *x = a;
    int k = (int)(intptr_t)b - 1;
    int rc = x->status == WEFT_SUCCESS ? chunk_copy(c, x, k, 1, chunk_copied) : WEFT_SUCCESS;
    if (rc != WEFT_SUCCESS) weft_xfer_fail(c, x, rc, "the device copy of a chunk failed");
    weft_xfer_part_done(c, x);
}

/* Posts the receives of every chunk, then the GET; a failure stops it. */
static void staged_recv_start(weft_comm_t *c, xfer_t *x)
{
    const weft_data_t *d = x->copy->data;
    size_t col = (size_t)d->rows * d->elem;
    size_t chunk = c->cfg.staged_chunk ? c->cfg.staged_chunk : (4u << 20);
    int rc = staged_prepare(c, x, chunk / col > 0 ? (int)(chunk / col) : 1, -1);
    for (int k = 0; k < x->nchunks && rc == WEFT_SUCCESS; k++) {
        if (!x->dev) {
            rc = chunk_host_mpi(c, x, k, 1);
            continue;
        }
        int bytes = (int)(chunk_width(d, x->chunk_cols, k) * col);
        rc = weft_comm_irecv(c, bounce_chunk(x, k), bytes, MPI_BYTE, x->peer, x->tag + k,
                             staged_chunk_arrived, x, (void *)(intptr_t)(k + 1));
        if (rc == WEFT_SUCCESS) x->left++;
    }
    if (rc != WEFT_SUCCESS) {
        weft_xfer_fail(c, x, rc, "posting a staged receive failed (or no bounce buffer)");
        return;
    }
    send_get(c, x, WEFT_TRANSPORT_STAGED, x->tag, x->chunk_cols);
}

/* Sender, device source: chunk k is in the bounce buffer, send it. */
static void staged_chunk_ready(weft_comm_t *c, void *a, void *b)
{
    xfer_t *x = a;
    const weft_data_t *d = x->copy->data;
    int k = (int)(intptr_t)b - 1;
    int bytes = (int)((size_t)chunk_width(d, x->chunk_cols, k) * d->rows * d->elem);
    if (chunk_copy_ok(c, x)) {
        int rc = weft_comm_isend(c, bounce_chunk(x, k), bytes, MPI_BYTE, x->peer, x->tag + k,
                                 chunk_over, x, NULL);
        if (rc == WEFT_SUCCESS)
            x->left++;
        else
            weft_xfer_fail(c, x, rc, "posting the send of a chunk failed");
    }
    weft_xfer_part_done(c, x);
}

static void staged_send_start(weft_comm_t *c, xfer_t *x, const msg_hdr_t *get)
{
    const weft_data_t *d = x->copy->data;
    int rc = staged_prepare(c, x, get->chunk_cols > 0 ? get->chunk_cols : d->cols, get->tag);
    for (int k = 0; k < x->nchunks && rc == WEFT_SUCCESS; k++)
        rc = x->dev ? chunk_copy(c, x, k, 0, staged_chunk_ready) : chunk_host_mpi(c, x, k, 0);
    if (rc != WEFT_SUCCESS) weft_xfer_fail(c, x, rc, "starting the staged send failed");
}

/* ---- ipc: pull from the sender's mapped zone ------------------------------- */

/* The pull is over (failed or not): DONE lets the sender drop its reader;
 * the receive ends once that message left. */
static void ipc_pulled(weft_comm_t *c, void *a, void *b)
{
    xfer_t *x = a;
    if (x->dev_status != WEFT_SUCCESS && x->status == WEFT_SUCCESS) {
        weft_error("receive of data %llu from rank %d: the ipc pull failed (%s)",
                   (unsigned long long)x->copy->data->key, x->peer, weft_strerror(x->dev_status));
        x->status = x->dev_status;
    }
    x->left++;
    weft_comm_send_notice(c, x->t, MSG_DONE, 0, notice_left, x, NULL);
    weft_xfer_part_done(c, x);
}

static int ipc_recv_start(weft_comm_t *c, xfer_t *x, const msg_hdr_t *m)
{
    const weft_data_t *d = x->copy->data;
    weft_device_t *by = ipc_device(c, m->dev_type, x->copy->device);
    char *base = by ? ipc_map(c, m->src, by, m) : NULL;
    if (!base) return WEFT_ERR_UNSUPPORTED;
    weft_region_t src = {base + m->offset, m->ld}, dst = {x->copy->ptr, x->copy->ld};
    weft_event_t ev;
    /* The mapped zone is device memory of the peer: name `by` as its side. */
    int rc = by->ops->copy_async(by, WEFT_STREAM_IN, dst, x->copy->device, src, by->index, d->rows,
                                 d->cols, d->elem);
    if (rc == WEFT_SUCCESS) rc = by->ops->event_record(by, WEFT_STREAM_IN, &ev);
    if (rc == WEFT_SUCCESS)
        rc = weft_comm_wait_device(c, by, ev, ipc_pulled, x, NULL, &x->dev_status);
    if (rc == WEFT_SUCCESS) x->left++;
    return rc;
}

/* ---- entry points ---------------------------------------------------------------- */

void weft_xfer_recv_start(weft_comm_t *c, xfer_t *x, const msg_hdr_t *m)
{
    x->rendezvous = 1;
    if (x->mode == WEFT_TRANSPORT_IPC && ipc_recv_start(c, x, m) == WEFT_SUCCESS) return;
    if (x->mode == WEFT_TRANSPORT_IPC) {
        x->counter = WEFT_TRANSPORT_STAGED;
        weft_warn("ipc pull of data %llu from rank %d failed: staging it instead",
                  (unsigned long long)m->key, m->src);
        x->mode = WEFT_TRANSPORT_STAGED;
    }
    if (x->mode == WEFT_TRANSPORT_MPI)
        mpi_recv_start(c, x);
    else
        staged_recv_start(c, x);
}

void weft_xfer_send_start(weft_comm_t *c, xfer_t *x, const msg_hdr_t *get)
{
    const weft_data_t *d = x->copy->data;
    atomic_fetch_add(&c->n_bytes_out, (long long)d->bytes);
    if (x->copy->device > 0) atomic_fetch_add(&c->n_from_dev, (long long)d->bytes);
    if (get->mode == WEFT_TRANSPORT_STAGED)
        staged_send_start(c, x, get);
    else
        mpi_send_start(c, x, get->tag);
}
