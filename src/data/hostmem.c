/* Host memory for runtime-owned copies: page-locked slabs carved by the
 * zone allocator (see hostmem.h for why). */
#include "data/hostmem.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "data/data.h"
#include "data/zone.h"
#include "util/log.h"

#define SLAB_MIN ((size_t)16 << 20)
#define SLAB_MAX ((size_t)1 << 30)
#define SLAB_ALIGN ((size_t)2 << 20) /* whole huge pages where the kernel gives them */
#define BLOCK_ALIGN 64               /* what weft_host_alloc gives: BLAS fast paths */

typedef struct hm_slab {
    weft_hostmem_t *pool;
    weft_zone_t *zone;
    void *base;
    size_t bytes;
    int pinned;
    int live;   /* blocks handed out (pool lock) */
    int reused; /* a block was freed: its bytes, handed out again, are not zero */
    struct hm_slab *next;
} hm_slab_t;

struct weft_hostmem {
    pthread_mutex_t lock;
    weft_hostmem_pinner_t pinner;
    int open;         /* 0 once closed: nothing is pinned any more */
    hm_slab_t *slabs; /* newest first */
    size_t total;     /* bytes of the slabs alive */
    size_t pinned;
    int made;
    int failed;   /* pinning failed once: pageable slabs from then on */
    size_t used;  /* bytes of the blocks handed out and not freed */
    size_t limit; /* used at most after a zeroed allocation (0: no limit) */
    int refused;  /* an allocation past the limit was refused (said once) */
};

weft_hostmem_t *weft_hostmem_open(const weft_hostmem_pinner_t *pinner, size_t limit)
{
    weft_hostmem_t *pool = calloc(1, sizeof *pool);
    if (!pool) return NULL;
    pthread_mutex_init(&pool->lock, NULL);
    pool->pinner = *pinner;
    pool->open = 1;
    pool->limit = limit;
    return pool;
}

/* Under the pool's lock: the slab leaves the list and its memory goes. */
static void slab_release_locked(weft_hostmem_t *pool, hm_slab_t *s)
{
    for (hm_slab_t **pp = &pool->slabs; *pp; pp = &(*pp)->next)
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    if (s->pinned) {
        pool->pinner.unpin(pool->pinner.arg, s->base);
        pool->pinned -= s->bytes;
    }
    pool->total -= s->bytes;
    weft_zone_destroy(s->zone);
    munmap(s->base, s->bytes);
    free(s);
}

#define POPULATE_STRIPE ((size_t)64 << 20) /* below this one thread populates */
#define PAGE 4096

typedef struct populate_part {
    char *base;
    size_t bytes;
    int fresh; /* nothing lives there yet: a write a page may fault it in */
} populate_part_t;

/* Maps every page of the part writable. MADV_POPULATE_WRITE leaves the
 * contents alone (blocks may live there already); without it (kernels
 * before 5.14) a fresh part is faulted in by one write a page, and a part
 * in use is left to the pinning to fault. */
static void *populate(void *arg)
{
    populate_part_t *t = arg;
#ifdef MADV_POPULATE_WRITE
    if (madvise(t->base, t->bytes, MADV_POPULATE_WRITE) == 0) return NULL;
#endif
    if (t->fresh)
        for (size_t off = 0; off < t->bytes; off += PAGE) ((volatile char *)t->base)[off] = 0;
    return NULL;
}

/* Populates [base, base + bytes) with up to `threads` threads (the caller
 * is one of them); a thread that cannot start leaves its part to the
 * caller. */
static void populate_parallel(char *base, size_t bytes, int threads, int fresh)
{
    enum { MAXT = 64 };
    int n = (int)(bytes / POPULATE_STRIPE);
    if (n > threads) n = threads;
    if (n > MAXT) n = MAXT;
    if (n < 1) n = 1;
    pthread_t tid[MAXT];
    populate_part_t part[MAXT];
    int started[MAXT] = {0};
    size_t step = (bytes / (size_t)n + PAGE - 1) / PAGE * PAGE;
    for (int i = 0; i < n; i++) {
        size_t off = step * (size_t)i, len = off >= bytes ? 0 : bytes - off;
        part[i] = (populate_part_t){base + off, len < step ? len : step, fresh};
        if (i > 0) started[i] = pthread_create(&tid[i], NULL, populate, &part[i]) == 0;
    }
    populate(&part[0]);
    for (int i = 1; i < n; i++) {
        if (started[i])
            pthread_join(tid[i], NULL);
        else
            populate(&part[i]);
    }
}

/* Under the pool's lock: pins s (its pages populated first). A failure is
 * said once; the slab and those after it stay pageable. */
static void slab_pin_locked(weft_hostmem_t *pool, hm_slab_t *s)
{
    populate_parallel(s->base, s->bytes, pool->pinner.threads, s->live == 0);
    if (pool->pinner.pin(pool->pinner.arg, s->base, s->bytes) != 0) {
        weft_warn("host_pin: pinning %zu MiB of host memory for %s failed: the runtime's host "
                  "copies stay pageable from now on (copies to and from the device are slower; "
                  "host_pin=off skips the attempt)",
                  s->bytes >> 20, pool->pinner.who);
        pool->failed = 1;
        return;
    }
    s->pinned = 1;
    pool->pinned += s->bytes;
}

/* Under the pool's lock: once the slabs outgrow pin_from, every slab not
 * pinned yet is. */
static void pin_due_locked(weft_hostmem_t *pool)
{
    if (!pool->pinner.pin || pool->failed || !pool->open || pool->total <= pool->pinner.pin_from)
        return;
    for (hm_slab_t *s = pool->slabs; s && !pool->failed; s = s->next)
        if (!s->pinned) slab_pin_locked(pool, s);
}

/* Under the pool's lock: a new slab of at least `bytes` (pinned when due);
 * NULL when out of memory. */
static hm_slab_t *slab_new_locked(weft_hostmem_t *pool, size_t bytes)
{
    size_t want = pool->total < SLAB_MIN   ? SLAB_MIN
                  : pool->total > SLAB_MAX ? SLAB_MAX
                                           : pool->total;
    if (want < bytes + BLOCK_ALIGN) want = bytes + BLOCK_ALIGN;
    want = (want + SLAB_ALIGN - 1) / SLAB_ALIGN * SLAB_ALIGN;
    hm_slab_t *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    /* A mapping of its own: its pages start as zeros (a heap block of that
     * size may be one freed before), which weft_hostmem_alloc_zero counts
     * on. Mapped with room to start at the alignment, the rest unmapped. */
    char *m =
        mmap(NULL, want + SLAB_ALIGN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        free(s);
        return NULL;
    }
    char *base = (char *)(((uintptr_t)m + SLAB_ALIGN - 1) / SLAB_ALIGN * SLAB_ALIGN);
    if (base > m) munmap(m, (size_t)(base - m));
    size_t tail = (size_t)(m + want + SLAB_ALIGN - (base + want));
    if (tail) munmap(base + want, tail);
    s->base = base;
    s->bytes = want;
    if (weft_zone_create(s->base, want, BLOCK_ALIGN, &s->zone) != WEFT_ZONE_OK) {
        munmap(s->base, want);
        free(s);
        return NULL;
    }
#ifdef MADV_HUGEPAGE
    (void)madvise(s->base, want, MADV_HUGEPAGE); /* fewer faults; a hint only */
#endif
    s->pool = pool;
    s->next = pool->slabs;
    pool->slabs = s;
    pool->total += want;
    pool->made++;
    pin_due_locked(pool);
    return s;
}

/* Whether `bytes` more would take the blocks handed out past the limit;
 * the first such request is named (under the pool's lock). Counted by
 * blocks, not slabs: a slab's unused room is mapped, not memory. */
static int past_limit_locked(weft_hostmem_t *pool, size_t bytes)
{
    if (!pool->limit || pool->used + bytes <= pool->limit) return 0;
    if (!pool->refused)
        weft_error("host memory: a tile of %zu bytes would take weft's copies on this rank past "
                   "its share of the node's memory (%.2f GiB, %.2f GiB in use; parameter "
                   "host_memory_use, 0 = no limit): refused (out of host memory)",
                   bytes, (double)pool->limit / (1 << 30), (double)pool->used / (1 << 30));
    pool->refused = 1;
    return 1;
}

/* weft_hostmem_alloc, and in *dirty whether the block's bytes may be
 * other than zero (read under the same lock as the allocation). */
static void *hostmem_alloc(weft_hostmem_t *pool, size_t bytes, void **allocator, int *dirty,
                           int capped)
{
    *allocator = NULL;
    *dirty = 1;
    if (bytes == 0) bytes = BLOCK_ALIGN;
    if (pool) {
        pthread_mutex_lock(&pool->lock);
        void *p = NULL;
        hm_slab_t *s = pool->slabs;
        int over = capped && pool->open && past_limit_locked(pool, bytes);
        for (; !over && s && !(p = weft_zone_malloc(s->zone, bytes)); s = s->next) {
        }
        if (!p && pool->open && !over && (s = slab_new_locked(pool, bytes)))
            p = weft_zone_malloc(s->zone, bytes);
        if (p) {
            pool->used += bytes;
            s->live++;
            *allocator = s;
            *dirty = s->reused;
        }
        pthread_mutex_unlock(&pool->lock);
        if (p) return p;
        if (over) return NULL; /* not plain memory either: the limit holds */
    }
    return weft_host_alloc(bytes);
}

void *weft_hostmem_alloc(weft_hostmem_t *pool, size_t bytes, void **allocator)
{
    int dirty;
    return hostmem_alloc(pool, bytes, allocator, &dirty, 0);
}

void *weft_hostmem_alloc_zero(weft_hostmem_t *pool, size_t bytes, void **allocator)
{
    int dirty;
    void *p = hostmem_alloc(pool, bytes, allocator, &dirty, 1);
    if (p && dirty) memset(p, 0, bytes);
    return p;
}

void weft_hostmem_free(void *allocator, void *ptr, size_t bytes)
{
    hm_slab_t *s = allocator;
    if (!s) {
        weft_host_free(NULL, ptr, bytes);
        return;
    }
    weft_hostmem_t *pool = s->pool;
    pthread_mutex_lock(&pool->lock);
    if (weft_zone_free(s->zone, ptr) != WEFT_ZONE_OK)
        weft_error("host_pin: %p (%zu bytes) is not a block of its slab", ptr, bytes);
    else
        pool->used -= bytes < pool->used ? bytes : pool->used;
    s->reused = 1;
    /* An empty slab goes unless it is the newest (the next tiles fit there
     * without pinning again); after close every empty slab goes. */
    int last = 0;
    if (--s->live == 0 && (!pool->open || s != pool->slabs)) {
        slab_release_locked(pool, s);
        last = !pool->open && !pool->slabs;
    }
    pthread_mutex_unlock(&pool->lock);
    if (last) {
        pthread_mutex_destroy(&pool->lock);
        free(pool);
    }
}

void weft_hostmem_close(weft_hostmem_t *pool)
{
    if (!pool) return;
    pthread_mutex_lock(&pool->lock);
    hm_slab_t *next;
    for (hm_slab_t *s = pool->slabs; s; s = next) {
        next = s->next;
        if (s->live == 0) {
            slab_release_locked(pool, s);
            continue;
        }
        /* Still in use (taskpools freed after the devices, leaked data):
         * plain memory from now on, freed with its last block. */
        if (s->pinned) {
            pool->pinner.unpin(pool->pinner.arg, s->base);
            s->pinned = 0;
            pool->pinned -= s->bytes;
        }
    }
    pool->open = 0;
    int empty = pool->slabs == NULL;
    pthread_mutex_unlock(&pool->lock);
    if (empty) {
        pthread_mutex_destroy(&pool->lock);
        free(pool);
    }
}

void weft_hostmem_stats(weft_hostmem_t *pool, size_t *pinned, size_t *total, int *slabs_made)
{
    *pinned = *total = 0;
    *slabs_made = 0;
    if (!pool) return;
    pthread_mutex_lock(&pool->lock);
    *pinned = pool->pinned;
    *total = pool->total;
    *slabs_made = pool->made;
    pthread_mutex_unlock(&pool->lock);
}

void weft_hostmem_room(weft_hostmem_t *pool, size_t *limit, size_t *used)
{
    *limit = *used = 0;
    if (!pool) return;
    pthread_mutex_lock(&pool->lock);
    *limit = pool->limit;
    *used = pool->used;
    pthread_mutex_unlock(&pool->lock);
}

int weft_hostmem_holds(weft_hostmem_t *pool, uintptr_t lo, uintptr_t hi)
{
    if (!pool) return 0;
    int holds = 0;
    pthread_mutex_lock(&pool->lock);
    for (hm_slab_t *s = pool->slabs; s && !holds; s = s->next)
        holds = lo < (uintptr_t)s->base + s->bytes && (uintptr_t)s->base < hi;
    pthread_mutex_unlock(&pool->lock);
    return holds;
}
