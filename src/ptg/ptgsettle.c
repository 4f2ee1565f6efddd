/* After the wait of a taskpool with a graph: the data it touched go back
 * to the version numbers every rank agrees on (docs/PTG.md). A graph
 * numbers its versions net_version plus their depth, and only the ranks
 * that touched a data saw them; sequential insertion after it numbers
 * versions alike on every rank from net_version, which a graph leaves
 * alone. So the copy that holds the newest version here takes
 * net_version's number, and so does the data.
 *
 * One exception needs the ranks to talk: a NEW data the graph wrote. Its
 * net_version is 0, "never written", on every rank, so a later insertion
 * refused to read it, or, when it had an initialiser, every reader rank
 * but its owner made the initial contents itself instead of receiving
 * what the graph wrote (a silent wrong result). The graph's final version
 * is on the owner (docs/PTG.md), which alone knows: owners tell every
 * rank, and every rank counts that version as the data's first. */
#include "ptg/ptgwait.h"

#include <stdlib.h>

#include "context/coll.h"
#include "context/keyset.h"
#include "data/data.h"
#include "ptg/ptg.h"
#include "stf/failure.h"

/* The number a version of d at depth `label` takes on every rank: the
 * data's net_version (equal on every rank, left alone by the graph) plus
 * its depth. Numbered so, the copies of a failed graph's versions compare
 * across ranks (recover.c brings the newest good one home; with a number
 * local to each rank, a rank that had seen many versions offered an old
 * one as newest: a silent stale result). One rank keeps no net_version
 * (insertion numbers its versions from d->version alone, and no settle
 * follows the graph): there the base is d->version, which no task of
 * another taskpool moves while the graph is built (a graph takes a wave
 * of its own, its data are not busy elsewhere). From net_version, 0 there,
 * a graph's first write took the number of the version before it: a
 * failure that destroyed it on a device left the user's memory, which held
 * that older version, no older than the lost one, and the data kept the
 * failed bytes where 2 ranks took the older version back. Logged,
 * WEFT_ERR_INVALID, past 32 bits. (ptg.h) */
int weft_ptg__version_number(const weft_ptg_build_t *b, const weft_ptg_ref_t *p,
                             const weft_data_t *d, uint32_t label, uint32_t *out)
{
    uint32_t base = b->ctx->nranks > 1 ? d->net_version : d->version;
    if ((uint64_t)base + label > UINT32_MAX)
        return weft_ptg__fail(b, p, "its flow %d makes version %llu of data %llu: past 2^32",
                              p->flow, (unsigned long long)base + label,
                              (unsigned long long)d->key);
    *out = base + label;
    return WEFT_SUCCESS;
}

/* The NEW data this rank owns that the graph wrote (the copy here holds
 * a version the graph numbered), while insertion never did. */
static int written_here(weft_taskpool_t *tp, uint64_t *keys)
{
    int k = 0;
    for (size_t i = 0; i < tp->touched.n; i++) {
        weft_data_t *d = weft_taskpool_touched(tp, i);
        weft_data_lock(d);
        if (d->owner_rank == tp->ctx->rank && (d->flags & WEFT_DATA_NEW) && d->net_version == 0 &&
            d->version > 0 && weft_data_newest_copy_locked(d, -1))
            keys[k++] = d->key;
        weft_data_unlock(d);
    }
    return k;
}

/* Collective: every rank counts the graph's writes of NEW data. */
static int agree_new_written(weft_taskpool_t *tp)
{
    weft_context_t *ctx = tp->ctx;
    uint64_t *mine = malloc((tp->touched.n + 1) * sizeof *mine), *all = NULL;
    int n = 0;
    const char *where = "weft_taskpool_wait: telling the ranks which NEW data the graph wrote";
    int rc = weft_keyset_allgather(ctx, mine, mine ? written_here(tp, mine) : -1, &all, &n, where);
    free(mine);
    size_t nlive = 0;
    weft_data_t **live = n > 0 ? weft_keyset_live(ctx, NULL, 0, &nlive) : NULL;
    /* All ranks count the writes, or none does: views that differ would
     * have one rank send what another never receives. (n is the same on
     * every rank.) */
    int ok = n == 0 || live != NULL;
    if (n > 0 && rc == WEFT_SUCCESS) rc = weft_coll_all(ctx, &ok, where);
    if (rc == WEFT_SUCCESS && !ok) rc = WEFT_ERR_NOMEM;
    if (rc != WEFT_SUCCESS) ok = 0;
    for (int k = 0; ok && live && k < n; k++) {
        weft_data_t *d = weft_keyset_find(live, nlive, all[k]);
        if (!d) continue; /* released here: no later task names it */
        weft_data_lock(d);
        d->net_version = 1;
        weft_data_unlock(d);
    }
    free(live);
    free(all);
    return rc;
}

/* A simulation's ranks are not MPI ranks: the simulated rank counts the
 * graph's writes of NEW data it knows of, those of its kept tasks (their
 * versions were published at the wait; no contents are kept). Before, it
 * counted none, and a later task reading such a data was refused as
 * reading a NEW data no task wrote (a real run accepts it). A write made
 * on another simulated rank alone stays unknown here (docs/SCALE.md). */
static void sim_new_written(weft_taskpool_t *tp)
{
    for (size_t i = 0; i < tp->touched.n; i++) {
        weft_data_t *d = weft_taskpool_touched(tp, i);
        if ((d->flags & WEFT_DATA_NEW) && d->net_version == 0 && d->version > 0) d->net_version = 1;
    }
}

void weft_ptg_settle(weft_taskpool_t *tp)
{
    if (tp->ctx->sim && !tp->ctx->diverged) sim_new_written(tp);
    int rc = tp->ctx->diverged || tp->ctx->sim ? WEFT_SUCCESS : agree_new_written(tp);
    if (rc != WEFT_SUCCESS)
        weft_failure_note(tp, rc,
                          rc == WEFT_ERR_MPI
                              ? "telling the ranks which NEW data the graph wrote failed in MPI"
                              : "out of host memory telling the ranks which NEW data the graph "
                                "wrote");
    for (size_t i = 0; i < tp->touched.n; i++) {
        weft_data_t *d = weft_taskpool_touched(tp, i);
        weft_data_lock(d);
        for (int dev = 0; dev < WEFT_MAX_DEVICES; dev++) {
            weft_data_copy_t *c = d->copies[dev];
            if (c && c->state != WEFT_COPY_INVALID && c->version == d->version)
                c->version = d->net_version;
            else if (c) /* its number is of the rank's own count, not the ranks' */
                c->intact = 0;
        }
        d->version = d->net_version;
        weft_data_unlock(d);
    }
}
