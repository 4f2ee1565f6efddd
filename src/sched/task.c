/* Task structures: the pool they come from, their references, and the
 * completion that releases successors. */
#include "sched/task.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "sched/task_slab.h"

void weft_task_pool_init(weft_task_pool_t *p)
{
    atomic_init(&p->returned, NULL);
    p->local = NULL;
    p->slabs = NULL;
    atomic_init(&p->live, 0);
    p->made = p->trim_idle = 0;
}

/* Every cached structure in one list: the private one, then those given
 * back by other threads. */
static weft_task_t *pool_cached(weft_task_pool_t *p)
{
    weft_task_t *back = atomic_exchange_explicit(&p->returned, NULL, memory_order_acquire);
    weft_task_t **end = &p->local;
    while (*end) end = &(*end)->next;
    *end = back;
    weft_task_t *all = p->local;
    p->local = NULL;
    return all;
}

void weft_task_pool_fini(weft_task_pool_t *p)
{
    weft_task_slab_free_all(&p->slabs, pool_cached(p));
    p->made = 0;
}

void weft_task_pool_trim(weft_task_pool_t *p, size_t keep)
{
    /* The usual cases, in O(1): no more were ever made than may be kept,
     * or they are all in the slab being carved, which stays (a window
     * below a slab's tasks walked the whole cache at every wait). */
    if (p->made <= keep || p->made <= p->trim_idle || !weft_task_slab_trimmable(p->slabs)) return;
    size_t before = p->made;
    p->local = weft_task_slab_trim(&p->slabs, pool_cached(p), keep, &p->made);
    /* A walk that freed nothing (a slab kept by a live task) is not made
     * again at every wait until more structures are made. */
    p->trim_idle = p->made == before ? before : 0;
}

static weft_task_t *pool_take(weft_task_pool_t *p)
{
    if (!p) return malloc(sizeof(weft_task_t));
    if (!p->local) p->local = atomic_exchange_explicit(&p->returned, NULL, memory_order_acquire);
    weft_task_t *t = p->local;
    if (t) {
        p->local = t->next;
        return t;
    }
    t = weft_task_slab_take(&p->slabs);
    p->made += t != NULL;
    return t;
}

static void pool_give(weft_task_t *t)
{
    weft_task_pool_t *p = t->pool;
    if (!p) {
        free(t);
        return;
    }
    atomic_fetch_sub_explicit(&p->live, 1, memory_order_relaxed);
    weft_task_t *head = atomic_load_explicit(&p->returned, memory_order_relaxed);
    do {
        t->next = head;
    } while (!atomic_compare_exchange_weak_explicit(&p->returned, &head, t, memory_order_release,
                                                    memory_order_relaxed));
}

weft_task_t *weft_task_alloc(weft_task_pool_t *pool)
{
    /* Only the header needs resetting: flows and values are filled by the
     * inserter up to nflows/nvalues. */
    weft_task_t *t = pool_take(pool);
    if (!t) return NULL;
    if (pool) atomic_fetch_add_explicit(&pool->live, 1, memory_order_relaxed);
    memset(t, 0, offsetof(weft_task_t, flow));
    t->nvalues = 0;
    atomic_init(&t->ndeps, 1);
    atomic_init(&t->refs, 1);
    weft_spin_init(&t->lock);
    t->done = 0;
    weft_vec_init_inline(&t->succ, sizeof(weft_task_t *), t->succ_inline, 4);
    t->next = NULL;
    t->affinity = -1;
    t->on_rank = t->device_hint = -1;
    t->workspace = t->stream = t->blas = t->solver = t->action = NULL;
    t->body_fn = NULL;
    t->body_rc = 0;
    t->flops = -1.0;
    t->body_ran = 0;
    t->cancelled = 0;
    t->gate = NULL;
    t->batch = NULL;
    t->nbatch = 0;
    t->batch_fn = NULL;
    t->workspace_bytes = 0;
    t->pool = pool;
    weft_log_cause_reset(&t->cause);
    return t;
}

void weft_task_merge_repeated_flows(weft_task_t *t)
{
    for (int i = 1; i < t->nflows; i++) {
        int first = weft_task_first_flow_of(t, i);
        if (first == i || ((t->flow[first].mode | t->flow[i].mode) & ~WEFT_RW)) continue;
        int mode = t->flow[first].mode | t->flow[i].mode;
        for (int j = first; j <= i; j++)
            if (t->flow[j].data == t->flow[i].data) t->flow[j].mode = mode;
    }
}

void weft_task_retain(weft_task_t *t)
{
    atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
}

void weft_task_unref(weft_task_t *t)
{
    if (atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) != 1) return;
    for (int i = 0; i < t->nflows; i++) weft_data__unref(t->flow[i].data);
    if (t->kind != WEFT_TASK_BODY) free(t->action);
    weft_vec_fini(&t->succ);
    pool_give(t);
}

static int succ_push(weft_task_t *pred, weft_task_t *succ)
{
    /* A typed store rather than weft_vec_push's memcpy: every edge passes here. */
    if (weft_vec_reserve(&pred->succ, pred->succ.n + 1) != WEFT_SUCCESS) return -1;
    ((weft_task_t **)pred->succ.data)[pred->succ.n++] = succ;
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

int weft_task_is_done(weft_task_t *t)
{
    weft_spin_lock(&t->lock);
    int done = t->done;
    weft_spin_unlock(&t->lock);
    return done;
}

void weft_task_complete(weft_task_t *t, weft_task_ready_fn ready, void *arg)
{
    weft_spin_lock(&t->lock);
    t->done = 1;
    weft_spin_unlock(&t->lock);
    /* No edge can be added once done is set, so the list is stable now. */
    weft_task_t **succ = t->succ.data;
    for (size_t i = 0; i < t->succ.n; i++) {
        weft_task_t *s = succ[i];
        if (atomic_fetch_sub_explicit(&s->ndeps, 1, memory_order_acq_rel) == 1) ready(arg, s);
    }
}

int weft_task_insert_done(weft_task_t *t)
{
    return atomic_fetch_sub_explicit(&t->ndeps, 1, memory_order_acq_rel) == 1;
}
