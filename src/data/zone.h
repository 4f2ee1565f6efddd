/*
 * Zone allocator: hands out blocks of one large region that the caller
 * allocated (one cudaMalloc, one shared-memory mapping, ...).
 *
 * The zone never reads or writes the region itself, because it may be device
 * memory; all bookkeeping lives in host-side structures. Blocks are kept in
 * address order so a free merges with its free neighbours, and live blocks are
 * indexed by offset in a hash table so a free finds its block in O(1).
 *
 * Every function is thread-safe: each zone has its own mutex, because tiles
 * are allocated and evicted from several worker threads.
 */
#ifndef WEFT_DATA_ZONE_H
#define WEFT_DATA_ZONE_H

#include <stddef.h>

#if defined(__GNUC__)
#define WEFT_ZONE_WUR __attribute__((warn_unused_result))
#else
#define WEFT_ZONE_WUR
#endif

typedef struct weft_zone weft_zone_t;

/* Return codes; kept numerically equal to the runtime's invalid-argument and
 * out-of-memory statuses so callers can pass them through unchanged. */
enum {
    WEFT_ZONE_OK = 0,
    WEFT_ZONE_ERR_INVALID = -1,
    WEFT_ZONE_ERR_NOMEM = -2,
};

/*
 * Create a zone over [base, base + size).
 * alignment: a power of two >= 8; every block offset and size is rounded up to
 * it. If base is not aligned, the zone starts at the first aligned address and
 * its capacity shrinks accordingly (see weft_zone_capacity).
 * Returns 0 and sets *out; WEFT_ZONE_ERR_INVALID for a NULL base or out, a bad
 * alignment, or a region with no whole aligned unit; WEFT_ZONE_ERR_NOMEM when
 * host bookkeeping cannot be allocated. *out is untouched on error.
 * Any thread.
 */
WEFT_ZONE_WUR int weft_zone_create(void *base, size_t size, size_t alignment, weft_zone_t **out);

/* Release the bookkeeping (not the region, which the caller owns). Blocks
 * still allocated are forgotten. NULL is ignored. No other thread may be using
 * the zone. */
void weft_zone_destroy(weft_zone_t *z);

/*
 * Best-fit allocation of bytes rounded up to the alignment: the smallest free
 * block that fits is used, its front part handed out, its rest stays free.
 * Returns NULL when bytes == 0, when no free block is large enough (the caller
 * may evict and retry), or when host bookkeeping memory runs out.
 * Any thread.
 */
void *weft_zone_malloc(weft_zone_t *z, size_t bytes);

/*
 * Give back a block returned by weft_zone_malloc of this zone; it merges with
 * its free neighbours on both sides.
 * Returns 0; 0 also for NULL (a no-op, as with free()); WEFT_ZONE_ERR_INVALID
 * for a NULL zone, a pointer this zone did not hand out (foreign, interior to a
 * block) or one already freed; the zone is unchanged then.
 * Any thread.
 */
WEFT_ZONE_WUR int weft_zone_free(weft_zone_t *z, void *ptr);

/* Statistics, each a consistent snapshot taken under the zone's lock. */
size_t weft_zone_capacity(const weft_zone_t *z);     /* bytes the zone manages */
size_t weft_zone_used(const weft_zone_t *z);         /* bytes in live blocks, rounded */
size_t weft_zone_peak(const weft_zone_t *z);         /* highest weft_zone_used so far */
size_t weft_zone_largest_free(const weft_zone_t *z); /* largest request that fits now */
size_t weft_zone_nblocks_free(const weft_zone_t *z); /* number of free blocks */

/*
 * Walk the bookkeeping and check its invariants: blocks tile the capacity
 * without gaps, no two free blocks are adjacent, every live block is in the
 * index, counters agree. Returns 0 when all hold, WEFT_ZONE_ERR_INVALID
 * otherwise. For tests and debugging: O(blocks). Any thread.
 */
WEFT_ZONE_WUR int weft_zone_validate(const weft_zone_t *z);

#endif /* WEFT_DATA_ZONE_H */
