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

static weft_remote_rec_t *remote_of(const weft_data_t *d)
{
    const weft_stf_rec_t *s = weft_stf_rec(d);
    return s ? s->remote : NULL;
}

uint32_t weft_remote_version(const weft_data_t *d)
{
    const weft_remote_rec_t *r = remote_of(d);
    return r ? r->version : 0;
}

static weft_remote_rec_t *record(weft_context_t *ctx, weft_stf_rec_t *s, weft_data_t *d)
{
    if (s->remote) return s->remote;
    weft_remote_rec_t *r = calloc(1, sizeof *r + sizeof(uint64_t) * (size_t)nwords(ctx));
    if (!r) return NULL;
    r->writer = -1;
    /* A NEW tile is held by nobody until a task writes it. */
    if (!(d->flags & WEFT_DATA_NEW)) r->holders[d->owner_rank / 64] |= 1ULL << (d->owner_rank % 64);
    r->version = d->version;
    s->remote = r;
    return r;
}

static int holds(const weft_remote_rec_t *r, int rank)
{
    return (r->holders[rank / 64] >> (rank % 64)) & 1;
}

static void add_holder(weft_remote_rec_t *r, int rank)
{
    r->holders[rank / 64] |= 1ULL << (rank % 64);
}

static void only_holder(weft_context_t *ctx, weft_remote_rec_t *r, int rank)
{
    memset(r->holders, 0, sizeof(uint64_t) * (size_t)nwords(ctx));
    add_holder(r, rank);
}

int weft_remote_exec_rank(const weft_task_t *t, int affinity_flow)
{
    if (affinity_flow >= 0) return t->flow[affinity_flow].data->owner_rank;
    for (int i = 0; i < t->nflows; i++)
        if (t->flow[i].mode & WEFT_W) return t->flow[i].data->owner_rank;
    return t->nflows ? t->flow[0].data->owner_rank : 0;
}

/* A SEND or RECV task for one version of d, inserted like any task. */
static int insert_action(weft_taskpool_t *tp, weft_task_kind_t kind, weft_data_t *d, int peer,
                         uint32_t version, int priority, int device)
{
    weft_task_t *a = weft_task_alloc(&tp->ctx->task_pool);
    weft_comm_action_t *act = weft_comm_action_new();
    if (!a || !act) {
        if (a) weft_task_unref(a);
        free(act);
        return WEFT_ERR_NOMEM;
    }
    a->kind = kind;
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
    return weft_insert_local(tp, a);
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
 * the final version going home) implies. */
static int infer_read(weft_taskpool_t *tp, weft_data_t *d, weft_remote_rec_t *r, int reader,
                      const weft_task_t *t)
{
    int priority = t ? t->priority : 0;
    weft_context_t *ctx = tp->ctx;
    if (holds(r, reader)) return WEFT_SUCCESS;
    int src = r->writer >= 0 ? r->writer : d->owner_rank;
    int rc = WEFT_SUCCESS;
    if (ctx->rank == src)
        rc = insert_action(tp, WEFT_TASK_SEND, d, reader, r->version, priority, 0);
    if (rc == WEFT_SUCCESS && ctx->rank == reader)
        rc = insert_action(tp, WEFT_TASK_RECV, d, src, r->version, priority,
                           consumer_device(ctx, t));
    add_holder(r, reader);
    return rc;
}

int weft_remote_infer(weft_taskpool_t *tp, weft_task_t *t, int exec_rank)
{
    weft_context_t *ctx = tp->ctx;
    for (int i = 0; i < t->nflows; i++) {
        weft_data_t *d = t->flow[i].data;
        weft_stf_rec_t *s = weft_stf_rec_touch(tp, d);
        weft_remote_rec_t *r = s ? record(ctx, s, d) : NULL;
        if (!r) return WEFT_ERR_NOMEM;
        if (t->flow[i].mode & WEFT_R) {
            int rc = infer_read(tp, d, r, exec_rank, t);
            if (rc != WEFT_SUCCESS) return rc;
        }
    }
    /* Writes after every read: a task reading and writing one tile first
     * fetches the old version. */
    for (int i = 0; i < t->nflows; i++) {
        if (!(t->flow[i].mode & WEFT_W)) continue;
        weft_remote_rec_t *r = remote_of(t->flow[i].data);
        int first = 1;
        for (int j = 0; j < i; j++)
            first &= t->flow[j].data != t->flow[i].data || !(t->flow[j].mode & WEFT_W);
        if (first) r->version++;
        r->writer = exec_rank;
        only_holder(ctx, r, exec_rank);
        t->flow[i].out_version = r->version;
    }
    return WEFT_SUCCESS;
}

int weft_remote_flush(weft_taskpool_t *tp)
{
    for (size_t i = 0; i < tp->touched.n; i++) {
        weft_data_t *d = weft_taskpool_touched(tp, i);
        weft_remote_rec_t *r = remote_of(d);
        if (!r || r->writer < 0 || holds(r, d->owner_rank)) continue;
        int rc = infer_read(tp, d, r, d->owner_rank, NULL);
        if (rc != WEFT_SUCCESS) return rc;
    }
    return WEFT_SUCCESS;
}

void weft_remote_reclaim(weft_taskpool_t *tp)
{
    weft_context_t *ctx = tp->ctx;
    for (size_t i = 0; i < tp->touched.n; i++) {
        weft_data_t *d = weft_taskpool_touched(tp, i);
        weft_remote_rec_t *r = remote_of(d);
        if (!r || !holds(r, d->owner_rank)) continue;
        /* Copies away from the owner were temporaries of this taskpool:
         * every rank forgets them the same way, so records stay equal. */
        only_holder(ctx, r, d->owner_rank);
        if (ctx->rank == d->owner_rank) continue;
        weft_data_copy_t *gone[WEFT_MAX_DEVICES] = {0};
        weft_data_lock(d);
        for (int dev = 0; dev < WEFT_MAX_DEVICES; dev++) {
            weft_data_copy_t *c = d->copies[dev];
            if (c && c->owner == WEFT_MEM_RUNTIME && c->readers == 0)
                gone[dev] = weft_data_copy_unlink_locked(d, dev);
        }
        weft_data_unlock(d);
        for (int dev = 0; dev < WEFT_MAX_DEVICES; dev++) weft_data_copy_free(gone[dev], d->bytes);
    }
}
