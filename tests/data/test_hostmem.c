/* Unit test of the pinned host pool (src/data/hostmem.c) with a pinner that
 * keeps a ledger of the ranges pinned now: blocks are aligned, disjoint and
 * inside pinned slabs; slabs grow geometrically; an emptied slab is unpinned
 * and freed unless it is the newest; close unpins everything and the blocks
 * still live stay usable and are freed later; a pinning failure is said once
 * and plain memory follows; a limit refuses what would pass it. Exit 0 when every check passes. */
#include "data/hostmem.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"

#define MIB ((size_t)1 << 20)
#define MAXR 64

typedef struct ledger {
    void *ptr[MAXR];
    size_t bytes[MAXR];
    int n;          /* ranges pinned now */
    int pins, unpins;
    int fail_from;  /* pin call number (1-based) from which pinning fails; 0: never */
} ledger_t;

static int pin(void *arg, void *ptr, size_t bytes)
{
    ledger_t *l = arg;
    l->pins++;
    if (l->fail_from && l->pins >= l->fail_from) return -1;
    REQUIRE(l->n < MAXR);
    for (int i = 0; i < l->n; i++) /* never the same pages twice (cudaHostRegister refuses) */
        CHECK((char *)ptr + bytes <= (char *)l->ptr[i] || (char *)l->ptr[i] + l->bytes[i] <= (char *)ptr);
    l->ptr[l->n] = ptr;
    l->bytes[l->n++] = bytes;
    return 0;
}

static void unpin(void *arg, void *ptr)
{
    ledger_t *l = arg;
    l->unpins++;
    for (int i = 0; i < l->n; i++)
        if (l->ptr[i] == ptr) {
            l->ptr[i] = l->ptr[--l->n];
            l->bytes[i] = l->bytes[l->n];
            return;
        }
    CHECK(!"unpin of a range that is not pinned");
}

static int pinned_at(const ledger_t *l, const void *p, size_t bytes)
{
    for (int i = 0; i < l->n; i++)
        if ((const char *)p >= (char *)l->ptr[i] &&
            (const char *)p + bytes <= (char *)l->ptr[i] + l->bytes[i])
            return 1;
    return 0;
}

static weft_hostmem_t *pool_limited(ledger_t *l, size_t pin_from, size_t limit)
{
    memset(l, 0, sizeof *l);
    weft_hostmem_pinner_t p = {pin, unpin, l, "test device", 4, pin_from};
    weft_hostmem_t *pool = weft_hostmem_open(&p, limit);
    REQUIRE(pool != NULL);
    return pool;
}

static weft_hostmem_t *pool_from(ledger_t *l, size_t pin_from)
{
    return pool_limited(l, pin_from, 0);
}

static weft_hostmem_t *pool_new(ledger_t *l) { return pool_from(l, 0); }

enum { NB = 200 };

/* Tiles of mixed sizes: aligned, disjoint (patterns survive), pinned. */
static void test_blocks(void)
{
    ledger_t l;
    weft_hostmem_t *pool = pool_new(&l);
    void *p[NB], *a[NB];
    size_t b[NB];
    for (int i = 0; i < NB; i++) {
        b[i] = (size_t)(i % 7 + 1) * 300 * 1024 + (size_t)i; /* odd sizes too */
        p[i] = weft_hostmem_alloc(pool, b[i], &a[i]);
        REQUIRE(p[i] != NULL);
        CHECK(a[i] != NULL);
        CHECK((uintptr_t)p[i] % 64 == 0);
        CHECK(pinned_at(&l, p[i], b[i]));
        memset(p[i], i & 0xff, b[i]);
    }
    for (int i = 0; i < NB; i++) {
        const unsigned char *q = p[i];
        CHECK(q[0] == (i & 0xff) && q[b[i] - 1] == (i & 0xff));
    }
    size_t pinned, total;
    int made;
    weft_hostmem_stats(pool, &pinned, &total, &made);
    CHECK(total == pinned);
    /* 200 tiles of 0.3-2.1 MiB, about 230 MiB: geometric slabs (16, 16,
     * 32, 64, 128, ...) need a handful, not one a tile. */
    CHECK(made >= 3 && made <= 8);
    CHECK(pinned >= 200 * MIB && pinned <= 520 * MIB);
    CHECK(l.n == made);
    /* Freed in order: every emptied slab but the newest is unpinned. */
    for (int i = 0; i < NB; i++) weft_hostmem_free(a[i], p[i], b[i]);
    CHECK(l.n == 1);
    CHECK(l.unpins == made - 1);
    /* The kept slab serves the next tile without pinning again. */
    void *al, *q = weft_hostmem_alloc(pool, MIB, &al);
    CHECK(q != NULL && l.pins == made);
    weft_hostmem_free(al, q, MIB);
    weft_hostmem_close(pool);
    CHECK(l.n == 0);
}

/* A block larger than the growth step gets a slab of its own size. */
static void test_large(void)
{
    ledger_t l;
    weft_hostmem_t *pool = pool_new(&l);
    void *a, *p = weft_hostmem_alloc(pool, 100 * MIB, &a);
    REQUIRE(p != NULL);
    CHECK(pinned_at(&l, p, 100 * MIB));
    memset(p, 1, 100 * MIB);
    void *a0, *p0 = weft_hostmem_alloc(pool, 0, &a0); /* 0 bytes: a valid small block */
    CHECK(p0 != NULL);
    weft_hostmem_free(a0, p0, 0);
    weft_hostmem_free(a, p, 100 * MIB);
    weft_hostmem_close(pool);
    CHECK(l.n == 0 && l.pins == l.unpins);
}

/* Close with blocks live: unpinned at once, memory still theirs, freed with
 * them; allocations after close are plain. */
static void test_close_live(void)
{
    ledger_t l;
    weft_hostmem_t *pool = pool_new(&l);
    void *a1, *p1 = weft_hostmem_alloc(pool, 3 * MIB, &a1);
    void *a2, *p2 = weft_hostmem_alloc(pool, 40 * MIB, &a2);
    REQUIRE(p1 && p2);
    memset(p1, 7, 3 * MIB);
    weft_hostmem_close(pool);
    CHECK(l.n == 0);
    CHECK(((unsigned char *)p1)[3 * MIB - 1] == 7);
    memset(p2, 9, 40 * MIB); /* still writable */
    weft_hostmem_free(a1, p1, 3 * MIB);
    weft_hostmem_free(a2, p2, 40 * MIB); /* the last one frees the pool (ASan: no leak) */
    void *a3, *p3 = weft_hostmem_alloc(NULL, 100, &a3);
    CHECK(p3 != NULL && a3 == NULL);
    weft_hostmem_free(a3, p3, 100);
}

/* Pinning fails: one warning naming the device, then pageable slabs; the
 * slabs pinned before keep serving. */
static void test_pin_fails(void)
{
    ledger_t l;
    weft_hostmem_t *pool = pool_new(&l);
    l.fail_from = 2;
    void *a1, *p1 = weft_hostmem_alloc(pool, 10 * MIB, &a1);
    CHECK(p1 != NULL && a1 != NULL);
    capture_begin();
    void *a2, *p2 = weft_hostmem_alloc(pool, 30 * MIB, &a2); /* needs a second slab */
    void *a3, *p3 = weft_hostmem_alloc(pool, 30 * MIB, &a3);
    const char *text = capture_end();
    CHECK(p2 != NULL && a2 != NULL && !pinned_at(&l, p2, 30 * MIB)); /* a pageable slab */
    CHECK(p3 != NULL && a3 != NULL && !pinned_at(&l, p3, 30 * MIB));
    CHECK(strstr(text, "pinning") && strstr(text, "test device"));
    const char *first = strstr(text, "pinning");
    CHECK(first && !strstr(first + 1, "pinning")); /* said once */
    CHECK(l.pins == 2); /* no further attempt after the failure */
    void *a4, *p4 = weft_hostmem_alloc(pool, MIB, &a4); /* fits a slab made already */
    CHECK(p4 != NULL && a4 != NULL && l.pins == 2);
    weft_hostmem_free(a2, p2, 30 * MIB);
    weft_hostmem_free(a3, p3, 30 * MIB);
    weft_hostmem_free(a4, p4, MIB);
    weft_hostmem_free(a1, p1, 10 * MIB);
    weft_hostmem_close(pool);
    CHECK(l.n == 0);
}

/* pin_from: slabs stay pageable until they outgrow it; then every slab is
 * pinned, the ones holding tiles with their contents intact. */
static void test_pin_from(void)
{
    ledger_t l;
    weft_hostmem_t *pool = pool_from(&l, 80 * MIB);
    void *a[8], *p[8];
    for (int i = 0; i < 3; i++) {
        p[i] = weft_hostmem_alloc(pool, 10 * MIB, &a[i]);
        REQUIRE(p[i] != NULL);
        memset(p[i], 0x40 + i, 10 * MIB);
    }
    size_t pinned, total;
    int made;
    weft_hostmem_stats(pool, &pinned, &total, &made);
    CHECK(l.pins == 0 && pinned == 0 && total >= 30 * MIB && total <= 80 * MIB);
    p[3] = weft_hostmem_alloc(pool, 40 * MIB, &a[3]); /* past 80 MiB: all pinned now */
    REQUIRE(p[3] != NULL);
    weft_hostmem_stats(pool, &pinned, &total, &made);
    CHECK(pinned == total && l.n == made);
    for (int i = 0; i < 4; i++) CHECK(pinned_at(&l, p[i], i < 3 ? 10 * MIB : 40 * MIB));
    for (int i = 0; i < 3; i++) {
        const unsigned char *q = p[i];
        CHECK(q[0] == 0x40 + i && q[4096] == 0x40 + i && q[10 * MIB - 1] == 0x40 + i);
    }
    for (int i = 0; i < 4; i++) weft_hostmem_free(a[i], p[i], 0);
    weft_hostmem_close(pool);
    CHECK(l.n == 0 && l.pins == l.unpins);
}

/* A pool of 64 MiB at most for zeroed blocks (matrix tiles): one past
 * the blocks handed out is refused (NULL, not plain memory) and named
 * once; other allocations (received tiles) are counted, never refused;
 * freed blocks give their bytes back. */
static void test_limit(void)
{
    ledger_t l;
    weft_hostmem_t *pool = pool_limited(&l, 0, 64 * MIB);
    void *a1, *p1 = weft_hostmem_alloc_zero(pool, 30 * MIB, &a1);
    void *a2, *p2 = weft_hostmem_alloc_zero(pool, 20 * MIB, &a2);
    CHECK(p1 != NULL && a1 != NULL && p2 != NULL && a2 != NULL);
    capture_begin();
    void *a3 = (void *)1, *p3 = weft_hostmem_alloc_zero(pool, 30 * MIB, &a3);
    void *a4, *p4 = weft_hostmem_alloc(pool, 40 * MIB, &a4); /* a receive: not refused */
    void *a5 = (void *)1, *p5 = weft_hostmem_alloc_zero(pool, MIB, &a5);
    const char *text = capture_end();
    CHECK(p3 == NULL && p4 != NULL && a4 != NULL && p5 == NULL);
    const char *first = strstr(text, "host_memory_use");
    CHECK(first && !strstr(first + 1, "host_memory_use")); /* said once */
    weft_hostmem_free(a4, p4, 40 * MIB);
    weft_hostmem_free(a1, p1, 30 * MIB);
    void *a6, *p6 = weft_hostmem_alloc_zero(pool, 40 * MIB, &a6); /* 60 of 64 now */
    CHECK(p6 != NULL && a6 != NULL);
    weft_hostmem_free(a6, p6, 40 * MIB);
    weft_hostmem_free(a2, p2, 20 * MIB);
    weft_hostmem_close(pool);
    CHECK(l.n == 0);
}

int main(void)
{
    test_limit();
    test_pin_from();
    test_blocks();
    test_large();
    test_close_live();
    test_pin_fails();
    return check_report("data_hostmem");
}
