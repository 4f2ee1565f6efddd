/* Task structures carved from slabs (task_slab.h). */
#include "sched/task_slab.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "sched/task.h"

#if defined(__SANITIZE_ADDRESS__)
#define SLABS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SLABS 0
#endif
#endif
#ifndef SLABS
#define SLABS 1
#endif

#define SLAB_BYTES ((size_t)2 << 20) /* one huge page on x86-64 and most arm64 kernels */

/* At the start of its slab: a task finds its slab by rounding its address
 * down to SLAB_BYTES. */
struct weft_task_slab {
    void *raw; /* what malloc gave: twice the slab, for the alignment */
    weft_task_slab_t *next;
    size_t carved; /* tasks handed out so far (live or cached) */
    size_t cached; /* of those, in the list trim walks (counted there) */
};

#define FIRST_TASK (((sizeof(weft_task_slab_t) + 63) / 64) * 64)
#define SLAB_TASKS ((SLAB_BYTES - FIRST_TASK) / sizeof(weft_task_t))

static weft_task_slab_t *slab_of(const weft_task_t *t)
{
    return (weft_task_slab_t *)((uintptr_t)t & ~(uintptr_t)(SLAB_BYTES - 1));
}

/* From malloc (so that the heap's figures count it), twice the size for
 * the alignment: the half left over is never touched. */
static weft_task_slab_t *slab_new(void)
{
    void *raw = malloc(2 * SLAB_BYTES);
    if (!raw) return NULL;
    uintptr_t base = ((uintptr_t)raw + SLAB_BYTES - 1) & ~(uintptr_t)(SLAB_BYTES - 1);
    weft_task_slab_t *s = (weft_task_slab_t *)base;
    /* Advice only: a kernel without huge pages or without populate (before
     * 5.14) faults the pages one by one, as before. */
    (void)madvise(s, SLAB_BYTES, MADV_HUGEPAGE);
#ifdef MADV_POPULATE_WRITE
    (void)madvise(s, SLAB_BYTES, MADV_POPULATE_WRITE);
#endif
    *s = (weft_task_slab_t){.raw = raw};
    return s;
}

weft_task_t *weft_task_slab_take(weft_task_slab_t **slabs)
{
    if (!SLABS) return malloc(sizeof(weft_task_t));
    weft_task_slab_t *s = *slabs;
    if (!s || s->carved == SLAB_TASKS) {
        s = slab_new();
        if (!s) return NULL;
        s->next = *slabs;
        *slabs = s;
    }
    return (weft_task_t *)((char *)s + FIRST_TASK + s->carved++ * sizeof(weft_task_t));
}

/* Without slabs: the first keep of the list stay, the others are freed. */
static weft_task_t *trim_each(weft_task_t *cached, size_t keep, size_t *made)
{
    weft_task_t *kept = NULL, **end = &kept;
    size_t n = 0;
    for (weft_task_t *t = cached, *next; t; t = next) {
        next = t->next;
        if (n < keep) {
            *end = t;
            end = &t->next;
            n++;
        } else {
            free(t);
            (*made)--;
        }
    }
    *end = NULL;
    return kept;
}

weft_task_t *weft_task_slab_trim(weft_task_slab_t **slabs, weft_task_t *cached, size_t keep,
                                 size_t *made)
{
    if (!SLABS) return trim_each(cached, keep, made);
    for (weft_task_slab_t *s = *slabs; s; s = s->next) s->cached = 0;
    for (weft_task_t *t = cached; t; t = t->next) slab_of(t)->cached++;
    /* Slabs with no live task, past the one being carved, go while more
     * than keep structures are made: marked by cached = SIZE_MAX. */
    int any = 0;
    for (weft_task_slab_t *s = *slabs ? (*slabs)->next : NULL; s && *made > keep; s = s->next)
        if (s->cached == s->carved) {
            *made -= s->carved;
            s->cached = SIZE_MAX;
            any = 1;
        }
    if (!any) return cached;
    weft_task_t *kept = NULL, **end = &kept;
    for (weft_task_t *t = cached; t; t = t->next)
        if (slab_of(t)->cached != SIZE_MAX) {
            *end = t;
            end = &t->next;
        }
    *end = NULL;
    for (weft_task_slab_t **at = slabs; *at;) {
        weft_task_slab_t *s = *at;
        if (s->cached != SIZE_MAX) {
            at = &s->next;
            continue;
        }
        *at = s->next;
        free(s->raw);
    }
    return kept;
}

int weft_task_slab_trimmable(const weft_task_slab_t *slabs)
{
    return !SLABS || (slabs && slabs->next);
}

void weft_task_slab_free_all(weft_task_slab_t **slabs, weft_task_t *cached)
{
    if (!SLABS) (void)trim_each(cached, 0, &(size_t){0});
    for (weft_task_slab_t *s = *slabs, *next; s; s = next) {
        next = s->next;
        free(s->raw);
    }
    *slabs = NULL;
}
