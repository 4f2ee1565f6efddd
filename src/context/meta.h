/* Runtime metadata of a rank: the bytes that the sequential task flow keeps
 * (data records, holder sets, the sequence check's log; tasks are counted
 * by their pool), counted as they are allocated and freed, and the peak of
 * their sum, which the simulation reports (docs/SCALE.md). */
#ifndef WEFT_CONTEXT_META_H
#define WEFT_CONTEXT_META_H

#include <stdatomic.h>

typedef enum weft_meta_kind {
    WEFT_META_RECORDS = 0, /* STF records, their reader arrays, taskpools' touched lists */
    WEFT_META_HOLDERS = 1, /* holder sets of remote inference */
    WEFT_META_SEQ = 2,     /* the sequence check's log */
    WEFT_META_KINDS = 3
} weft_meta_kind_t;

typedef struct weft_meta {
    atomic_llong bytes[WEFT_META_KINDS]; /* now; frees may come from any thread */
    atomic_llong *tasks_live;            /* the task pool's count of live tasks */
    long long task_bytes;                /* bytes of one task structure */
    long long peak;                      /* of the sum, tasks included (main thread) */
} weft_meta_t;

/* The bytes now; raises the peak to them. Called by the thread that
 * allocates (insertion), after it allocated: every growth passes here. */
static inline long long weft_meta_note(weft_meta_t *m)
{
    long long now = m->tasks_live
                        ? atomic_load_explicit(m->tasks_live, memory_order_relaxed) * m->task_bytes
                        : 0;
    for (int k = 0; k < WEFT_META_KINDS; k++)
        now += atomic_load_explicit(&m->bytes[k], memory_order_relaxed);
    if (now > m->peak) m->peak = now;
    return now;
}

/* Bytes of `kind` allocated (n > 0: the peak follows) or freed (n < 0: any
 * thread). m may be NULL (nothing counted). */
static inline void weft_meta_add(weft_meta_t *m, weft_meta_kind_t kind, long long n)
{
    if (!m) return;
    atomic_fetch_add_explicit(&m->bytes[kind], n, memory_order_relaxed);
    if (n > 0) weft_meta_note(m);
}

#endif
