/* The ipc transport, for ranks of one node: the sender's activation carries
 * its device zone's IPC handle (a CUDA IPC handle, the shared-memory name
 * of an emu zone) and the copy's offset; the receiver maps that zone once
 * per peer and device, pulls the tile with one 2D device copy, then sends
 * DONE so that the sender drops its reader. The sender sends no bytes.
 * At weft_init (connect) the ranks of a node exchange their zones' handles
 * and map them, so the first transfer finds its mapping made. */
#include <stdlib.h>
#include <string.h>

#include "comm/comm_internal.h"
#include "util/ending.h"
#include "util/log.h"

/* A mapped zone of a peer rank, kept for the life of the engine. */
typedef struct ipc_map {
    int peer, by; /* peer rank, local device index it is mapped on */
    size_t len;
    unsigned char handle[WEFT_IPC_HANDLE_MAX];
    void *base;
    struct ipc_map *next;
} ipc_map_t;

typedef struct ipc_state {
    ipc_map_t *maps;
    /* This rank's exported zones, by device index: len 0 not tried yet,
     * (size_t)-1 not exported. */
    unsigned char (*zone_handle)[WEFT_IPC_HANDLE_MAX];
    size_t *zone_handle_len;
} ipc_state_t;

static int ipc_open(weft_comm_t *c, void **state)
{
    ipc_state_t *s = calloc(1, sizeof *s);
    if (!s) return WEFT_ERR_NOMEM;
    size_t n = (size_t)c->cfg.ndevices + 1;
    s->zone_handle = calloc(n, sizeof *s->zone_handle);
    s->zone_handle_len = calloc(n, sizeof *s->zone_handle_len);
    if (!s->zone_handle || !s->zone_handle_len) {
        free(s->zone_handle);
        free(s->zone_handle_len);
        free(s);
        return WEFT_ERR_NOMEM;
    }
    *state = s;
    return WEFT_SUCCESS;
}

static void ipc_close(weft_comm_t *c, void *state)
{
    ipc_state_t *s = state;
    while (s->maps) {
        ipc_map_t *p = s->maps;
        s->maps = p->next;
        weft_device_t *by = weft_comm__device(c, p->by);
        if (by) by->ops->ipc_close(by, p->base);
        free(p);
    }
    free(s->zone_handle);
    free(s->zone_handle_len);
    free(s);
}

/* ---- sender: the zone's handle, exported once per device ----------------------- */

static size_t zone_handle(ipc_state_t *s, weft_device_t *dev)
{
    size_t *len = &s->zone_handle_len[dev->index];
    if (*len == 0) {
        size_t n = WEFT_IPC_HANDLE_MAX;
        int ok = (dev->caps & WEFT_DEVCAP_IPC) &&
                 dev->ops->ipc_export(dev, s->zone_handle[dev->index], &n) == WEFT_SUCCESS;
        *len = ok ? n : (size_t)-1;
    }
    return *len == (size_t)-1 ? 0 : *len;
}

static int ipc_describe(weft_comm_t *c, void *state, const weft_data_copy_t *cp, weft_comm_msg_t *m)
{
    ipc_state_t *s = state;
    weft_device_t *dev = weft_comm__device(c, cp->device);
    if (!dev) return WEFT_ERR_UNSUPPORTED;
    char *base = dev->zone_base, *p = cp->ptr;
    /* User memory and per-tile allocations are in no exported zone. */
    if (!base || p < base || p >= base + dev->zone_bytes) return WEFT_ERR_UNSUPPORTED;
    size_t n = zone_handle(s, dev);
    if (n == 0) return WEFT_ERR_UNSUPPORTED;
    m->offset = p - base;
    m->ipc_len = (int32_t)n;
    memcpy(m->ipc, s->zone_handle[dev->index], n);
    return WEFT_SUCCESS;
}

/* ---- receiver: map the zone, pull the tile ------------------------------------ */

/* A device that failed pulls nothing: each move through it failed, warned,
 * and was staged instead, wave after wave (a stranger's report). */
static int ipc_can_pull(const weft_device_t *d, int type)
{
    return (int)d->ops->type == type && (d->caps & WEFT_DEVCAP_IPC) && !weft_device_is_broken(d);
}

/* A local device that can pull from an ipc-mapped zone of type `type` into
 * a copy on `target`. */
static weft_device_t *ipc_device(weft_comm_t *c, int type, int target)
{
    weft_device_t *t = weft_comm__device(c, target);
    if (t) return ipc_can_pull(t, type) ? t : NULL;
    for (int i = 1; i <= c->cfg.ndevices; i++)
        if (ipc_can_pull(c->cfg.devices[i], type)) return c->cfg.devices[i];
    return NULL;
}

static int ipc_reaches(weft_comm_t *c, void *state, const weft_comm_msg_t *m, int target)
{
    return m->on_device && m->ipc_len > 0 && m->node == c->node_of[c->rank] &&
           ipc_device(c, m->dev_type, target) != NULL;
}

static void *ipc_map(ipc_state_t *s, int peer, weft_device_t *by, const void *handle, size_t len)
{
    for (ipc_map_t *p = s->maps; p; p = p->next)
        if (p->peer == peer && p->by == by->index && p->len == len &&
            memcmp(p->handle, handle, len) == 0)
            return p->base;
    ipc_map_t *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    if (by->ops->ipc_import(by, handle, len, &p->base) != WEFT_SUCCESS) {
        free(p);
        return NULL;
    }
    p->peer = peer;
    p->by = by->index;
    p->len = len;
    memcpy(p->handle, handle, len);
    p->next = s->maps;
    s->maps = p;
    return p->base;
}

/* The pull is over (failed or not): DONE lets the sender drop its reader.
 * The receive ends at once, before DONE is even posted: its consumer is
 * released without waiting for the message to leave (a turn of the engine
 * and an MPI call on every move). DONE therefore travels in a buffer of
 * its own, freed once sent, and is posted in this same call, so that it
 * still precedes, in MPI's order, the activation of any version the
 * consumer writes next. With no memory for that buffer, the task's notice
 * buffer carries DONE and the receive ends once it left, as before. */
static void ipc_pulled(weft_comm_t *c, void *a, void *b)
{
    weft_comm_xfer_t *x = a;
    if (x->dev_status != WEFT_SUCCESS && x->status == WEFT_SUCCESS) {
        weft_error("receive of data %llu from rank %d: the ipc pull failed (%s)",
                   (unsigned long long)x->copy->data->key, x->peer, weft_strerror(x->dev_status));
        x->status = x->dev_status;
    }
    weft_comm_msg_t *done =
        weft_comm__alloc_spare(c, sizeof *done, "the receive's notice buffer carries its DONE");
    if (!done) {
        x->left++;
        weft_comm__send_notice(c, x->t, WEFT_COMM_MSG_DONE, x->status != WEFT_SUCCESS, 0,
                               weft_comm__part_over, x, NULL);
        weft_comm__xfer_part_done(c, x);
        return;
    }
    int peer = x->peer;
    *done = (weft_comm_msg_t){.type = WEFT_COMM_MSG_DONE,
                              .src = c->rank,
                              .key = x->copy->data->key,
                              .version = ((const weft_comm_action_t *)x->t->action)->version,
                              .failed = x->status != WEFT_SUCCESS};
    weft_comm__xfer_part_done(c, x); /* x and its task may be gone after this */
    char what[72];
    snprintf(what, sizeof what, "the DONE of data %llu v%u", (unsigned long long)done->key,
             done->version);
    if (weft_comm__isend_ctrl_owed(c, done, (int)sizeof *done, peer, what, weft_comm__free_msg,
                                   done, NULL) == WEFT_SUCCESS)
        return;
    weft_error("comm: could not send %s to rank %d (no memory to post it again): that rank is "
               "not told and may wait for it",
               what, peer);
    free(done);
}

/* Nothing is posted and the sender not told until the pull is on its way,
 * so any failure before leaves x to the transport of last resort. */
static int ipc_recv_start(weft_comm_t *c, void *state, weft_comm_xfer_t *x,
                          const weft_comm_msg_t *m)
{
    const weft_data_t *d = x->copy->data;
    weft_device_t *by = ipc_device(c, m->dev_type, x->copy->device);
    char *base = by ? ipc_map(state, m->src, by, m->ipc, (size_t)m->ipc_len) : NULL;
    if (!base) return WEFT_ERR_UNSUPPORTED;
    weft_region_t src = {base + m->offset, m->ld}, dst = {x->copy->ptr, x->copy->ld};
    weft_event_t ev;
    /* The mapped zone is device memory of the peer: name `by` as its side.
     * A failed pull is staged instead (transport.c), so an injected
     * failure is a warning, not an error line in a run that succeeds. */
    int rc = weft_comm__device_copy(c, WEFT_LOG_WARN, by, WEFT_STREAM_IN, dst, x->copy->device, src,
                                    by->index, m->src, x, d->cols);
    if (rc == WEFT_SUCCESS) rc = weft_device_event_record(by, WEFT_STREAM_IN, &ev);
    if (rc != WEFT_SUCCESS) return rc;
    rc = weft_comm__wait_device(c, by, ev, ipc_pulled, x, NULL, &x->dev_status);
    if (rc != WEFT_SUCCESS) {
        /* The pull must be over before another transport writes the copy. */
        int sync = by->ops->event_sync(by, &ev);
        (void)sync;
        by->ops->event_destroy(by, &ev);
        return rc;
    }
    x->left++;
    if (c->cfg.landing) c->cfg.landing(c->cfg.copy_arg, x->t, x->copy);
    return WEFT_SUCCESS;
}

/* ---- connect: the node's zones mapped before the first transfer ------------------ */

/* What a rank tells the others at connect: its exported zones. */
#define IPC_CARD_ZONES 16
typedef struct ipc_card {
    int32_t n;
    int32_t type[IPC_CARD_ZONES];
    uint32_t len[IPC_CARD_ZONES];
    unsigned char handle[IPC_CARD_ZONES][WEFT_IPC_HANDLE_MAX];
} ipc_card_t;

static void my_card(weft_comm_t *c, ipc_state_t *s, ipc_card_t *me)
{
    for (int i = 1; i <= c->cfg.ndevices && me->n < IPC_CARD_ZONES; i++) {
        weft_device_t *d = c->cfg.devices[i];
        size_t n = d->zone_base ? zone_handle(s, d) : 0;
        if (n == 0) continue;
        me->type[me->n] = (int32_t)d->ops->type;
        me->len[me->n] = (uint32_t)n;
        memcpy(me->handle[me->n++], s->zone_handle[d->index], n);
    }
}

/* Maps zone k of card (rank peer) on every local device that could pull
 * from it, and pulls a few bytes once into that device's own zone (empty
 * at weft_init): the mapping, the peer access and the first copy between
 * the two are paid here instead of in the first transfer. */
static void premap(weft_comm_t *c, ipc_state_t *s, int peer, const ipc_card_t *card, int k)
{
    for (int i = 1; i <= c->cfg.ndevices; i++) {
        weft_device_t *by = c->cfg.devices[i];
        if ((int)by->ops->type != card->type[k] || !(by->caps & WEFT_DEVCAP_IPC)) continue;
        char *base = ipc_map(s, peer, by, card->handle[k], card->len[k]);
        if (!base || !by->zone_base) continue;
        weft_region_t src = {base, 256}, dst = {by->zone_base, 256};
        /* Not through weft_device_copy: no tile's bytes, so not in the
         * device's counters (they showed 256 B of D2D a peer per device,
         * in a run where no tile moved). */
        if (by->ops->copy_async(by, WEFT_STREAM_IN, dst, by->index, src, by->index, 256, 1, 1) !=
            WEFT_SUCCESS)
            continue;
        int rc = weft_device_stream_drain(by, WEFT_STREAM_IN);
        (void)rc; /* a failure shows again, and is handled, at the first transfer */
    }
}

static int ipc_connect(weft_comm_t *c, void *state)
{
    ipc_state_t *s = state;
    ipc_card_t me = {0};
    my_card(c, s, &me);
    ipc_card_t *all = calloc((size_t)c->nranks, sizeof *all);
    if (!all) {
        /* The others are about to wait for this rank in a collective. */
        weft_error("comm: no host memory for the ipc set-up of %d ranks", c->nranks);
        weft_abort_job(c->cfg.comm, 1);
    }
    int rc = MPI_Allgather(&me, sizeof me, MPI_BYTE, all, sizeof me, MPI_BYTE, c->cfg.comm);
    for (int r = 0; r < c->nranks && rc == MPI_SUCCESS; r++)
        for (int k = 0; r != c->rank && c->node_of[r] == c->node_of[c->rank] && k < all[r].n; k++)
            premap(c, s, r, &all[r], k);
    free(all);
    return rc == MPI_SUCCESS ? WEFT_SUCCESS : WEFT_ERR_MPI;
}

const weft_comm_transport_ops_t weft_comm__ipc_ops = {
    .name = "ipc",
    .id = WEFT_TRANSPORT_IPC,
    .open = ipc_open,
    .close = ipc_close,
    .connect = ipc_connect,
    .describe = ipc_describe,
    .reaches = ipc_reaches,
    .recv_start = ipc_recv_start,
    .send_start = weft_comm__tp_send_unsupported,
    .release = weft_comm__tp_release_nothing,
    .progress = weft_comm__tp_progress_nothing,
    .peer_down = weft_comm__tp_peer_down_nothing,
};
