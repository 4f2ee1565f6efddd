/* Host memory for the copies the runtime allocates itself (tiles of
 * weft_matrix_new, first host copies, write-back targets of device-only
 * data), from slabs that are page-locked once it pays: copies between
 * pageable memory and a GPU run at a fifth of the link's rate through the
 * driver's bounce buffers and hold the calling thread (a device manager
 * writing a dirty victim back waits it out), which made out-of-core runs
 * four times slower on the H200 (docs/RESULTS.md, issue 18). Pinning costs too: it
 * faults every page in on one thread at about 2 GB/s there (8 GiB: 3.7 s,
 * more than the factorization); pages already mapped pin at 24-31 GB/s. So
 * slabs are pinned only once they outgrow pin_from (the rank's device
 * memory, host_pin=auto: tiles will then go back and forth), each after
 * several threads mapped its pages. Slabs grow geometrically (each the size
 * of all before it, 16 MiB to 1 GiB, at least the request), so pinning is
 * paid a few times, not once a tile; tiles are carved from a slab by the
 * zone allocator (data/zone.h). Without devices or with host_pin=off the
 * slabs are never pinned, and still keep the memory of copies that come
 * and go (received tiles) mapped; a failed pinning is said once, slabs
 * stay pageable.
 *
 * The pool outlives the devices: weft_hostmem_close (before the devices
 * close) unpins every slab, and copies freed later (taskpools freed last,
 * leaked data) still go back to their slab, whose memory is freed when the
 * slab empties. */
#ifndef WEFT_DATA_HOSTMEM_H
#define WEFT_DATA_HOSTMEM_H

#include <stddef.h>
#include <stdint.h>

typedef struct weft_hostmem weft_hostmem_t;

/* How a pool pins and unpins (a device module's host_register and
 * host_unregister); `who` names the device in messages. */
typedef struct weft_hostmem_pinner {
    int (*pin)(void *arg, void *ptr, size_t bytes); /* 0 when pinned */
    void (*unpin)(void *arg, void *ptr);
    void *arg;
    const char *who;
    int threads;     /* how many threads may map a slab's pages before it is pinned */
    size_t pin_from; /* slabs are pinned once they hold more bytes than this (0: always) */
} weft_hostmem_pinner_t;

/* A pool that pins through `pinner` (copied; pin NULL: never pins, the
 * slabs only keep host copies' memory mapped). A zeroed allocation (a
 * tile of weft_matrix_new) that would take the blocks handed out past
 * `limit` bytes fails, said once (0: no limit); other allocations
 * (received tiles, write-back targets) are counted but never refused: a
 * receive has no better place. NULL when out of memory (callers then get
 * plain memory). Main thread. */
weft_hostmem_t *weft_hostmem_open(const weft_hostmem_pinner_t *pinner, size_t limit);
/* Unpins every slab (the pinner still works); the pool is freed with its
 * last slab. NULL is ignored. Main thread. */
void weft_hostmem_close(weft_hostmem_t *pool);
/* bytes of host memory, 64-byte aligned; *allocator is what
 * weft_hostmem_free needs back (NULL for plain memory). NULL when out of
 * memory. Any thread. */
void *weft_hostmem_alloc(weft_hostmem_t *pool, size_t bytes, void **allocator);
/* The same, its bytes zero: a fresh slab's pages are zeros already, so only
 * memory handed out before (a block freed in its slab, plain memory) is
 * cleared, and a new matrix costs no pass over its bytes. */
void *weft_hostmem_alloc_zero(weft_hostmem_t *pool, size_t bytes, void **allocator);
/* The free_fn of a copy allocated by weft_hostmem_alloc. Any thread. */
void weft_hostmem_free(void *allocator, void *ptr, size_t bytes);
/* Bytes pinned now, bytes of the slabs now, and slabs made since the start
 * (show_stats); zeros for NULL. Any thread. */
void weft_hostmem_stats(weft_hostmem_t *pool, size_t *pinned, size_t *total, int *slabs_made);
/* The limit a zeroed allocation is refused past (0: none) and the bytes of
 * the blocks handed out now, which it counts; zeros for NULL. A matrix's
 * creation compares its tiles with them before allocating any. Any
 * thread. */
void weft_hostmem_room(weft_hostmem_t *pool, size_t *limit, size_t *used);
/* 1 when the bytes [lo, hi) share one with a slab of the pool (whether in
 * a block handed out or not: only the pool hands them out); 0 for NULL.
 * Any thread. */
int weft_hostmem_holds(weft_hostmem_t *pool, uintptr_t lo, uintptr_t hi);

#endif
