#include "sched/task.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

weft_task_t *weft_task_alloc(void)
{
    /* Only the header needs zeroing: flows and values are filled by the
     * inserter up to nflows/nvalues. */
    weft_task_t *t = malloc(sizeof *t);
    if (!t) return NULL;
    memset(t, 0, offsetof(weft_task_t, flow));
    t->nvalues = 0;
    atomic_init(&t->ndeps, 1);
    atomic_init(&t->refs, 1);
    weft_spin_init(&t->lock);
    t->done = 0;
    t->nsucc = 0;
    t->succ_cap = 4;
    t->succ = t->succ_inline;
    t->next = NULL;
    t->worker = -1;
    t->affinity = -1;
    t->workspace = t->stream = t->blas = t->solver = t->action = NULL;
    t->workspace_bytes = 0;
    return t;
}

void weft_task_retain(weft_task_t *t) { atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed); }

void weft_task_unref(weft_task_t *t)
{
    if (atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) != 1) return;
    for (int i = 0; i < t->nflows; i++) weft_data_unref(t->flow[i].data);
    if (t->kind != WEFT_TASK_BODY) free(t->action);
    if (t->succ != t->succ_inline) free(t->succ);
    free(t);
}

static int succ_push(weft_task_t *pred, weft_task_t *succ)
{
    if (pred->nsucc == pred->succ_cap) {
        int cap = pred->succ_cap * 2;
        weft_task_t **s = malloc(sizeof *s * (size_t)cap);
        if (!s) return -1;
        memcpy(s, pred->succ, sizeof *s * (size_t)pred->nsucc);
        if (pred->succ != pred->succ_inline) free(pred->succ);
        pred->succ = s;
        pred->succ_cap = cap;
    }
    pred->succ[pred->nsucc++] = succ;
    return 0;
}

int weft_task_add_edge(weft_task_t *pred, weft_task_t *succ)
{
    if (pred == succ) return 0;
    int added = 0;
    weft_spin_lock(&pred->lock);
    if (!pred->done) {
        /* Count first: pred may complete right after the unlock. */
        atomic_fetch_add_explicit(&succ->ndeps, 1, memory_order_relaxed);
        if (succ_push(pred, succ) == 0)
            added = 1;
        else
            atomic_fetch_sub_explicit(&succ->ndeps, 1, memory_order_relaxed);
    }
    weft_spin_unlock(&pred->lock);
    return added;
}

void weft_task_complete(weft_task_t *t, weft_task_ready_fn ready, void *arg)
{
    weft_spin_lock(&t->lock);
    t->done = 1;
    weft_spin_unlock(&t->lock);
    /* No edge can be added once done is set, so the list is stable now. */
    for (int i = 0; i < t->nsucc; i++) {
        weft_task_t *s = t->succ[i];
        if (atomic_fetch_sub_explicit(&s->ndeps, 1, memory_order_acq_rel) == 1) ready(arg, s);
    }
}

int weft_task_insert_done(weft_task_t *t)
{
    return atomic_fetch_sub_explicit(&t->ndeps, 1, memory_order_acq_rel) == 1;
}
