/* A binary max-heap of ready tasks: higher priority first, then earlier
 * insertion (keeps the sequential order among equals, which is also the
 * order that frees memory soonest). Not thread-safe: the owner locks. */
#ifndef WEFT_SCHED_HEAP_H
#define WEFT_SCHED_HEAP_H

#include <stdlib.h>

#include "sched/task.h"

typedef struct weft_heap {
    weft_task_t **v;
    int n, cap;
} weft_heap_t;

static inline int weft_heap_init(weft_heap_t *h, int cap)
{
    h->v = malloc(sizeof *h->v * (size_t)cap);
    h->n = 0;
    h->cap = cap;
    return h->v ? 0 : -1;
}

static inline void weft_heap_fini(weft_heap_t *h) { free(h->v); }

static inline int weft_heap_empty(const weft_heap_t *h)
{
    return __atomic_load_n(&h->n, __ATOMIC_RELAXED) == 0;
}

static inline int weft_heap_before(const weft_task_t *a, const weft_task_t *b)
{
    return a->priority > b->priority || (a->priority == b->priority && a->seq < b->seq);
}

static inline int weft_heap_push(weft_heap_t *h, weft_task_t *t)
{
    if (h->n == h->cap) {
        weft_task_t **v = realloc(h->v, sizeof *v * (size_t)h->cap * 2);
        if (!v) return -1;
        h->v = v;
        h->cap *= 2;
    }
    int i = h->n;
    while (i > 0) {
        int p = (i - 1) / 2;
        if (!weft_heap_before(t, h->v[p])) break;
        h->v[i] = h->v[p];
        i = p;
    }
    h->v[i] = t;
    __atomic_store_n(&h->n, h->n + 1, __ATOMIC_RELAXED);
    return 0;
}

static inline weft_task_t *weft_heap_pop(weft_heap_t *h)
{
    if (h->n == 0) return NULL;
    weft_task_t *top = h->v[0];
    int n = h->n - 1;
    __atomic_store_n(&h->n, n, __ATOMIC_RELAXED);
    weft_task_t *last = h->v[n];
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && weft_heap_before(h->v[c + 1], h->v[c])) c++;
        if (!weft_heap_before(h->v[c], last)) break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (n > 0) h->v[i] = last;
    return top;
}

#endif
