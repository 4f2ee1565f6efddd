/* Each transfer of a graph as both of its ends see it (docs/PTG.md). A
 * rank learns where a task of another rank runs and which data its flow
 * holds from its own copy of the graph's functions; a rank function or an
 * args function that answers differently on another rank would surface
 * only where a transfer for it meets nothing at the other end (a count
 * that does not add up, a receive that never comes), or nowhere. So each
 * rank notes every transfer it takes part in, as it sees it: the producer
 * and consumer (class, indices, flow), the rank of each and the data's
 * key. The producer's rank adds the note's hash to a sum, the consumer's
 * rank subtracts it; the sum across ranks, folded into the counts the
 * build already adds up, is 0 when every transfer is seen alike from both
 * ends. When it is not, the ranks find the first transfer seen differently
 * by bisection over the notes' identities and every rank logs both views. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context/coll.h"
#include "ptg/ptg.h"
#include "stf/seqcheck.h"
#include "util/hash.h"
#include "util/log.h"
#include "util/tname.h"

/* A 64-bit hash's bits mixed (MurmurHash3's finalizer): the notes are
 * added, so nearby FNV values must not stay nearby. */
static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    return h ^ (h >> 33);
}

static uint64_t ref_hash(uint64_t h, const weft_ptg_ref_t *r)
{
    const uint64_t f[] = {(uint32_t)r->cls,    (uint32_t)r->flow,   (uint32_t)r->idx[0],
                          (uint32_t)r->idx[1], (uint32_t)r->idx[2], (uint32_t)r->idx[3]};
    return weft_hash_words(h, f, sizeof f / sizeof f[0]);
}

/* Which transfer: its two ends, whoever sees it. */
static uint64_t end_id(const weft_ptg_end_t *e)
{
    return mix(ref_hash(ref_hash(WEFT_HASH_INIT, &e->p), &e->c));
}

/* The transfer as this rank sees it, signed by its side. */
static uint64_t end_view(const weft_ptg_end_t *e)
{
    const uint64_t f[] = {end_id(e), (uint32_t)e->prank, (uint32_t)e->crank, e->key};
    uint64_t h = mix(weft_hash_words(WEFT_HASH_INIT, f, sizeof f / sizeof f[0]));
    return e->producer ? h : 0 - h;
}

int weft_ptg__note_end(weft_ptg_build_t *b, const weft_ptg_ref_t *p, const weft_ptg_ref_t *c,
                       int prank, int crank, const weft_data_t *d, int producer)
{
    /* A simulated rank sees one end of each transfer only. */
    if (b->ctx->sim || b->ctx->nranks < 2) return WEFT_SUCCESS;
    weft_ptg_end_t e = {
        .p = *p, .c = *c, .prank = prank, .crank = crank, .key = d->key, .producer = producer};
    b->ends_sum += end_view(&e);
    return weft_vec_push(&b->ends, &e);
}

/* 16 bits a part: the sum of every rank's parts cannot overflow. */
void weft_ptg__to_limbs(uint64_t s, long long limbs[WEFT_PTG_LIMBS])
{
    for (int i = 0; i < WEFT_PTG_LIMBS; i++) limbs[i] = (long long)((s >> 16 * i) & 0xffff);
}

uint64_t weft_ptg__limbs_total(const long long limbs[WEFT_PTG_LIMBS])
{
    uint64_t s = 0;
    for (int i = 0; i < WEFT_PTG_LIMBS; i++) s += (uint64_t)limbs[i] << 16 * i;
    return s;
}

/* The words of the report's collectives, in their messages. */
static const char ends_comparing[] = "comparing the ends of a transfer";

/* Whether the notes whose identity lies in lo .. hi (inclusive) add up to
 * something else than 0 across ranks: 1 or 0; -1 when the collective
 * failed in MPI (said, the context diverged). Collective. */
static int differs_in(const weft_ptg_build_t *b, uint64_t lo, uint64_t hi)
{
    uint64_t s = 0;
    for (size_t i = 0; i < b->ends.n; i++) {
        const weft_ptg_end_t *e = weft_vec_at(&b->ends, i);
        uint64_t id = end_id(e);
        if (id >= lo && id <= hi) s += end_view(e);
    }
    long long limbs[WEFT_PTG_LIMBS];
    weft_ptg__to_limbs(s, limbs);
    if (weft_coll_check(b->ctx,
                        MPI_Allreduce(MPI_IN_PLACE, limbs, WEFT_PTG_LIMBS, MPI_LONG_LONG, MPI_SUM,
                                      b->ctx->comm),
                        ends_comparing) != WEFT_SUCCESS)
        return -1;
    return weft_ptg__limbs_total(limbs) != 0;
}

/* The identity of a transfer the ranks see differently (*id): 64 steps of
 * bisection, each an allreduce of 4 numbers. Collective; -1 when one
 * failed in MPI. */
static int first_differing(const weft_ptg_build_t *b, uint64_t *id)
{
    uint64_t lo = 0, hi = UINT64_MAX;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        int d = differs_in(b, lo, mid);
        if (d < 0) return -1;
        if (d)
            hi = mid;
        else
            lo = mid + 1;
    }
    *id = lo;
    return 0;
}

#define ENDS_SHOWN 2 /* a rank sees a transfer from each end at most once */

static void log_view(const weft_ptg_build_t *b, int rank, const weft_ptg_end_t *e)
{
    const weft_ptg_class_t *pk = &b->g->classes[e->p.cls], *ck = &b->g->classes[e->c.cls];
    weft_tname_t pn = weft_tname(pk->task->name, 0, e->p.idx, pk->ndims);
    weft_tname_t cn = weft_tname(ck->task->name, 0, e->c.idx, ck->ndims);
    weft_error("  rank %d, which runs %s: %s on rank %d writes data %llu (its flow %d) for %s on "
               "rank %d (its flow %d)",
               rank, e->producer ? pn.text : cn.text, pn.text, e->prank, (unsigned long long)e->key,
               e->p.flow, cn.text, e->crank, e->c.flow);
}

/* Every rank logs the views of one transfer the ranks see differently.
 * Collective; only after the sum said some differ. */
void weft_ptg__ends_report(const weft_ptg_build_t *b)
{
    /* Said first: a collective of the report may fail (and say so). */
    weft_error("weft_ptg_insert: the ranks' graph functions disagree on a transfer: the rank or "
               "args function answers differently on different ranks, so each end sees another "
               "task placement or data (no task of the graph runs); as each end sees it:");
    uint64_t id;
    if (first_differing(b, &id) < 0) return; /* its collective said so */
    weft_ptg_end_t mine[ENDS_SHOWN];
    memset(mine, 0, sizeof mine);
    int n = 0;
    for (size_t i = 0; i < b->ends.n && n < ENDS_SHOWN; i++) {
        const weft_ptg_end_t *e = weft_vec_at(&b->ends, i);
        if (end_id(e) == id) mine[n++] = *e;
    }
    for (int k = n; k < ENDS_SHOWN; k++) mine[k].p.cls = -1;
    int nr = b->ctx->nranks;
    weft_ptg_end_t *all = (weft_ptg_end_t *)weft_seqcheck_gather_text(b->ctx, (const char *)mine,
                                                                      sizeof mine, ends_comparing);
    if (!all) return;
    int shown = 0;
    for (int r = 0; r < nr && shown < 8; r++)
        for (int k = 0; k < ENDS_SHOWN; k++)
            if (all[r * ENDS_SHOWN + k].p.cls >= 0) {
                log_view(b, r, &all[r * ENDS_SHOWN + k]);
                shown++;
            }
    if (shown == 1)
        weft_error("  and no rank sees it from the other end (the rank its functions name "
                   "there does not run that task by its own)");
    free(all);
}
