/* Where task structures come from: slabs of 2 MiB, aligned on their size,
 * that the kernel may back with one huge page each and that are faulted in
 * at once. Taken one by one from malloc, a taskpool inserted far ahead of
 * its workers made a page fault every two or three tasks, which on a
 * virtual machine cost more than small tasks do (a solver's 300 iterations
 * of 41 tasks of a few microseconds each, inserted before one wait: 290 us
 * an iteration against 130 with huge pages, or 139 waiting every
 * iteration). Under AddressSanitizer each task is a malloc of its own, so
 * that an overrun of one is caught at the next. Owner thread only (the
 * task pool's). */
#ifndef WEFT_SCHED_TASK_SLAB_H
#define WEFT_SCHED_TASK_SLAB_H

#include <stddef.h>

typedef struct weft_task weft_task_t;
typedef struct weft_task_slab weft_task_slab_t;

/* A new task structure's memory from the slab being carved (*slabs, the
 * first of the list), or from a new slab pushed in front; NULL without
 * memory. */
weft_task_t *weft_task_slab_take(weft_task_slab_t **slabs);

/* Cached structures (the list through ->next) less those of slabs all of
 * whose tasks are in it, freed while more than keep of *made remain (the
 * slab being carved stays); returns the list that is left. */
weft_task_t *weft_task_slab_trim(weft_task_slab_t **slabs, weft_task_t *cached, size_t keep,
                                 size_t *made);

/* Whether weft_task_slab_trim may free anything: without slabs, or with
 * more than the one being carved (which stays). */
int weft_task_slab_trimmable(const weft_task_slab_t *slabs);

/* Frees every slab, or without slabs each structure of the cached list:
 * no task may be alive. */
void weft_task_slab_free_all(weft_task_slab_t **slabs, weft_task_t *cached);

#endif
