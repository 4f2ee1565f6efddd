/* A binary max-heap of ready tasks: higher priority first, then earlier
 * insertion (keeps the sequential order among equals, which is also the
 * order that frees memory soonest). Not thread-safe: the owner locks. */
#ifndef WEFT_SCHED_HEAP_H
#define WEFT_SCHED_HEAP_H

#include "sched/task.h"
#include "util/vec.h"

typedef struct weft_heap {
    weft_vec_t v; /* weft_task_t *; v.n is read unlocked by weft_heap_empty */
} weft_heap_t;

static inline int weft_heap_init(weft_heap_t *h, int cap)
{
    weft_vec_init(&h->v, sizeof(weft_task_t *), (size_t)cap);
    return weft_vec_reserve(&h->v, (size_t)cap) == WEFT_SUCCESS ? 0 : -1;
}

static inline void weft_heap_fini(weft_heap_t *h) { weft_vec_fini(&h->v); }

static inline int weft_heap_empty(const weft_heap_t *h)
{
    return __atomic_load_n(&h->v.n, __ATOMIC_RELAXED) == 0;
}

static inline int weft_heap_before(const weft_task_t *a, const weft_task_t *b)
{
    return a->priority > b->priority || (a->priority == b->priority && a->seq < b->seq);
}

static inline int weft_heap_push(weft_heap_t *h, weft_task_t *t)
{
    size_t n = h->v.n;
    if (weft_vec_reserve(&h->v, n + 1) != WEFT_SUCCESS) return -1;
    weft_task_t **a = h->v.data;
    size_t i = n;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!weft_heap_before(t, a[p])) break;
        a[i] = a[p];
        i = p;
    }
    a[i] = t;
    __atomic_store_n(&h->v.n, n + 1, __ATOMIC_RELAXED);
    return 0;
}

static inline weft_task_t *weft_heap_pop(weft_heap_t *h)
{
    if (h->v.n == 0) return NULL;
    weft_task_t **a = h->v.data;
    weft_task_t *top = a[0];
    size_t n = h->v.n - 1;
    __atomic_store_n(&h->v.n, n, __ATOMIC_RELAXED);
    weft_task_t *last = a[n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && weft_heap_before(a[c + 1], a[c])) c++;
        if (!weft_heap_before(a[c], last)) break;
        a[i] = a[c];
        i = c;
    }
    if (n > 0) a[i] = last;
    return top;
}

#endif
