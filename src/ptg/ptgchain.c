/* The producer chains of a graph (docs/PTG.md): the task whose output a
 * flow reads, through forwarders, and each version's depth, by which both
 * ends of a transfer name the version alike. */
#include <stdint.h>

#include "ptg/ptg.h"

#define ver weft_ptg__ver

/* The record of key, made empty when absent; *out its index. */
int weft_ptg__ver_get(weft_ptg_build_t *b, const weft_ptg_ref_t *key, size_t *out)
{
    size_t i = weft_ptgmap_get(&b->vers, key);
    if (i == SIZE_MAX) {
        i = b->vervec.n;
        weft_ptg_ver_t v = {
            .key = *key, .users = SIZE_MAX, .recvs = SIZE_MAX, .listed = -1, .canon = i};
        if (weft_vec_push(&b->vervec, &v) != WEFT_SUCCESS ||
            weft_ptgmap_put(&b->vers, key, i) != WEFT_SUCCESS)
            return WEFT_ERR_NOMEM;
    }
    *out = i;
    return WEFT_SUCCESS;
}

/* 0: the version from before the graph; 1: *p wrote it; 2: *p read it
 * and passes it on from its rank (a forwarder); -1 after logging. */
int weft_ptg__producer_of(weft_ptg_build_t *b, const weft_ptg_ref_t *r, weft_ptg_ref_t *p)
{
    const weft_ptg_class_t *k = &b->g->classes[r->cls];
    weft_ptg__unwrite(p, 1);
    int has = k->producer(r->idx, r->flow, p, b->g->arg);
    if (has == 0) return 0;
    if (has != 1 && has != 2) {
        weft_ptg__fail(b, r, "its producer function returned %d for flow %d: 0, 1 or 2", has,
                       r->flow);
        return -1;
    }
    if (p->cls == WEFT_PTG_UNWRITTEN) {
        weft_ptg__fail(b, r,
                       "its producer function returned %d for flow %d but did not write the "
                       "producer (*from)",
                       has, r->flow);
        return -1;
    }
    *p = weft_ptg__norm(b, *p);
    return weft_ptg__check_ref(b, r, p) == WEFT_SUCCESS ? has : -1;
}

/* Through forwarders to the task that wrote the version r's flow reads:
 * *w and 1, or 0 for the version from before the graph. A forwarder
 * passes on what it read, so its output has the depth of its input. */
int weft_ptg__writer_of(weft_ptg_build_t *b, const weft_ptg_ref_t *r, weft_ptg_ref_t *w)
{
    weft_ptg_ref_t cur = *r;
    for (size_t hops = 0;; hops++) {
        int has = weft_ptg__producer_of(b, &cur, w);
        if (has != 2) return has;
        if (hops > ((size_t)1 << 20)) {
            weft_ptg__fail(b, r, "its forwarders of flow %d loop", r->flow);
            return -1;
        }
        cur = *w;
    }
}

/* Every LABEL_STRIDE-th link of a walk keeps its depth (below). */
#define LABEL_STRIDE 64

/* r's output's depth: one more than the version it replaced, so the
 * number of writers back along the chain of producers to one whose depth
 * is known (a record here) or to the graph's start. Besides r, every
 * LABEL_STRIDE-th link walked keeps its depth: keeping one for each link
 * cost more than walking (the chain behind a received version belongs to
 * other ranks), but keeping none made a chain enumerated against its
 * order quadratic (each task walked the whole rest of it: 33 s for 16000
 * tasks of one rank). A chain that comes back to a link it passed loops
 * (Brent's check: one saved link, saved again at each power of two). */
int weft_ptg__label_of(weft_ptg_build_t *b, const weft_ptg_ref_t *r, uint32_t *label)
{
    weft_ptg_ref_t cur = *r, saved = *r;
    uint64_t steps = 0, power = 1, lam = 0;
    uint32_t base = 0;
    weft_vec_t marks; /* the links at steps LABEL_STRIDE, 2 LABEL_STRIDE, ... */
    weft_vec_init(&marks, sizeof(weft_ptg_ref_t), 16);
    int rc = WEFT_SUCCESS;
    for (;;) {
        size_t i = weft_ptgmap_get(&b->vers, &cur);
        if (i != SIZE_MAX && ver(b, i)->label) {
            base = ver(b, i)->label;
            break;
        }
        weft_ptg_ref_t p;
        int has = weft_ptg__writer_of(b, &cur, &p);
        if (has < 0) {
            rc = WEFT_ERR_INVALID;
            break;
        }
        if (has == 0) {
            base = 1;
            break;
        }
        cur = p;
        steps++;
        if (weft_ptg__same_ref(&cur, &saved)) {
            rc = weft_ptg__fail(b, r,
                                "the producers before its flow %d come back to a task they "
                                "passed (the producer functions form a cycle)",
                                r->flow);
            break;
        }
        if (++lam == power) {
            saved = cur;
            power *= 2;
            lam = 0;
        }
        if (steps % LABEL_STRIDE == 0 && weft_vec_push(&marks, &cur) != WEFT_SUCCESS) {
            rc = WEFT_ERR_NOMEM;
            break;
        }
    }
    if (rc == WEFT_SUCCESS && base + steps > UINT32_MAX - 2)
        rc = weft_ptg__fail(b, r, "its flow %d is written more than 2^32 times", r->flow);
    /* The link at step j wrote the version at depth base + steps - j. */
    const weft_ptg_ref_t *m = marks.data;
    for (size_t k = 0; k < marks.n && rc == WEFT_SUCCESS; k++) {
        size_t i;
        rc = weft_ptg__ver_get(b, &m[k], &i);
        if (rc == WEFT_SUCCESS)
            ver(b, i)->label = base + (uint32_t)(steps - (k + 1) * LABEL_STRIDE);
    }
    weft_vec_fini(&marks);
    if (rc != WEFT_SUCCESS) return rc;
    size_t i;
    if (weft_ptg__ver_get(b, r, &i) != WEFT_SUCCESS) return WEFT_ERR_NOMEM;
    *label = ver(b, i)->label = base + (uint32_t)steps;
    return WEFT_SUCCESS;
}
