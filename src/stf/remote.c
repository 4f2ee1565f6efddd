/* Remote dependency inference. Every rank sees every inserted task and
 * keeps, per data, the same small record: newest version, the rank that
 * wrote it, the ranks that hold it. A read on a rank that does not hold the
 * newest version implies one SEND on the holder and one RECV on the reader;
 * both are tasks in the local dependency graphs (a SEND reads the tile, a
 * RECV writes it), so write-after-read across ranks needs nothing more. */
#include "stf/remote.h"

#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "stf/home.h"
#include "stf/record.h"
#include "stf/insert.h"
#include "util/log.h"

static const weft_task_class_t send_class = {.name = "weft.send"};
static const weft_task_class_t recv_class = {.name = "weft.recv"};

static int nwords(const weft_context_t *ctx) { return (ctx->nranks + 63) / 64; }

uint32_t weft_remote_version(const weft_data_t *d) { return d->net_version; }

void weft_remote_forget(weft_data_t *d)
{
    d->net_version = 0;
    d->net_held = 0;
    d->net_wave = 0;
}

/* d's view was changed in a taskpool that has not been waited for since.
 * A wait sends every final version home and frees the visiting copies, so
 * a view from before it reads "held by the owner alone, who is the
 * source": every rank concludes the same without touching the data. */
static int current(const weft_taskpool_t *tp, const weft_data_t *d)
{
    if (d->net_wave == tp->wave) return 1;
    if (d->net_wave == 0) return 0;
    const weft_context_t *ctx = tp->ctx;
    weft_taskpool_t *const *pools = ctx->taskpools.data;
    for (size_t i = 0; i < ctx->taskpools.n; i++)
        if (pools[i]->wave == d->net_wave) return 1;
    return 0;
}

/* Makes the view current for tp (a rank taking part in a transfer of d or
 * seeing it written). A NEW tile no task wrote is held by nobody. */
static void refresh(const weft_taskpool_t *tp, weft_data_t *d)
{
    if (current(tp, d)) return;
    d->net_writer = d->owner_rank;
    d->net_held =
        d->owner_rank == tp->ctx->rank && (d->net_version > 0 || !(d->flags & WEFT_DATA_NEW));
    d->net_wave = tp->wave;
}

/* The ranks holding d's newest version, which only its source (writer or
 * owner) needs, to send each reader rank one copy: kept by the source
 * alone, reset to {source} when the version or the taskpool's wave
 * moved. Makes d a touched data of this rank. NULL: out of memory. */
static weft_remote_rec_t *holder_set(weft_taskpool_t *tp, weft_data_t *d)
{
    weft_stf_rec_t *s = weft_stf_rec_touch(tp, d);
    if (!s) return NULL;
    weft_remote_rec_t *h = s->remote;
    size_t words = (size_t)nwords(tp->ctx);
    if (!h) {
        size_t bytes = sizeof *h + sizeof(uint64_t) * words;
        h = calloc(1, bytes);
        if (!h) return NULL;
        s->remote = h;
        s->remote_bytes = (long long)bytes;
        weft_meta_add(s->meta, WEFT_META_HOLDERS, (long long)bytes);
    }
    if (h->wave != d->net_wave || h->version != d->net_version) {
        memset(h->holders, 0, sizeof(uint64_t) * words);
        h->holders[d->net_writer / 64] |= 1ULL << (d->net_writer % 64);
        h->wave = d->net_wave;
        h->version = d->net_version;
    }
    return h;
}

static int holds(const weft_remote_rec_t *r, int rank)
{
    return (r->holders[rank / 64] >> (rank % 64)) & 1;
}

static void add_holder(weft_remote_rec_t *r, int rank)
{
    r->holders[rank / 64] |= 1ULL << (rank % 64);
}

int weft_remote_exec_rank(const weft_task_t *t, int affinity_flow)
{
    if (affinity_flow >= 0) return t->flow[affinity_flow].data->owner_rank;
    for (int i = 0; i < t->nflows; i++)
        if (t->flow[i].mode & WEFT_W) return t->flow[i].data->owner_rank;
    return t->nflows ? t->flow[0].data->owner_rank : 0;
}

weft_task_t *weft_remote_action(weft_taskpool_t *tp, weft_task_kind_t kind, weft_data_t *d,
                                int peer, uint32_t version, int priority, int device)
{
    weft_task_t *a = weft_task_alloc(&tp->ctx->task_pool);
    weft_comm_action_t *act = weft_comm_action_new();
    if (!a || !act) {
        if (a) weft_task_unref(a);
        free(act);
        return NULL;
    }
    a->kind = kind;
    if (kind == WEFT_TASK_SEND)
        tp->ctx->sends++;
    else
        tp->ctx->recvs++;
    a->cls = kind == WEFT_TASK_SEND ? &send_class : &recv_class;
    a->tp = tp;
    a->priority = priority;
    act->peer = peer;
    act->version = version;
    act->device = device;
    a->action = act;
    a->nflows = 1;
    a->flow[0] = (weft_flow_t){
        .data = d, .mode = kind == WEFT_TASK_SEND ? WEFT_R : WEFT_W, .out_version = version};
    weft_data__retain(d);
    weft_meta_note(&tp->ctx->meta);
    return a;
}

/* A SEND or RECV task for one version of d, inserted like any task. */
static int insert_action(weft_taskpool_t *tp, weft_task_kind_t kind, weft_data_t *d, int peer,
                         uint32_t version, int priority, int device)
{
    weft_task_t *a = weft_remote_action(tp, kind, d, peer, version, priority, device);
    return a ? weft_insert_local(tp, a) : WEFT_ERR_NOMEM;
}

/* Where the consumer of a received tile will run on this rank: its home
 * device (owner computes), the host when it has none. The bytes are
 * received there. */
static int consumer_device(weft_context_t *ctx, const weft_task_t *t)
{
    if (!t || ctx->ndevices == 0) return 0;
    int home = weft_home_device(ctx, t);
    return home > 0 ? home : 0;
}

/* The transfer, if any, that a read of d on rank `reader` by task t (NULL:
 * the final version going home) implies. Only the source and the reader
 * take part; every other rank returns at once. */
static int infer_read(weft_taskpool_t *tp, weft_data_t *d, int reader, const weft_task_t *t)
{
    weft_context_t *ctx = tp->ctx;
    int me = ctx->rank;
    int src = current(tp, d) ? d->net_writer : d->owner_rank;
    if ((me != src && me != reader) || (me == src && me == reader)) return WEFT_SUCCESS;
    refresh(tp, d);
    int priority = t ? t->priority : 0;
    /* A NEW data read before any write with an initialiser: the reader
     * makes the initial contents itself (stf/insert.c); nothing moves. */
    int init_here =
        (d->flags & WEFT_DATA_NEW) && (d->flags & WEFT_DATA_INIT) && d->net_version == 0;
    if (me == src) {
        weft_remote_rec_t *h = holder_set(tp, d);
        if (!h) return WEFT_ERR_NOMEM;
        if (holds(h, reader)) return WEFT_SUCCESS;
        add_holder(h, reader);
        return init_here
                   ? WEFT_SUCCESS
                   : insert_action(tp, WEFT_TASK_SEND, d, reader, d->net_version, priority, 0);
    }
    if (d->net_held) return WEFT_SUCCESS;
    d->net_held = 1;
    if (init_here) return WEFT_SUCCESS;
    return insert_action(tp, WEFT_TASK_RECV, d, src, d->net_version, priority,
                         consumer_device(ctx, t));
}

/* A write of d by a task on exec_rank: a new version, held there alone.
 * The owner remembers its tile, written elsewhere, for the flush. */
static int infer_write(weft_taskpool_t *tp, weft_data_t *d, int exec_rank, int first)
{
    refresh(tp, d);
    d->net_wave = tp->wave; /* every rank sees a write: the views stay equal */
    if (first) d->net_version++;
    d->net_writer = exec_rank;
    d->net_held = exec_rank == tp->ctx->rank;
    if (d->owner_rank == tp->ctx->rank && !d->net_held && !weft_stf_rec_touch(tp, d))
        return WEFT_ERR_NOMEM;
    return WEFT_SUCCESS;
}

int weft_remote_infer(weft_taskpool_t *tp, weft_task_t *t, int exec_rank)
{
    for (int i = 0; i < t->nflows; i++) {
        if (!(t->flow[i].mode & WEFT_R)) continue;
        int rc = infer_read(tp, t->flow[i].data, exec_rank, t);
        if (rc != WEFT_SUCCESS) return rc;
    }
    /* Writes after every read: a task reading and writing one tile first
     * fetches the old version. */
    for (int i = 0; i < t->nflows; i++) {
        if (!(t->flow[i].mode & WEFT_W)) continue;
        weft_data_t *d = t->flow[i].data;
        int first = 1;
        for (int j = 0; j < i; j++) first &= t->flow[j].data != d || !(t->flow[j].mode & WEFT_W);
        int rc = infer_write(tp, d, exec_rank, first);
        if (rc != WEFT_SUCCESS) return rc;
        t->flow[i].out_version = d->net_version;
    }
    return WEFT_SUCCESS;
}

int weft_remote_flush(weft_taskpool_t *tp)
{
    for (size_t i = 0; i < tp->touched.n; i++) {
        weft_data_t *d = weft_taskpool_touched(tp, i);
        if (!current(tp, d) || d->net_writer == d->owner_rank) continue;
        int rc = infer_read(tp, d, d->owner_rank, NULL);
        if (rc != WEFT_SUCCESS) return rc;
    }
    return WEFT_SUCCESS;
}

void weft_remote_reclaim(weft_taskpool_t *tp)
{
    weft_context_t *ctx = tp->ctx;
    for (size_t i = 0; i < tp->touched.n; i++) {
        weft_data_t *d = weft_taskpool_touched(tp, i);
        /* Copies away from the owner were temporaries of this taskpool;
         * once it is waited for, every rank's view of d is "the owner
         * alone" (current() above). */
        if (ctx->rank == d->owner_rank) continue;
        weft_data_copy_t *gone[WEFT_MAX_DEVICES] = {0};
        weft_data_lock(d);
        for (int dev = 0; dev < WEFT_MAX_DEVICES; dev++) {
            weft_data_copy_t *c = d->copies[dev];
            /* Not one a transfer writes into: an eviction of another
             * taskpool's device copy may be writing it back here now. */
            if (!c || weft_data_copy_busy_locked(c)) continue;
            if (c->owner == WEFT_MEM_RUNTIME)
                gone[dev] = weft_data_copy_unlink_locked(d, dev);
            else
                /* The user's memory stays, but no longer holds d: the
                 * owner may write d between taskpools, and the next
                 * version received here may carry the number this copy
                 * has (each rank counts its own), so it passed for
                 * current beside the received one and a device task read
                 * the old bytes (weft_data_register_device on a rank
                 * that does not own d). */
                c->state = WEFT_COPY_INVALID;
        }
        weft_data_unlock(d);
        for (int dev = 0; dev < WEFT_MAX_DEVICES; dev++) weft_data_copy_free(gone[dev], d->bytes);
    }
}
