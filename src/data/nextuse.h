/* The pending uses of one data: the tasks of this rank that were inserted
 * with it and have not finished, in insertion order, each with its
 * priority. Device eviction (devmgr/devevict.c, device_evict=next_use)
 * keeps the copies whose next use comes soonest, in the order the ready
 * queues run tasks: higher priority first, then earlier insertion. Kept in
 * the data (d->uses) under its lock. */
#ifndef WEFT_DATA_NEXTUSE_H
#define WEFT_DATA_NEXTUSE_H

#include <stdint.h>

/* When a use comes, in run order: (priority, seq) as the ready heaps rank
 * tasks. */
typedef struct weft_use {
    uint64_t seq;
    int priority;
    int device; /* where the task will run (its home device), -1 not known yet */
    int writes; /* the task writes the data: later readers wait for its version */
    /* Its seq says nothing of its place among the tasks it depends on (a
     * graph numbers its tasks class by class, transfers last): a write by
     * it may come before any reader, whatever their numbers. */
    int unordered;
    int dropped; /* its task ended: a gap the ring's head passes (nextuse.c) */
} weft_use_t;

/* The "no pending use known on this rank" value: after every real use. */
#define WEFT_USE_NONE ((weft_use_t){.seq = UINT64_MAX, .priority = INT32_MIN, .device = -1})

/* 1 when use a comes after use b in run order (NONE after all others). */
static inline int weft_use_after(weft_use_t a, weft_use_t b)
{
    if (a.priority != b.priority) return a.priority < b.priority;
    return a.seq > b.seq;
}

/* A ring of uses, in increasing insertion number from head, and the first
 * in run order while known (eviction asks far more often than it changes). */
typedef struct weft_nextuse {
    weft_use_t *use;
    int head, n, cap;
    weft_use_t first;
    int first_known; /* first is known for device first_device */
    int first_device;
    int prio_max; /* no use listed has a higher priority (a bound; tight after a full walk) */
} weft_nextuse_t;

/* 1 when one more use fits without growing. Under the data's lock. */
static inline int weft_nextuse_has_room_locked(const weft_nextuse_t *u) { return u->n < u->cap; }

/* Appends a use (seq above every use listed); there must be room. */
void weft_nextuse_push_locked(weft_nextuse_t *u, weft_use_t use);

/* Moves the uses into `grown` (cap slots, allocated by the caller without
 * the lock) and returns the old array for the caller to free after. */
weft_use_t *weft_nextuse_grow_locked(weft_nextuse_t *u, weft_use_t *grown, int cap);

/* Removes the use by task `seq` (it finished); nothing when absent. A
 * binary search (the ring's numbers increase), the use marked dropped, and
 * the head moved past the dropped ones: tasks that end far from the head
 * (a device picks the tasks whose tiles it holds) cost what those at the
 * head cost. A search from the head and a shift closed each gap: 400,000
 * tasks reading one tile on an emulated device ended 1,500-2,400 uses from
 * the head, O(N^2) in all (44 s; 1.8 s with device_evict=lru). */
void weft_nextuse_drop_locked(weft_nextuse_t *u, uint64_t seq);

/* The use on `device` that comes first in run order (uses by tasks homed
 * elsewhere skipped, those not placed yet counted), WEFT_USE_NONE when
 * none: kept from the last call for that device while no use ended, else a
 * walk of this data's pending uses from the earliest, which stops at the
 * first use there of the highest priority listed (prio_max): with one
 * priority, the first use there (a full walk each time cost a tile read by
 * N pending tasks O(N) a task's end). */
weft_use_t weft_nextuse_first_locked(weft_nextuse_t *u, int device);

/* 1 when a pending use that may come before task `seq` writes the data: a
 * task reading it at `seq` may wait for a version not produced yet, so its
 * newest version now may not be the one that task will read (prefetch
 * ahead). Insertion numbers order uses only where both are ordered (an
 * inserted task comes after the tasks it depends on): a write by an
 * unordered use, or any other write when `seq`'s own use is unordered or
 * not listed, counts whatever its number. */
int weft_nextuse_writer_before_locked(const weft_nextuse_t *u, uint64_t seq);

/* Frees the array (the data is being destroyed). */
void weft_nextuse_fini(weft_nextuse_t *u);

struct weft_data;

/* A task of this rank was inserted with d: once per task, however many
 * flows name d. Takes d's lock; grows the ring outside it. Main thread.
 * WEFT_ERR_NOMEM when it cannot grow. */
int weft_data_use_add(struct weft_data *d, weft_use_t use) __attribute__((warn_unused_result));
/* Task `seq` finished (ran, failed or was cancelled): no longer a use of
 * d. Takes d's lock. Any thread. */
void weft_data_use_done(struct weft_data *d, uint64_t seq);

#endif
