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
#include "util/log.h"

static weft_device_t *local_dev(weft_comm_t *c, int index)
{
    return index > 0 && index <= c->cfg.ndevices ? c->cfg.devices[index] : NULL;
}

/* Columns [j0, j0 + n) of a copy with leading dimension ld, for MPI. */
static MPI_Datatype cols_type(const weft_data_t *d, int64_t ld, int n)
{
    MPI_Datatype t;
    MPI_Type_vector(n, (int)((size_t)d->rows * d->elem), (int)((size_t)ld * d->elem), MPI_BYTE, &t);
    MPI_Type_commit(&t);
    return t;
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
    if (x->rendezvous) {
        c->ndata_inflight--;
        atomic_fetch_add(&c->n_bytes_in, (long long)d->bytes);
        atomic_fetch_add(&c->n_by_transport[x->counter], (long long)d->bytes);
    }
    if (x->copy->device > 0) atomic_fetch_add(&c->n_into_dev, (long long)d->bytes);
    weft_data_lock(d);
    weft_data_copy_reader_release_locked(x->copy);
    if (x->status == WEFT_SUCCESS) weft_data_copied_locked(d, x->copy->device, act->version);
    weft_data_unlock(d);
    bounce_put(c, x->bounce);
    int status = x->status;
    act->xfer = NULL;
    free(x);
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
    free(x);
    weft_comm_task_done(c, t, status);
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

static void mpi_recv_done(weft_comm_t *c, void *a, void *b)
{
    MPI_Type_free(&((weft_comm_action_t *)((xfer_t *)a)->t->action)->dtype);
    weft_xfer_recv_finished(c, a);
}

static void mpi_send_done(weft_comm_t *c, void *a, void *b)
{
    MPI_Type_free(&((weft_comm_action_t *)((xfer_t *)a)->t->action)->dtype);
    weft_xfer_send_finished(c, a);
}

static void send_get(weft_comm_t *c, xfer_t *x, int mode, int tag, int chunk_cols)
{
    const weft_data_t *d = x->t->flow[0].data;
    msg_hdr_t *g = calloc(1, sizeof *g);
    *g = (msg_hdr_t){.type = MSG_GET,
                     .src = c->rank,
                     .key = d->key,
                     .version = ((weft_comm_action_t *)x->t->action)->version,
                     .mode = mode,
                     .tag = tag,
                     .chunk_cols = chunk_cols};
    atomic_fetch_add(&c->n_get, 1);
    weft_comm_send_ctrl(c, g, x->peer);
}

static void mpi_recv_start(weft_comm_t *c, xfer_t *x)
{
    weft_comm_action_t *act = x->t->action;
    const weft_data_t *d = x->copy->data;
    x->tag = weft_comm_next_tags(c, 1);
    act->dtype = cols_type(d, x->copy->ld, d->cols);
    MPI_Request r;
    MPI_Irecv(x->copy->ptr, 1, act->dtype, x->peer, x->tag, c->cfg.comm, &r);
    weft_comm_post(c, r, mpi_recv_done, x, NULL);
    send_get(c, x, WEFT_TRANSPORT_MPI, x->tag, 0);
}

static void mpi_send_start(weft_comm_t *c, xfer_t *x, int tag)
{
    weft_comm_action_t *act = x->t->action;
    const weft_data_t *d = x->copy->data;
    act->dtype = cols_type(d, x->copy->ld, d->cols);
    MPI_Request r;
    MPI_Isend(x->copy->ptr, 1, act->dtype, x->peer, tag, c->cfg.comm, &r);
    weft_comm_post(c, r, mpi_send_done, x, NULL);
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
    xfer_t *x = a;
    if (b) MPI_Type_free((MPI_Datatype *)b), free(b);
    if (--x->left > 0) return;
    if (x->t->kind == WEFT_TASK_RECV)
        weft_xfer_recv_finished(c, x);
    else
        weft_xfer_send_finished(c, x);
}

static void chunk_copied(weft_comm_t *c, void *a, void *b) { chunk_over(c, a, NULL); }

/* Chunk k straight between MPI and a host copy (no bounce needed). */
static void chunk_host_mpi(weft_comm_t *c, xfer_t *x, int k, int recv)
{
    const weft_data_t *d = x->copy->data;
    MPI_Datatype *t = malloc(sizeof *t);
    *t = cols_type(d, x->copy->ld, chunk_width(d, x->chunk_cols, k));
    void *p = col_ptr(d, x->copy->ptr, x->copy->ld, k * x->chunk_cols);
    MPI_Request r;
    if (recv)
        MPI_Irecv(p, 1, *t, x->peer, x->tag + k, c->cfg.comm, &r);
    else
        MPI_Isend(p, 1, *t, x->peer, x->tag + k, c->cfg.comm, &r);
    weft_comm_post(c, r, chunk_over, x, t);
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
    return weft_comm_wait_device(c, x->dev, ev, done, x, (void *)(intptr_t)(k + 1), &x->status);
}

/* Chunks, tags and bounce buffer of a staged transfer (tag < 0: new tags). */
static int staged_prepare(weft_comm_t *c, xfer_t *x, int chunk_cols, int tag)
{
    const weft_data_t *d = x->copy->data;
    x->chunk_cols = chunk_cols;
    x->nchunks = x->left = nchunks_of(d, chunk_cols);
    x->tag = tag >= 0 ? tag : weft_comm_next_tags(c, x->nchunks);
    x->dev = local_dev(c, x->copy->device);
    if (!x->dev) return WEFT_SUCCESS; /* a host copy: chunks go straight to MPI */
    x->bounce = bounce_get(c, d->bytes, x->dev);
    if (!x->bounce) {
        weft_error("staged transfer of data %llu: no host memory for a %zu-byte bounce buffer",
                   (unsigned long long)d->key, d->bytes);
        return WEFT_ERR_NOMEM;
    }
    atomic_fetch_add(&c->n_staged, (long long)d->bytes);
    return WEFT_SUCCESS;
}

/* Receiver, device target: chunk k arrived in the bounce buffer. */
static void staged_chunk_arrived(weft_comm_t *c, void *a, void *b)
{
    xfer_t *x = a;
    int k = (int)(intptr_t)b - 1;
    if (chunk_copy(c, x, k, 1, chunk_copied) != WEFT_SUCCESS) {
        x->status = WEFT_ERR_INTERNAL;
        chunk_over(c, x, NULL);
    }
}

/* No bounce buffer for x: it ends now, failed (the one chunk_over call
 * that finishes a transfer). */
static void staged_nomem(weft_comm_t *c, xfer_t *x)
{
    x->status = WEFT_ERR_NOMEM;
    x->left = 1;
    chunk_over(c, x, NULL);
}

static void staged_recv_start(weft_comm_t *c, xfer_t *x)
{
    const weft_data_t *d = x->copy->data;
    size_t col = (size_t)d->rows * d->elem;
    size_t chunk = c->cfg.staged_chunk ? c->cfg.staged_chunk : (4u << 20);
    if (staged_prepare(c, x, chunk / col > 0 ? (int)(chunk / col) : 1, -1) != WEFT_SUCCESS) {
        staged_nomem(c, x);
        return;
    }
    for (int k = 0; k < x->nchunks; k++) {
        if (!x->dev) {
            chunk_host_mpi(c, x, k, 1);
            continue;
        }
        MPI_Request r;
        int bytes = (int)(chunk_width(d, x->chunk_cols, k) * col);
        MPI_Irecv(bounce_chunk(x, k), bytes, MPI_BYTE, x->peer, x->tag + k, c->cfg.comm, &r);
        weft_comm_post(c, r, staged_chunk_arrived, x, (void *)(intptr_t)(k + 1));
    }
    send_get(c, x, WEFT_TRANSPORT_STAGED, x->tag, x->chunk_cols);
}

/* Sender, device source: chunk k is in the bounce buffer, send it. */
static void staged_chunk_ready(weft_comm_t *c, void *a, void *b)
{
    xfer_t *x = a;
    const weft_data_t *d = x->copy->data;
    int k = (int)(intptr_t)b - 1;
    MPI_Request r;
    int bytes = (int)((size_t)chunk_width(d, x->chunk_cols, k) * d->rows * d->elem);
    MPI_Isend(bounce_chunk(x, k), bytes, MPI_BYTE, x->peer, x->tag + k, c->cfg.comm, &r);
    weft_comm_post(c, r, chunk_over, x, NULL);
}

static void staged_send_start(weft_comm_t *c, xfer_t *x, const msg_hdr_t *get)
{
    const weft_data_t *d = x->copy->data;
    if (staged_prepare(c, x, get->chunk_cols > 0 ? get->chunk_cols : d->cols, get->tag) !=
        WEFT_SUCCESS) {
        staged_nomem(c, x);
        return;
    }
    for (int k = 0; k < x->nchunks; k++) {
        if (!x->dev) {
            chunk_host_mpi(c, x, k, 0);
            continue;
        }
        int rc = chunk_copy(c, x, k, 0, staged_chunk_ready);
        if (rc != WEFT_SUCCESS) {
            x->status = rc;
            chunk_over(c, x, NULL);
        }
    }
}

/* ---- ipc: pull from the sender's mapped zone ------------------------------- */

static void ipc_pulled(weft_comm_t *c, void *a, void *b)
{
    xfer_t *x = a;
    const weft_data_t *d = x->copy->data;
    msg_hdr_t *m = calloc(1, sizeof *m);
    *m = (msg_hdr_t){.type = MSG_DONE,
                     .src = c->rank,
                     .key = d->key,
                     .version = ((weft_comm_action_t *)x->t->action)->version};
    weft_comm_send_ctrl(c, m, x->peer);
    weft_xfer_recv_finished(c, x);
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
    if (rc == WEFT_SUCCESS) rc = weft_comm_wait_device(c, by, ev, ipc_pulled, x, NULL, &x->status);
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
