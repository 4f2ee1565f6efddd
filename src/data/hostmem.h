/* Host memory for the copies the runtime allocates itself (tiles of
 * weft_matrix_new, first host copies, write-back targets of device-only
 * data). With accelerators on the rank and host_pin=1 it comes from
 * page-locked slabs, so that copies to and from a device are truly
 * asynchronous and run at the link's rate: from pageable memory a copy out
 * of the device holds the calling thread (a device manager evicting a dirty
 * tile) and both directions go through the driver's bounce buffers at a
 * fraction of the rate. Slabs grow geometrically (each the size of all
 * before it, 16 MiB to 1 GiB, at least the request) so that pinning is paid
 * a few times, not once a tile; a tile is carved from a slab by the zone
 * allocator (data/zone.h). Pinning faults every page of a slab in, one
 * thread, at about 2 GB/s on the H200 machine (8 GiB: 3.7 s, more than the
 * factorization it serves), while pinning pages already there runs at
 * 31 GB/s: so a new slab's pages are first touched by several threads
 * (huge pages asked for), then pinned. Without devices, with host_pin=0, or when pinning
 * fails (logged once), plain aligned memory.
 *
 * The pool outlives the devices: weft_hostmem_close (before the devices
 * close) unpins every slab, and copies freed later (taskpools freed last,
 * leaked data) still go back to their slab, whose memory is freed when the
 * slab empties. */
#ifndef WEFT_DATA_HOSTMEM_H
#define WEFT_DATA_HOSTMEM_H

#include <stddef.h>

typedef struct weft_hostmem weft_hostmem_t;

/* How a pool pins and unpins (a device module's host_register and
 * host_unregister); `who` names the device in messages. */
typedef struct weft_hostmem_pinner {
    int (*pin)(void *arg, void *ptr, size_t bytes); /* 0 when pinned */
    void (*unpin)(void *arg, void *ptr);
    void *arg;
    const char *who;
    int threads; /* how many threads may fault a new slab's pages in */
} weft_hostmem_pinner_t;

/* A pool that pins through `pinner` (copied); NULL when out of memory
 * (callers then get plain memory). Main thread. */
weft_hostmem_t *weft_hostmem_open(const weft_hostmem_pinner_t *pinner);
/* Unpins every slab (the pinner still works); the pool is freed with its
 * last slab. NULL is ignored. Main thread. */
void weft_hostmem_close(weft_hostmem_t *pool);
/* bytes of host memory, 64-byte aligned; *allocator is what
 * weft_hostmem_free needs back (NULL for plain memory). NULL when out of
 * memory. Any thread. */
void *weft_hostmem_alloc(weft_hostmem_t *pool, size_t bytes, void **allocator);
/* The free_fn of a copy allocated by weft_hostmem_alloc. Any thread. */
void weft_hostmem_free(void *allocator, void *ptr, size_t bytes);
/* Bytes pinned now and slabs made since the start (show_stats); zeros for
 * NULL. Any thread. */
void weft_hostmem_stats(weft_hostmem_t *pool, size_t *pinned, int *slabs_made);

#endif
