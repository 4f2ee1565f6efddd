/* The staged transport, which reaches every pair of copies: the tile is cut
 * in column chunks of about comm_staged_chunk bytes, and a device copy goes
 * through a pinned host bounce buffer, chunk by chunk, so that the device
 * copies and the network transfers of successive chunks overlap. A host
 * copy's chunks go straight to MPI. Bounce buffers are kept for reuse. */
#include <stdlib.h>

#include "comm/comm_internal.h"
#include "util/fault.h"

/* A pinned host buffer, reused by size. */
typedef struct weft_comm_bounce {
    void *ptr;
    size_t bytes;
    weft_device_t *dev; /* the device it serves (its copies are the fast ones) */
    int pinned;
    struct weft_comm_bounce *next;
} bounce_t;

typedef struct staged_state {
    bounce_t *free; /* buffers no transfer holds */
} staged_state_t;

static int staged_open(weft_comm_t *c, void **state)
{
    staged_state_t *s = calloc(1, sizeof *s);
    if (!s) return WEFT_ERR_NOMEM;
    *state = s;
    return WEFT_SUCCESS;
}

static void staged_close(weft_comm_t *c, void *state)
{
    staged_state_t *s = state;
    while (s->free) {
        bounce_t *b = s->free;
        s->free = b->next;
        if (b->pinned) b->dev->ops->host_unregister(b->dev, b->ptr);
        weft_host_free(NULL, b->ptr, b->bytes);
        free(b);
    }
    free(s);
}

static bounce_t *bounce_get(staged_state_t *s, size_t bytes, weft_device_t *dev)
{
    for (bounce_t **pp = &s->free; *pp; pp = &(*pp)->next) {
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

static void staged_release(weft_comm_t *c, void *state, weft_comm_xfer_t *x)
{
    staged_state_t *s = state;
    if (!x->bounce) return;
    if (x->status == WEFT_SUCCESS) atomic_fetch_add(&c->n_staged, (long long)x->copy->data->bytes);
    x->bounce->next = s->free;
    s->free = x->bounce;
    x->bounce = NULL;
}

static int staged_reaches(weft_comm_t *c, void *state, const weft_comm_msg_t *m, int target)
{
    return 1;
}

/* ---- chunks ---------------------------------------------------------------------- */

static int chunk_width(const weft_data_t *d, int chunk_cols, int k)
{
    int left = d->cols - k * chunk_cols;
    return left < chunk_cols ? left : chunk_cols;
}

static char *bounce_chunk(const weft_comm_xfer_t *x, int k)
{
    const weft_data_t *d = x->copy->data;
    return (char *)x->bounce->ptr + (size_t)k * x->chunk_cols * d->rows * d->elem;
}

/* A device copy of a chunk is over: a failure of it fails x. */
static int chunk_copy_ok(weft_comm_t *c, weft_comm_xfer_t *x)
{
    if (x->dev_status != WEFT_SUCCESS && x->status == WEFT_SUCCESS)
        weft_comm__xfer_fail(c, x, x->dev_status, "a device copy of a chunk failed");
    return x->status == WEFT_SUCCESS;
}

static void chunk_copied(weft_comm_t *c, void *a, void *b)
{
    chunk_copy_ok(c, a);
    weft_comm__xfer_part_done(c, a);
}

/* Chunk k straight between MPI and a host copy (no bounce needed). */
static int chunk_host_mpi(weft_comm_t *c, weft_comm_xfer_t *x, int k, int recv)
{
    return weft_comm__post_cols(c, x, k * x->chunk_cols,
                                chunk_width(x->copy->data, x->chunk_cols, k), recv, x->tag + k);
}

/* A device copy of chunk k between the bounce buffer and the tile (into
 * the tile: receiver; out of it: sender); done(c, x, k + 1) follows it. */
static int chunk_copy(weft_comm_t *c, weft_comm_xfer_t *x, int k, int to_device,
                      weft_comm_cb_fn done)
{
    const weft_data_t *d = x->copy->data;
    weft_region_t tile = {weft_comm__col_ptr(d, x->copy->ptr, x->copy->ld, k * x->chunk_cols),
                          x->copy->ld};
    weft_region_t host = {bounce_chunk(x, k), d->rows};
    int dev = x->copy->device, w = chunk_width(d, x->chunk_cols, k);
    int stream = to_device ? WEFT_STREAM_IN : WEFT_STREAM_OUT;
    weft_event_t ev;
    int rc = to_device ? weft_comm__device_copy(c, WEFT_LOG_ERROR, x->dev, stream, tile, dev, host,
                                                0, -1, x, w)
                       : weft_comm__device_copy(c, WEFT_LOG_ERROR, x->dev, stream, host, 0, tile,
                                                dev, -1, x, w);
    if (rc == WEFT_SUCCESS) rc = weft_device_event_record(x->dev, stream, &ev);
    if (rc != WEFT_SUCCESS) return rc;
    rc = weft_comm__wait_device(c, x->dev, ev, done, x, (void *)(intptr_t)(k + 1), &x->dev_status);
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
static int staged_prepare(weft_comm_t *c, staged_state_t *s, weft_comm_xfer_t *x, int chunk_cols,
                          int tag)
{
    const weft_data_t *d = x->copy->data;
    /* A chunk is at least a column, sent as an int count of bytes. */
    int rc = weft_comm__col_fits(d);
    if (rc != WEFT_SUCCESS) return rc;
    x->chunk_cols = chunk_cols;
    x->nchunks = (d->cols + chunk_cols - 1) / chunk_cols;
    x->tag = tag >= 0 ? tag : weft_comm__xfer_take_tags(c, x, x->nchunks);
    x->dev = weft_comm__device(c, x->copy->device);
    if (!x->dev) return WEFT_SUCCESS; /* a host copy: chunks go straight to MPI */
    /* Said as weft_comm__alloc says it: the transfer's line alone read as
     * a real shortage of host memory. */
    if (weft_fault_hit(c->cfg.fault, WEFT_FAULT_COMM_ALLOC, NULL)) {
        weft_error("comm: the staged transport's bounce buffer of %zu bytes fails (fault_inject)",
                   d->bytes);
        return WEFT_ERR_NOMEM;
    }
    x->bounce = bounce_get(s, d->bytes, x->dev);
    if (!x->bounce) return WEFT_ERR_NOMEM;
    return WEFT_SUCCESS; /* counted in n_staged once over (staged_release) */
}

/* ---- receiver ------------------------------------------------------------------- */

/* Device target: chunk k arrived in the bounce buffer. */
static void staged_chunk_arrived(weft_comm_t *c, void *a, void *b)
{
    weft_comm_xfer_t *x = a;
    int k = (int)(intptr_t)b - 1;
    int rc = x->status == WEFT_SUCCESS ? chunk_copy(c, x, k, 1, chunk_copied) : WEFT_SUCCESS;
    if (rc != WEFT_SUCCESS) weft_comm__xfer_fail(c, x, rc, "the device copy of a chunk failed");
    weft_comm__xfer_part_done(c, x);
}

/* Posts the receives of every chunk, then the GET; a failure stops it. */
static int staged_recv_start(weft_comm_t *c, void *state, weft_comm_xfer_t *x,
                             const weft_comm_msg_t *m)
{
    const weft_data_t *d = x->copy->data;
    size_t col = (size_t)d->rows * d->elem;
    size_t chunk = c->cfg.staged_chunk ? c->cfg.staged_chunk : (4u << 20);
    int chunk_cols = chunk / col > 0 ? (int)(chunk / col) : 1;
    chunk_cols = weft_comm__cols_within_tags(c, d->cols, chunk_cols); /* a tag a chunk */
    int rc = staged_prepare(c, state, x, chunk_cols, -1);
    for (int k = 0; k < x->nchunks && rc == WEFT_SUCCESS; k++) {
        if (!x->dev) {
            rc = chunk_host_mpi(c, x, k, 1);
            continue;
        }
        int bytes = (int)(chunk_width(d, x->chunk_cols, k) * col);
        rc = weft_comm__irecv(c, bounce_chunk(x, k), bytes, MPI_BYTE, x->peer, x->tag + k,
                              staged_chunk_arrived, x, (void *)(intptr_t)(k + 1));
        if (rc == WEFT_SUCCESS) x->left++;
    }
    if (rc != WEFT_SUCCESS) {
        weft_comm__xfer_fail(c, x, rc, "posting a staged receive failed (or no bounce buffer)");
        return WEFT_SUCCESS;
    }
    weft_comm__xfer_send_get(c, x, WEFT_TRANSPORT_STAGED, x->tag, x->chunk_cols);
    return WEFT_SUCCESS;
}

/* ---- sender --------------------------------------------------------------------- */

/* Device source: chunk k is in the bounce buffer, send it. */
static void staged_chunk_ready(weft_comm_t *c, void *a, void *b)
{
    weft_comm_xfer_t *x = a;
    const weft_data_t *d = x->copy->data;
    int k = (int)(intptr_t)b - 1;
    int bytes = (int)((size_t)chunk_width(d, x->chunk_cols, k) * d->rows * d->elem);
    if (chunk_copy_ok(c, x)) {
        int rc = weft_comm__isend(c, bounce_chunk(x, k), bytes, MPI_BYTE, x->peer, x->tag + k,
                                  weft_comm__part_over, x, NULL);
        if (rc == WEFT_SUCCESS)
            x->left++;
        else
            weft_comm__xfer_fail(c, x, rc, "posting the send of a chunk failed");
    }
    weft_comm__xfer_part_done(c, x);
}

static int staged_send_start(weft_comm_t *c, void *state, weft_comm_xfer_t *x,
                             const weft_comm_msg_t *get)
{
    const weft_data_t *d = x->copy->data;
    int rc = staged_prepare(c, state, x, get->chunk_cols > 0 ? get->chunk_cols : d->cols, get->tag);
    for (int k = 0; k < x->nchunks && rc == WEFT_SUCCESS; k++)
        rc = x->dev ? chunk_copy(c, x, k, 0, staged_chunk_ready) : chunk_host_mpi(c, x, k, 0);
    if (rc != WEFT_SUCCESS) weft_comm__xfer_fail(c, x, rc, "starting the staged send failed");
    return WEFT_SUCCESS;
}

const weft_comm_transport_ops_t weft_comm__staged_ops = {
    .name = "staged",
    .id = WEFT_TRANSPORT_STAGED,
    .open = staged_open,
    .close = staged_close,
    .connect = weft_comm__tp_connect_nothing,
    .describe = weft_comm__tp_describe_unsupported,
    .reaches = staged_reaches,
    .recv_start = staged_recv_start,
    .send_start = staged_send_start,
    .release = staged_release,
    .progress = weft_comm__tp_progress_nothing,
    .peer_down = weft_comm__tp_peer_down_nothing,
};
