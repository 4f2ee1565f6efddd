/* Where the final version of a data ends: a version written away from its
 * owner must be replaced later by a task of the graph, since nothing
 * brings a final version home (docs/PTG.md). */
#include <stdlib.h>

#include "ptg/ptg.h"

/* Whether one of the n consumers in refs replaces the version, or one
 * that passes it on has a consumer that does (forwarders followed up to
 * `depth` deep): 1 yes, 0 no, -1 after logging. */
static int replaced_by(weft_ptg_build_t *b, const weft_ptg_ref_t *refs, size_t n, int depth)
{
    for (size_t c = 0; c < n; c++) {
        weft_ptg_ref_t cr = refs[c];
        weft_task_t w;
        if (weft_ptg__parse(b, &cr, &w, NULL) != WEFT_SUCCESS) return -1;
        if (cr.flow < w.nflows && (w.flow[cr.flow].mode & WEFT_W)) return 1;
        if (depth == 0 || cr.flow >= w.nflows) continue;
        const weft_ptg_class_t *k = &b->g->classes[cr.cls];
        weft_ptg_ref_t one;
        int m = k->consumers(cr.idx, cr.flow, &one, 0, b->g->arg);
        if (m <= 0) continue;
        weft_ptg_ref_t *next = malloc((size_t)m * sizeof *next);
        if (!next) {
            weft_ptg__fail(b, &cr, "no host memory to follow the consumers of its flow %d",
                           cr.flow);
            return -1;
        }
        weft_ptg__unwrite(next, (size_t)m);
        int got = k->consumers(cr.idx, cr.flow, next, m, b->g->arg);
        if (got > m) got = m;
        /* A forwarder's list is checked as consumers_of checks any (a class
         * out of range was read past the graph's classes). */
        int rc = got < 0 ? weft_ptg__fail(b, &cr, "its consumers function returned %d for flow %d",
                                          got, cr.flow)
                         : 0;
        for (int i = 0; i < got && rc == 0; i++) {
            rc = next[i].cls == WEFT_PTG_UNWRITTEN
                     ? weft_ptg__unwritten_consumer(b, &cr, got, cr.flow, i)
                     : weft_ptg__check_ref(b, &cr, &next[i]);
            if (rc == 0) next[i] = weft_ptg__norm(b, next[i]);
        }
        rc = rc != 0 ? -1 : replaced_by(b, next, (size_t)got, depth - 1);
        free(next);
        if (rc != 0) return rc;
    }
    return 0;
}

/* A version written away from d's owner must be replaced later by a
 * task of the graph, one of its consumers or one that a forwarder passes
 * it to: nothing brings a final version home. */
int weft_ptg__check_final(weft_ptg_build_t *b, const weft_ptg_ref_t *p, const weft_data_t *d,
                          size_t n)
{
    if (d->owner_rank == b->me) return WEFT_SUCCESS;
    int rc = replaced_by(b, b->refs.data, n, 8);
    if (rc != 0) return rc > 0 ? WEFT_SUCCESS : WEFT_ERR_INVALID;
    return weft_ptg__fail(b, p,
                          "flow %d writes the final version of data %llu on rank %d, away from "
                          "its owner rank %d (no later task replaces it): run the last writer "
                          "on the owner",
                          p->flow, (unsigned long long)d->key, b->me, d->owner_rank);
}
