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
 * the rank that made it through a forwarder. The receiver keeps one maker
 * of each version: the first RECV (or the local producer); every other
 * RECV of it only meets its sender's rendezvous (the action's discard, no
 * byte moves) and its readers wait for the maker. Skipping such a RECV
 * instead left the sender waiting for ever. */
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

int weft_ptg__recv_version(weft_ptg_build_t *b, size_t vi, const weft_ptg_ref_t *p, int prank,
                           weft_task_t *t, weft_data_t *d)
{
    weft_ptg_ver_t *v = weft_ptg__ver(b, vi);
    weft_ptg_ver_t *cv = weft_ptg__ver(b, v->canon);
    /* Another task of prank passes this version here already: its RECV
     * meets that sender; the maker brings the bytes. */
    if (weft_ptg__xfer_find(b, v->canon, prank, 0)) {
        v->task = cv->task;
        v->remote_noread = 0;
        return WEFT_SUCCESS;
    }
    uint32_t number = 0;
    if (weft_ptg__version_number(b, p, d, v->label, &number) != WEFT_SUCCESS)
        return WEFT_ERR_INVALID;
    weft_task_t *a = weft_remote_action(b->tp, WEFT_TASK_RECV, d, prank, v->label, t->priority,
                                        recv_device(b->ctx, t));
    if (!a || weft_vec_push(&b->actions, &a) != WEFT_SUCCESS) {
        if (a) weft_task_unref(a);
        return WEFT_ERR_NOMEM;
    }
    v = weft_ptg__ver(b, vi);
    if (weft_ptg__xfer_note(b, v->canon, prank, 0) != WEFT_SUCCESS) return WEFT_ERR_NOMEM;
    a->flow[0].out_version = number; /* as its producer's rank numbers it */
    /* The version itself is put on this rank by its first RECV (ptgorder.c
     * orders what puts each version here), or was made here. */
    cv = weft_ptg__ver(b, v->canon);
    if (cv->task)
        ((weft_comm_action_t *)a->action)->discard = 1;
    else
        cv->task = a;
    v->task = cv->task;
    v->remote_noread = 0;
    if (!cv->data) cv->data = d;
    return WEFT_SUCCESS;
}
