/*
 * Zone allocator: see zone.h for the contract.
 *
 * Bookkeeping:
 * - every block (free or live) is a node in a doubly-linked list ordered by
 *   address, so a freed block finds its neighbours for merging in O(1);
 * - free blocks are also on segregated free lists, one a size class (16
 *   classes a power of two, a bitmap of the classes in use), so a fit looks
 *   at the blocks of the request's own class (a bounded number of them) and
 *   then at one class above, never at every free block: the one unordered
 *   list it was took 1.1 ms an allocation behind 80,000 small holes (a
 *   stranger's measurement);
 * - live blocks are indexed by offset in an open-addressing hash table
 *   (linear probing, backward-shift deletion), so free() needs no scan and
 *   rejects pointers it did not hand out.
 * Addresses are handled as uintptr_t: the region may be device memory and is
 * never dereferenced, and integer compares avoid comparing unrelated pointers.
 */
#include "data/zone.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#define ZONE_INDEX_MIN_SLOTS 64u
/* Sizes under 16 have a class each; from 16 up, 16 classes a power of two. */
#define ZONE_NCLASSES (16 + 60 * 16)
#define ZONE_CLASS_WORDS ((ZONE_NCLASSES + 63) / 64)
/* The most blocks of the request's own class a fit looks at (they may be
 * smaller than the request: the class is a range). */
#define ZONE_FIT_SCAN 64

typedef struct zone_block {
    size_t offset; /* from the zone's aligned start */
    size_t size;
    int is_free;
    struct zone_block *prev, *next;           /* address order, all blocks */
    struct zone_block *free_prev, *free_next; /* free blocks only */
} zone_block_t;

typedef struct {
    size_t key; /* block offset; meaningful only when block != NULL */
    zone_block_t *block;
} zone_slot_t;

struct weft_zone {
    pthread_mutex_t lock;
    uintptr_t start; /* first aligned address of the region */
    size_t capacity;
    size_t alignment;
    zone_block_t *head; /* lowest address */
    zone_block_t *free_head[ZONE_NCLASSES];
    uint64_t classes_used[ZONE_CLASS_WORDS]; /* bit c: free_head[c] != NULL */
    size_t nfree;
    size_t used, peak;
    zone_slot_t *slots;  /* index of live blocks */
    size_t nslots;       /* power of two */
    unsigned slot_shift; /* 64 - log2(nslots), for multiplicative hashing */
    size_t nlive;
};

/* The statistics take the lock through a const handle; the zone object itself
 * is never const (it comes from calloc), so casting it back is well defined. */
static void zone_lock(const weft_zone_t *z) { pthread_mutex_lock(&((weft_zone_t *)z)->lock); }

static void zone_unlock(const weft_zone_t *z) { pthread_mutex_unlock(&((weft_zone_t *)z)->lock); }

/* ---- index of live blocks ------------------------------------------------ */

static unsigned log2_pow2(size_t n)
{
    unsigned k = 0;
    while (((size_t)1 << k) < n) k++;
    return k;
}

/* Fibonacci hashing: offsets are multiples of the alignment, so their low bits
 * are all zero; the multiply spreads the high bits into the top of the word. */
static size_t index_home(const weft_zone_t *z, size_t key)
{
    return (size_t)(((uint64_t)key * UINT64_C(0x9E3779B97F4A7C15)) >> z->slot_shift);
}

static int index_alloc(weft_zone_t *z, size_t nslots)
{
    zone_slot_t *slots = calloc(nslots, sizeof(*slots));
    if (slots == NULL) return WEFT_ZONE_ERR_NOMEM;
    z->slots = slots;
    z->nslots = nslots;
    z->slot_shift = 64u - log2_pow2(nslots);
    return WEFT_ZONE_OK;
}

/* Insert without growing; index_reserve must have made room. */
static void index_insert(weft_zone_t *z, zone_block_t *b)
{
    size_t mask = z->nslots - 1;
    size_t i = index_home(z, b->offset);
    while (z->slots[i].block != NULL) i = (i + 1) & mask;
    z->slots[i].key = b->offset;
    z->slots[i].block = b;
    z->nlive++;
}

/* Make room for one more live block, keeping the load at or under one half so
 * probe sequences stay short. Done before any change so malloc can fail cleanly. */
static int index_reserve(weft_zone_t *z)
{
    if ((z->nlive + 1) * 2 <= z->nslots) return WEFT_ZONE_OK;
    zone_slot_t *old = z->slots;
    size_t old_n = z->nslots;
    if (index_alloc(z, old_n * 2) != WEFT_ZONE_OK)
        return WEFT_ZONE_ERR_NOMEM; /* index_alloc left the old table in place */
    z->nlive = 0;
    for (size_t i = 0; i < old_n; i++) {
        if (old[i].block != NULL) index_insert(z, old[i].block);
    }
    free(old);
    return WEFT_ZONE_OK;
}

/* Slot holding key, or nslots when absent. */
static size_t index_find(const weft_zone_t *z, size_t key)
{
    size_t mask = z->nslots - 1;
    for (size_t i = index_home(z, key); z->slots[i].block != NULL; i = (i + 1) & mask) {
        if (z->slots[i].key == key) return i;
    }
    return z->nslots;
}

/* Backward-shift deletion: pull later entries of the probe run into the hole
 * unless their home lies cyclically in (hole, j], so no tombstones build up. */
static void index_remove_at(weft_zone_t *z, size_t hole)
{
    size_t mask = z->nslots - 1;
    size_t j = hole;
    for (;;) {
        j = (j + 1) & mask;
        if (z->slots[j].block == NULL) break;
        size_t home = index_home(z, z->slots[j].key);
        int stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
        if (stays) continue;
        z->slots[hole] = z->slots[j];
        hole = j;
    }
    z->slots[hole].block = NULL;
    z->nlive--;
}

/* ---- block lists --------------------------------------------------------- */

static unsigned size_class(size_t size)
{
    if (size < 16) return (unsigned)size;
    unsigned k = 63u - (unsigned)__builtin_clzll((unsigned long long)size); /* >= 4 */
    return 16u + (k - 4u) * 16u + (unsigned)((size >> (k - 4u)) & 15u);
}

static void class_mark(weft_zone_t *z, unsigned c, int used)
{
    uint64_t bit = 1ULL << (c % 64);
    if (used)
        z->classes_used[c / 64] |= bit;
    else
        z->classes_used[c / 64] &= ~bit;
}

/* The first class above c with a free block, ZONE_NCLASSES when none. */
static unsigned class_next(const weft_zone_t *z, unsigned c)
{
    unsigned from = c + 1;
    for (unsigned w = from / 64; w < ZONE_CLASS_WORDS; w++) {
        uint64_t bits = z->classes_used[w];
        if (w == from / 64) bits &= ~0ULL << (from % 64);
        if (bits) return w * 64 + (unsigned)__builtin_ctzll(bits);
    }
    return ZONE_NCLASSES;
}

static void free_list_push(weft_zone_t *z, zone_block_t *b)
{
    unsigned c = size_class(b->size);
    b->is_free = 1;
    b->free_prev = NULL;
    b->free_next = z->free_head[c];
    if (z->free_head[c] != NULL) z->free_head[c]->free_prev = b;
    z->free_head[c] = b;
    class_mark(z, c, 1);
    z->nfree++;
}

/* b's size must be the one it was pushed with (its class). */
static void free_list_remove(weft_zone_t *z, zone_block_t *b)
{
    unsigned c = size_class(b->size);
    if (b->free_prev != NULL)
        b->free_prev->free_next = b->free_next;
    else
        z->free_head[c] = b->free_next;
    if (b->free_next != NULL) b->free_next->free_prev = b->free_prev;
    if (z->free_head[c] == NULL) class_mark(z, c, 0);
    b->free_prev = b->free_next = NULL;
    b->is_free = 0;
    z->nfree--;
}

/* Cut b (taken off the free lists, larger than need) in two: b keeps the
 * first need bytes, spare becomes the free rest right after it. Handing out
 * the front keeps live blocks packed towards low addresses and the large
 * free space together. */
static void block_split(weft_zone_t *z, zone_block_t *b, size_t need, zone_block_t *spare)
{
    spare->offset = b->offset + need;
    spare->size = b->size - need;
    spare->prev = b;
    spare->next = b->next;
    if (b->next != NULL) b->next->prev = spare;
    b->next = spare;
    b->size = need;
    free_list_push(z, spare);
}

/* b absorbs its successor; neither is on a free list. */
static void block_absorb_next(zone_block_t *b)
{
    zone_block_t *n = b->next;
    b->size += n->size;
    b->next = n->next;
    if (n->next != NULL) n->next->prev = b;
    free(n);
}

/* The smallest block of class c of at least need bytes among its first
 * `most` (an exact fit ends the look). */
static zone_block_t *class_fit(const weft_zone_t *z, unsigned c, size_t need, size_t most)
{
    zone_block_t *best = NULL;
    size_t seen = 0;
    for (zone_block_t *b = z->free_head[c]; b != NULL && seen < most; b = b->free_next, seen++) {
        if (b->size < need || (best != NULL && b->size >= best->size)) continue;
        best = b;
        if (b->size == need) break;
    }
    return best;
}

/* A free block of at least need bytes: the smallest among the first
 * ZONE_FIT_SCAN of need's own class, else the smallest among the first
 * ZONE_FIT_SCAN of the next class that has any (every one of them fits),
 * else the whole own class (the only place left), so that a request fails
 * only when no block fits. Best fit but where a class holds more blocks
 * than the look takes. */
static zone_block_t *best_fit(const weft_zone_t *z, size_t need)
{
    unsigned c = size_class(need);
    zone_block_t *b = class_fit(z, c, need, ZONE_FIT_SCAN);
    if (b != NULL) return b;
    unsigned up = class_next(z, c);
    if (up < ZONE_NCLASSES) return class_fit(z, up, need, ZONE_FIT_SCAN);
    return class_fit(z, c, need, SIZE_MAX);
}

/* ---- public API ---------------------------------------------------------- */

/* Usable aligned span of [base, base + size), or 0 when there is none. */
static size_t aligned_span(uintptr_t addr, size_t size, size_t alignment, uintptr_t *start)
{
    if (addr > UINTPTR_MAX - (alignment - 1)) return 0;
    uintptr_t s = (addr + (alignment - 1)) & ~(uintptr_t)(alignment - 1);
    size_t pad = (size_t)(s - addr);
    if (pad >= size) return 0;
    *start = s;
    return (size - pad) & ~(alignment - 1);
}

int weft_zone_create(void *base, size_t size, size_t alignment, weft_zone_t **out)
{
    if (base == NULL || out == NULL || alignment < 8 || (alignment & (alignment - 1)) != 0)
        return WEFT_ZONE_ERR_INVALID;
    uintptr_t start = 0;
    size_t capacity = aligned_span((uintptr_t)base, size, alignment, &start);
    if (capacity == 0) return WEFT_ZONE_ERR_INVALID;

    zone_block_t *all = NULL;
    weft_zone_t *z = calloc(1, sizeof(*z));
    if (z == NULL) goto err_zone;
    if (index_alloc(z, ZONE_INDEX_MIN_SLOTS) != WEFT_ZONE_OK) goto err_index;
    all = calloc(1, sizeof(*all));
    if (all == NULL) goto err_block;
    if (pthread_mutex_init(&z->lock, NULL) != 0) goto err_mutex;

    z->start = start;
    z->capacity = capacity;
    z->alignment = alignment;
    all->size = capacity;
    z->head = all;
    free_list_push(z, all);
    *out = z;
    return WEFT_ZONE_OK;

err_mutex:
    free(all);
err_block:
    free(z->slots);
err_index:
    free(z);
err_zone:
    return WEFT_ZONE_ERR_NOMEM;
}

void weft_zone_destroy(weft_zone_t *z)
{
    if (z == NULL) return;
    zone_block_t *b = z->head;
    while (b != NULL) {
        zone_block_t *next = b->next;
        free(b);
        b = next;
    }
    free(z->slots);
    pthread_mutex_destroy(&z->lock);
    free(z);
}

void *weft_zone_malloc(weft_zone_t *z, size_t bytes)
{
    if (z == NULL || bytes == 0 || bytes > z->capacity) return NULL;
    size_t need = (bytes + (z->alignment - 1)) & ~(z->alignment - 1);
    void *ptr = NULL;
    zone_block_t *spare = NULL;

    zone_lock(z);
    zone_block_t *b = best_fit(z, need);
    if (b == NULL) goto unlock;
    /* Get every resource first so a failure leaves the zone untouched. */
    if (b->size > need && (spare = malloc(sizeof(*spare))) == NULL) goto unlock;
    if (index_reserve(z) != WEFT_ZONE_OK) {
        free(spare);
        goto unlock;
    }
    free_list_remove(z, b);
    if (spare != NULL) block_split(z, b, need, spare);
    index_insert(z, b);
    z->used += b->size;
    if (z->used > z->peak) z->peak = z->used;
    ptr = (void *)(z->start + b->offset);
unlock:
    zone_unlock(z);
    return ptr;
}

int weft_zone_free(weft_zone_t *z, void *ptr)
{
    if (z == NULL) return WEFT_ZONE_ERR_INVALID;
    if (ptr == NULL) return WEFT_ZONE_OK;
    uintptr_t addr = (uintptr_t)ptr;
    if (addr < z->start || addr - z->start >= z->capacity)
        return WEFT_ZONE_ERR_INVALID; /* start and capacity never change */

    int rc = WEFT_ZONE_ERR_INVALID;
    zone_block_t *b = NULL;
    zone_lock(z);
    size_t slot = index_find(z, (size_t)(addr - z->start));
    if (slot == z->nslots) goto unlock; /* interior pointer, already freed, or never handed out */
    b = z->slots[slot].block;
    index_remove_at(z, slot);
    z->used -= b->size;
    /* Merged first, listed once at its final size (its class). */
    if (b->next != NULL && b->next->is_free) {
        free_list_remove(z, b->next);
        block_absorb_next(b);
    }
    if (b->prev != NULL && b->prev->is_free) {
        b = b->prev;
        free_list_remove(z, b);
        block_absorb_next(b);
    }
    free_list_push(z, b);
    rc = WEFT_ZONE_OK;
unlock:
    zone_unlock(z);
    return rc;
}

size_t weft_zone_capacity(const weft_zone_t *z)
{
    return z->capacity; /* fixed at creation: no lock needed */
}

size_t weft_zone_used(const weft_zone_t *z)
{
    zone_lock(z);
    size_t v = z->used;
    zone_unlock(z);
    return v;
}

size_t weft_zone_peak(const weft_zone_t *z)
{
    zone_lock(z);
    size_t v = z->peak;
    zone_unlock(z);
    return v;
}

size_t weft_zone_largest_free(const weft_zone_t *z)
{
    size_t v = 0;
    zone_lock(z);
    /* The highest class in use holds the largest block. */
    for (int w = ZONE_CLASS_WORDS - 1; w >= 0 && v == 0; w--) {
        if (!z->classes_used[w]) continue;
        unsigned c = (unsigned)w * 64 + 63u - (unsigned)__builtin_clzll(z->classes_used[w]);
        for (const zone_block_t *b = z->free_head[c]; b != NULL; b = b->free_next)
            if (b->size > v) v = b->size;
    }
    zone_unlock(z);
    return v;
}

size_t weft_zone_nblocks_free(const weft_zone_t *z)
{
    zone_lock(z);
    size_t v = z->nfree;
    zone_unlock(z);
    return v;
}

/* ---- invariant check ----------------------------------------------------- */

/* Address list: contiguous, aligned, covers the capacity, free blocks never
 * adjacent, live blocks findable in the index. Counts what it saw. */
static int validate_blocks(const weft_zone_t *z, size_t *nfree, size_t *nlive, size_t *used)
{
    size_t expect = 0;
    const zone_block_t *prev = NULL;
    for (const zone_block_t *b = z->head; b != NULL; prev = b, b = b->next) {
        if (b->prev != prev || b->offset != expect || b->size == 0 ||
            (b->size & (z->alignment - 1)) != 0)
            return WEFT_ZONE_ERR_INVALID;
        if (b->is_free && prev != NULL && prev->is_free) return WEFT_ZONE_ERR_INVALID;
        if (b->is_free) {
            (*nfree)++;
        } else {
            size_t slot = index_find(z, b->offset);
            if (slot == z->nslots || z->slots[slot].block != b) return WEFT_ZONE_ERR_INVALID;
            (*nlive)++;
            *used += b->size;
        }
        expect += b->size;
    }
    return expect == z->capacity ? WEFT_ZONE_OK : WEFT_ZONE_ERR_INVALID;
}

/* Every class's list: linked both ways, its blocks free and of its class,
 * the bitmap saying which are in use. */
static size_t count_free_list(const weft_zone_t *z)
{
    size_t n = 0;
    for (unsigned c = 0; c < ZONE_NCLASSES; c++) {
        int used = (z->classes_used[c / 64] >> (c % 64)) & 1;
        if (used != (z->free_head[c] != NULL)) return SIZE_MAX;
        if (z->free_head[c] && z->free_head[c]->free_prev != NULL) return SIZE_MAX;
        for (const zone_block_t *b = z->free_head[c]; b != NULL; b = b->free_next) {
            if (!b->is_free || size_class(b->size) != c ||
                (b->free_next != NULL && b->free_next->free_prev != b))
                return SIZE_MAX;
            n++;
        }
    }
    return n;
}

int weft_zone_validate(const weft_zone_t *z)
{
    if (z == NULL) return WEFT_ZONE_ERR_INVALID;
    size_t nfree = 0, nlive = 0, used = 0;
    zone_lock(z);
    int rc = validate_blocks(z, &nfree, &nlive, &used);
    if (rc == WEFT_ZONE_OK && (nfree != z->nfree || count_free_list(z) != nfree ||
                               nlive != z->nlive || used != z->used || z->used > z->peak))
        rc = WEFT_ZONE_ERR_INVALID;
    zone_unlock(z);
    return rc;
}
