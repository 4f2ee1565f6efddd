/*
 * Unit test of the zone allocator (src/data/zone.c).
 * Exit 0 when every check passes; on the first failed check, print it and
 * exit 1.
 *
 * The zones here are built over real host buffers so the threaded stress can
 * write into its blocks and catch overlap between threads; the zone itself
 * never touches the memory.
 */
#include "data/zone.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"

/* Deterministic PRNG so a failure reproduces. */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

static size_t round_up(size_t n, size_t a) { return (n + a - 1) & ~(a - 1); }

static void *buffer_new(size_t size)
{
    /* aligned_alloc wants a size that is a multiple of the alignment. */
    void *p = aligned_alloc(4096, round_up(size, 4096));
    REQUIRE(p != NULL);
    return p;
}

static weft_zone_t *zone_new(void *base, size_t size, size_t align)
{
    weft_zone_t *z = NULL;
    REQUIRE(weft_zone_create(base, size, align, &z) == 0);
    REQUIRE(z != NULL);
    return z;
}

static void test_create_args(void)
{
    enum { SIZE = 4096 };
    char *buf = buffer_new(SIZE);
    weft_zone_t *sentinel = (weft_zone_t *)&checks, *z = sentinel;

    REQUIRE(weft_zone_create(NULL, SIZE, 64, &z) == -1);
    REQUIRE(weft_zone_create(buf, 0, 64, &z) == -1);
    REQUIRE(weft_zone_create(buf, SIZE, 4, &z) == -1);
    REQUIRE(weft_zone_create(buf, SIZE, 24, &z) == -1);
    REQUIRE(weft_zone_create(buf, SIZE, 0, &z) == -1);
    REQUIRE(weft_zone_create(buf, SIZE, 64, NULL) == -1);
    REQUIRE(weft_zone_create(buf + 1, 64, 64, &z) == -1); /* no whole aligned unit */
    REQUIRE(z == sentinel);                               /* untouched on error */

    /* An unaligned base: the zone starts at the next aligned address. */
    z = zone_new(buf + 3, SIZE - 3, 64);
    REQUIRE(weft_zone_capacity(z) == SIZE - 64);
    void *p = weft_zone_malloc(z, 1);
    REQUIRE(p == buf + 64);
    REQUIRE(weft_zone_free(z, p) == 0);
    REQUIRE(weft_zone_validate(z) == 0);
    weft_zone_destroy(z);
    weft_zone_destroy(NULL);
    free(buf);
}

/* Holes of 3, 1 and 2 units, separated by live blocks, plus a large free tail:
 * each request must land in the smallest hole that fits. */
static void test_best_fit(void)
{
    enum { U = 64, N = 32 };
    char *buf = buffer_new(U * N);
    weft_zone_t *z = zone_new(buf, U * N, U);
    const size_t units[] = {3, 1, 1, 1, 2, 1};
    void *p[6];
    for (int i = 0; i < 6; i++) {
        p[i] = weft_zone_malloc(z, units[i] * U);
        REQUIRE(p[i] != NULL);
    }
    REQUIRE(p[0] == buf && p[2] == buf + 4 * U && p[4] == buf + 6 * U);
    REQUIRE(weft_zone_free(z, p[0]) == 0);   /* 3-unit hole */
    REQUIRE(weft_zone_free(z, p[2]) == 0);   /* 1-unit hole */
    REQUIRE(weft_zone_free(z, p[4]) == 0);   /* 2-unit hole */
    REQUIRE(weft_zone_nblocks_free(z) == 4); /* three holes and the tail */

    REQUIRE(weft_zone_malloc(z, U) == buf + 4 * U);     /* 1 unit -> 1-unit hole */
    REQUIRE(weft_zone_malloc(z, U + 1) == buf + 6 * U); /* 2 units -> 2-unit hole */
    REQUIRE(weft_zone_malloc(z, 2 * U) == buf);         /* 2 units -> 3-unit hole */
    REQUIRE(weft_zone_malloc(z, U) == buf + 2 * U);     /* 1 unit -> its remainder */
    REQUIRE(weft_zone_nblocks_free(z) == 1);
    REQUIRE(weft_zone_largest_free(z) == (N - 9) * U);
    REQUIRE(weft_zone_validate(z) == 0);
    weft_zone_destroy(z);
    free(buf);
}

/* Many holes of one size class (the fit looks at a bounded number of a
 * class, then one class up): 200 holes of 4096 bytes and, freed first so
 * that it comes last in the class's list, one of 4160 (the same class), no
 * free tail. A request of 4150 bytes lands in it although 200 smaller
 * holes come before it: a request fails only when no block fits. Frees
 * merge as before. */
static void test_many_holes(void)
{
    enum { N = 200, H = 4096, BIG = 4160, SEP = 64 };
    size_t total = (size_t)N * (H + SEP) + BIG + SEP;
    char *buf = buffer_new(total);
    weft_zone_t *z = zone_new(buf, total, 64);
    void *hole[N], *sep[N + 1], *big;
    for (int i = 0; i < N; i++) {
        REQUIRE((hole[i] = weft_zone_malloc(z, H)) != NULL);
        REQUIRE((sep[i] = weft_zone_malloc(z, SEP)) != NULL);
    }
    REQUIRE((big = weft_zone_malloc(z, BIG)) != NULL);
    REQUIRE((sep[N] = weft_zone_malloc(z, SEP)) != NULL);
    REQUIRE(weft_zone_malloc(z, 1) == NULL); /* full */
    REQUIRE(weft_zone_free(z, big) == 0);
    for (int i = 0; i < N; i++) REQUIRE(weft_zone_free(z, hole[i]) == 0);
    REQUIRE(weft_zone_nblocks_free(z) == N + 1);
    REQUIRE(weft_zone_largest_free(z) == BIG);
    REQUIRE(weft_zone_malloc(z, 4150) == big); /* past the bounded look */
    REQUIRE(weft_zone_malloc(z, 4150) == NULL);
    void *p = weft_zone_malloc(z, H);
    REQUIRE(p != NULL && weft_zone_validate(z) == 0);
    REQUIRE(weft_zone_free(z, p) == 0);
    for (int i = 0; i <= N; i++) REQUIRE(weft_zone_free(z, sep[i]) == 0);
    REQUIRE(weft_zone_free(z, big) == 0);
    REQUIRE(weft_zone_nblocks_free(z) == 1 && weft_zone_largest_free(z) == total);
    REQUIRE(weft_zone_validate(z) == 0);
    weft_zone_destroy(z);
    free(buf);
}

/* Three blocks that fill the zone; free them in every order and check the
 * free-block count after each step, ending in one block of full size. */
static void test_merge(void)
{
    enum { U = 128 };
    static const int orders[6][3] = {{0, 2, 1}, {0, 1, 2}, {1, 0, 2},
                                     {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    char *buf = buffer_new(3 * U);
    for (int o = 0; o < 6; o++) {
        weft_zone_t *z = zone_new(buf, 3 * U, U);
        void *p[3];
        for (int i = 0; i < 3; i++) REQUIRE((p[i] = weft_zone_malloc(z, U)) == buf + i * U);
        REQUIRE(weft_zone_nblocks_free(z) == 0);
        REQUIRE(weft_zone_largest_free(z) == 0);
        int freed[3] = {0, 0, 0};
        for (int k = 0; k < 3; k++) {
            int i = orders[o][k];
            REQUIRE(weft_zone_free(z, p[i]) == 0);
            freed[i] = 1;
            /* free runs = free blocks after merging */
            size_t runs = 0;
            for (int j = 0; j < 3; j++) runs += freed[j] && (j == 0 || !freed[j - 1]);
            REQUIRE(weft_zone_nblocks_free(z) == runs);
            REQUIRE(weft_zone_validate(z) == 0);
        }
        REQUIRE(weft_zone_nblocks_free(z) == 1);
        REQUIRE(weft_zone_largest_free(z) == 3 * U);
        REQUIRE(weft_zone_used(z) == 0);
        weft_zone_destroy(z);
    }
    free(buf);
}

static void test_alignment(void)
{
    enum { SIZE = 1 << 20 };
    char *buf = buffer_new(SIZE);
    const size_t aligns[] = {8, 16, 256, 4096};
    uint64_t rng = 0x1234567u;
    for (size_t a = 0; a < sizeof(aligns) / sizeof(aligns[0]); a++) {
        weft_zone_t *z = zone_new(buf, SIZE, aligns[a]);
        size_t sum = 0;
        for (int i = 0; i < 100; i++) {
            size_t n = 1 + rng_next(&rng) % 3000;
            void *p = weft_zone_malloc(z, n);
            REQUIRE(p != NULL);
            REQUIRE((uintptr_t)p % aligns[a] == 0);
            sum += round_up(n, aligns[a]);
            REQUIRE(weft_zone_used(z) == sum);
        }
        REQUIRE(weft_zone_validate(z) == 0);
        weft_zone_destroy(z);
    }
    free(buf);
}

static void test_exhaustion(void)
{
    enum { U = 64, N = 16 };
    char *buf = buffer_new(U * N);
    weft_zone_t *z = zone_new(buf, U * N, U);
    void *p[N];
    REQUIRE(weft_zone_malloc(z, 0) == NULL);
    REQUIRE(weft_zone_malloc(z, U * N + 1) == NULL);
    REQUIRE(weft_zone_malloc(z, SIZE_MAX) == NULL); /* no overflow when rounding */
    for (int i = 0; i < N; i++) REQUIRE((p[i] = weft_zone_malloc(z, U)) != NULL);
    REQUIRE(weft_zone_malloc(z, 1) == NULL);
    REQUIRE(weft_zone_largest_free(z) == 0);
    REQUIRE(weft_zone_free(z, p[7]) == 0);
    REQUIRE(weft_zone_malloc(z, 2 * U) == NULL); /* one unit free is not two */
    REQUIRE(weft_zone_malloc(z, U) == p[7]);
    REQUIRE(weft_zone_malloc(z, 1) == NULL);
    REQUIRE(weft_zone_validate(z) == 0);
    weft_zone_destroy(z);
    free(buf);
}

static void test_bad_free(void)
{
    enum { U = 64, N = 16 };
    char *buf = buffer_new(U * N);
    weft_zone_t *z = zone_new(buf, U * N, U);
    int on_stack = 0;
    char *a = weft_zone_malloc(z, 2 * U);
    char *b = weft_zone_malloc(z, U);
    REQUIRE(a != NULL && b != NULL);

    REQUIRE(weft_zone_free(z, &on_stack) == -1);   /* foreign */
    REQUIRE(weft_zone_free(z, buf + U * N) == -1); /* one past the end */
    REQUIRE(weft_zone_free(z, a + 8) == -1);       /* interior of a live block */
    REQUIRE(weft_zone_free(z, a + U) == -1);       /* aligned, but inside a */
    REQUIRE(weft_zone_free(z, b + U) == -1);       /* start of the free tail */
    REQUIRE(weft_zone_free(NULL, a) == -1);
    REQUIRE(weft_zone_free(z, NULL) == 0); /* no-op, as free(NULL) */
    REQUIRE(weft_zone_used(z) == 3 * U);   /* rejected frees changed nothing */
    REQUIRE(weft_zone_validate(z) == 0);

    REQUIRE(weft_zone_free(z, a) == 0);
    REQUIRE(weft_zone_free(z, a) == -1); /* double free */
    REQUIRE(weft_zone_free(z, b) == 0);
    REQUIRE(weft_zone_free(z, b) == -1); /* double free after merging */
    REQUIRE(weft_zone_used(z) == 0);
    REQUIRE(weft_zone_nblocks_free(z) == 1);
    REQUIRE(weft_zone_validate(z) == 0);
    weft_zone_destroy(z);
    free(buf);
}

static void test_accounting(void)
{
    enum { SIZE = 64 * 1024 };
    char *buf = buffer_new(SIZE);
    weft_zone_t *z = zone_new(buf, SIZE, 64);
    REQUIRE(weft_zone_used(z) == 0 && weft_zone_peak(z) == 0);
    void *a = weft_zone_malloc(z, 100); /* 128 */
    void *b = weft_zone_malloc(z, 64);  /* 64 */
    void *c = weft_zone_malloc(z, 1);   /* 64 */
    REQUIRE(a && b && c);
    REQUIRE(weft_zone_used(z) == 256 && weft_zone_peak(z) == 256);
    REQUIRE(weft_zone_free(z, b) == 0);
    REQUIRE(weft_zone_used(z) == 192 && weft_zone_peak(z) == 256);
    void *d = weft_zone_malloc(z, 1000); /* 1024 */
    REQUIRE(d != NULL);
    REQUIRE(weft_zone_used(z) == 1216 && weft_zone_peak(z) == 1216);
    REQUIRE(weft_zone_free(z, a) == 0 && weft_zone_free(z, c) == 0 && weft_zone_free(z, d) == 0);
    REQUIRE(weft_zone_used(z) == 0 && weft_zone_peak(z) == 1216);
    REQUIRE(weft_zone_largest_free(z) == SIZE);
    weft_zone_destroy(z);
    free(buf);
}

/* ---- randomized stress against a shadow model ----------------------------- */

typedef struct {
    uintptr_t addr;
    size_t size; /* rounded */
} live_t;

static void shadow_check_new(const live_t *live, size_t n, uintptr_t lo, uintptr_t hi, live_t b)
{
    REQUIRE(b.addr >= lo && b.addr + b.size <= hi);
    for (size_t i = 0; i < n; i++)
        REQUIRE(b.addr + b.size <= live[i].addr || live[i].addr + live[i].size <= b.addr);
}

static void stress_alloc(weft_zone_t *z, live_t *live, size_t *n, size_t *sum, uint64_t *rng,
                         uintptr_t lo)
{
    size_t bytes = 1 + rng_next(rng) % 8192;
    size_t need = round_up(bytes, 64);
    size_t largest = weft_zone_largest_free(z);
    void *p = weft_zone_malloc(z, bytes);
    if (p == NULL) {
        REQUIRE(largest < need); /* best fit never fails while a block fits */
        return;
    }
    live_t b = {(uintptr_t)p, need};
    REQUIRE(b.addr % 64 == 0);
    shadow_check_new(live, *n, lo, lo + weft_zone_capacity(z), b);
    live[(*n)++] = b;
    *sum += need;
}

static void test_random_stress(void)
{
    enum { SIZE = 1 << 20, OPS = 10000, MAXLIVE = OPS };
    char *buf = buffer_new(SIZE);
    weft_zone_t *z = zone_new(buf, SIZE, 64);
    live_t *live = malloc(MAXLIVE * sizeof(*live));
    REQUIRE(live != NULL);
    size_t n = 0, sum = 0, peak = 0;
    uint64_t rng = 0x9E3779B97F4A7C15u;
    for (int op = 0; op < OPS; op++) {
        /* Lean towards allocation so the zone fills and fragments. */
        if (n == 0 || rng_next(&rng) % 100 < 55) {
            stress_alloc(z, live, &n, &sum, &rng, (uintptr_t)buf);
        } else {
            size_t i = rng_next(&rng) % n;
            REQUIRE(weft_zone_free(z, (void *)live[i].addr) == 0);
            sum -= live[i].size;
            live[i] = live[--n];
        }
        peak = sum > peak ? sum : peak;
        REQUIRE(weft_zone_used(z) == sum);
        REQUIRE(weft_zone_peak(z) == peak);
        if (op % 97 == 0) REQUIRE(weft_zone_validate(z) == 0);
    }
    while (n > 0) REQUIRE(weft_zone_free(z, (void *)live[--n].addr) == 0);
    REQUIRE(weft_zone_used(z) == 0);
    REQUIRE(weft_zone_nblocks_free(z) == 1 && weft_zone_largest_free(z) == SIZE);
    REQUIRE(weft_zone_validate(z) == 0);
    free(live);
    weft_zone_destroy(z);
    free(buf);
}

/* ---- concurrent stress ---------------------------------------------------- */

enum { THREADS = 4, THREAD_OPS = 20000, THREAD_LIVE = 64 };

typedef struct {
    weft_zone_t *z;
    unsigned id;
} worker_arg_t;

/* Each thread fills its blocks with its own tag and checks the tag before
 * freeing: a block handed to two threads at once would be overwritten. */
static void worker_release(weft_zone_t *z, unsigned char *p, size_t bytes, unsigned char tag)
{
    for (size_t k = 0; k < bytes; k += 61) REQUIRE(p[k] == tag);
    REQUIRE(p[bytes - 1] == tag);
    REQUIRE(weft_zone_free(z, p) == 0);
}

static void *worker(void *varg)
{
    worker_arg_t *arg = varg;
    unsigned char tag = (unsigned char)(0xA0 + arg->id);
    unsigned char *ptr[THREAD_LIVE] = {0};
    size_t len[THREAD_LIVE] = {0};
    uint64_t rng = 0xC0FFEEu + arg->id * 7919u;
    for (int op = 0; op < THREAD_OPS; op++) {
        size_t i = rng_next(&rng) % THREAD_LIVE;
        if (ptr[i] != NULL) {
            worker_release(arg->z, ptr[i], len[i], tag);
            ptr[i] = NULL;
            continue;
        }
        len[i] = 1 + rng_next(&rng) % 4096;
        ptr[i] = weft_zone_malloc(arg->z, len[i]);
        if (ptr[i] != NULL) memset(ptr[i], tag, len[i]);
    }
    for (size_t i = 0; i < THREAD_LIVE; i++) {
        if (ptr[i] != NULL) worker_release(arg->z, ptr[i], len[i], tag);
    }
    return NULL;
}

static void test_threads(void)
{
    /* Smaller than the threads' combined demand, so exhaustion happens too. */
    enum { SIZE = 192 * 1024 };
    char *buf = buffer_new(SIZE);
    weft_zone_t *z = zone_new(buf, SIZE, 64);
    pthread_t th[THREADS];
    worker_arg_t args[THREADS];
    for (unsigned t = 0; t < THREADS; t++) {
        args[t] = (worker_arg_t){z, t};
        REQUIRE(pthread_create(&th[t], NULL, worker, &args[t]) == 0);
    }
    for (unsigned t = 0; t < THREADS; t++) REQUIRE(pthread_join(th[t], NULL) == 0);
    REQUIRE(weft_zone_used(z) == 0);
    REQUIRE(weft_zone_peak(z) > 0 && weft_zone_peak(z) <= SIZE);
    REQUIRE(weft_zone_nblocks_free(z) == 1 && weft_zone_largest_free(z) == SIZE);
    REQUIRE(weft_zone_validate(z) == 0);
    weft_zone_destroy(z);
    free(buf);
}

int main(void)
{
    test_create_args();
    test_best_fit();
    test_many_holes();
    test_merge();
    test_alignment();
    test_exhaustion();
    test_bad_free();
    test_accounting();
    test_random_stress();
    test_threads();
    printf("test_zone: %d checks passed\n", atomic_load(&checks));
    return 0;
}
