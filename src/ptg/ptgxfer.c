/* One transfer of a version between two ranks, however many tasks pass it
 * on: forwarders on one rank that pass the same version to readers on
 * another each made a SEND and the reader's rank a RECV for each, two
 * rendezvous of one (data, version, peer), and the second never matched
 * (a silent hang, docs/PTG.md). Both ends keep the first transfer of a
 * canonical version with each peer and reuse it: the sender makes one
 * where any of its tasks has a reader there, the receiver one where any
 * of its readers takes the version from a task of that rank, the same
 * condition seen from both sides.
 *
 * A version can still reach a rank from two peers (its writer sends it to
 * a reader there, a forwarder on a third rank to another), or come back to
 * the rank that made it through a forwarder: each sender sees only its own
 * consumers, so both send, and the receiver makes a RECV for each (making
 * none for the second left that sender waiting for ever). Each reader
 * waits for the RECV of the path it names, never for another path (whose
 * sender may wait for a reader here: a hang across ranks). The RECVs of a
 * version made elsewhere share an arrival (comm.h): the first to start
 * lands the bytes, the others then meet their senders without bytes. Those
 * of a version made here (or from before the graph, on its owner) are
 * marked discard: the bytes are here. */
#include <stdint.h>

#include "comm/comm.h"
#include "ptg/ptg.h"
#include "stf/home.h"
#include "stf/remote.h"

/* The map's key: a reference of no class (-1), the version's record index
 * in idx[0..1], the peer and the direction. */
static weft_ptg_ref_t xfer_key(size_t canon, int peer, int send)
{
    weft_ptg_ref_t k = {.cls = -1, .flow = send};
    k.idx[0] = (int)(canon & 0x7fffffffu);
    k.idx[1] = (int)((uint64_t)canon >> 31);
    k.idx[2] = peer;
    return k;
}

weft_task_t *weft_ptg__xfer_find(const weft_ptg_build_t *b, size_t canon, int peer, int send)
{
    weft_ptg_ref_t k = xfer_key(canon, peer, send);
    size_t i = weft_ptgmap_get(&b->xfers, &k);
    return i == SIZE_MAX ? NULL : *(weft_task_t **)weft_vec_at(&b->actions, i);
}

int weft_ptg__xfer_note(weft_ptg_build_t *b, size_t canon, int peer, int send)
{
    weft_ptg_ref_t k = xfer_key(canon, peer, send);
    return weft_ptgmap_put(&b->xfers, &k, b->actions.n - 1);
}

/* Where the bytes of a version received for t land: t's home device. */
static int recv_device(const weft_context_t *ctx, const weft_task_t *t)
{
    if (ctx->ndevices == 0) return 0;
    int home = weft_home_device(ctx, t);
    return home > 0 ? home : 0;
}

/* Whether the bytes of canonical version cv are on this rank without a
 * RECV: a local task made it, or it is d's own from before the graph and
 * this rank owns d. */
static int made_here(const weft_ptg_build_t *b, const weft_ptg_ver_t *cv, const weft_data_t *d)
{
    if (cv->task) return cv->task->kind == WEFT_TASK_BODY;
    return cv->key.cls < 0 && d->owner_rank == b->me;
}

static void mark_discard(weft_task_t *a) { ((weft_comm_action_t *)a->action)->discard = 1; }

/* RECV a of canonical version ci joins the others of it here. */
static int join_recvs(weft_ptg_build_t *b, size_t ci, weft_task_t *a, const weft_data_t *d)
{
    weft_ptg_ver_t *cv = weft_ptg__ver(b, ci);
    if (made_here(b, cv, d)) {
        mark_discard(a);
    } else if (cv->recvs != SIZE_MAX) {
        const weft_ptg_link_t *first = weft_vec_at(&b->links, cv->recvs);
        if (weft_comm_arrival_join(a->action, first->task->action) != WEFT_SUCCESS)
            return WEFT_ERR_NOMEM;
    } else {
        cv->task = a; /* orders the version's arrival (ptgorder.c) */
    }
    weft_ptg_link_t l = {.task = a, .next = cv->recvs};
    if (weft_vec_push(&b->links, &l) != WEFT_SUCCESS) return WEFT_ERR_NOMEM;
    weft_ptg__ver(b, ci)->recvs = b->links.n - 1;
    return WEFT_SUCCESS;
}

void weft_ptg__recvs_discard(weft_ptg_build_t *b, size_t ci)
{
    for (size_t l = weft_ptg__ver(b, ci)->recvs; l != SIZE_MAX;) {
        const weft_ptg_link_t *k = weft_vec_at(&b->links, l);
        mark_discard(k->task);
        l = k->next;
    }
}

int weft_ptg__recv_version(weft_ptg_build_t *b, size_t vi, const weft_ptg_ref_t *p, int prank,
                           weft_task_t *t, weft_data_t *d)
{
    weft_ptg_ver_t *v = weft_ptg__ver(b, vi);
    /* Another task of prank passes this version here already: its RECV
     * brings it for this one's readers too. */
    weft_task_t *a = weft_ptg__xfer_find(b, v->canon, prank, 0);
    if (a) {
        v->task = a;
        v->remote_noread = 0;
        return WEFT_SUCCESS;
    }
    uint32_t number = 0;
    if (weft_ptg__version_number(b, p, d, v->label, &number) != WEFT_SUCCESS)
        return WEFT_ERR_INVALID;
    a = weft_remote_action(b->tp, WEFT_TASK_RECV, d, prank, v->label, t->priority,
                           recv_device(b->ctx, t));
    if (!a || weft_vec_push(&b->actions, &a) != WEFT_SUCCESS) {
        if (a) weft_task_unref(a);
        return WEFT_ERR_NOMEM;
    }
    v = weft_ptg__ver(b, vi);
    if (weft_ptg__xfer_note(b, v->canon, prank, 0) != WEFT_SUCCESS) return WEFT_ERR_NOMEM;
    a->flow[0].out_version = number; /* as its producer's rank numbers it */
    v->task = a;
    v->remote_noread = 0;
    size_t ci = v->canon;
    weft_ptg_ver_t *cv = weft_ptg__ver(b, ci);
    if (!cv->data) cv->data = d;
    return join_recvs(b, ci, a, d);
}
