/* The copy rules of docs/COHERENCY.md that hold with one process and no
 * real accelerator: copies on "device" indices 1 and 2 are host memory
 * here; what matters is the bookkeeping. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "data/data.h"

#include "../check.h"

static int frees;
static void *last_allocator;
static void count_free(void *allocator, void *ptr, size_t bytes)
{
    frees++;
    last_allocator = allocator;
    free(ptr);
}

static weft_data_copy_t *attach(weft_data_t *d, int dev, weft_mem_owner_t owner, void *alloc)
{
    void *p = owner == WEFT_MEM_MANAGED ? (void *)d : malloc(d->bytes);
    return weft_data_copy_attach(d, dev, p, d->rows, owner, count_free, alloc);
}

/* Rule 1: a host copy is optional. */
static void gpu_only_copy(void)
{
    weft_data_t *d = weft_data__create(NULL, 1, WEFT_DOUBLE, 4, 4, 0);
    attach(d, 1, WEFT_MEM_RUNTIME, NULL);
    weft_data_written_locked(d, 1);
    CHECK(d->copies[0] == NULL);
    CHECK(weft_data_newest_copy_locked(d, 0) == d->copies[1]);
    CHECK(d->copies[1]->state == WEFT_COPY_OWNED);
    /* The only newest copy cannot be dropped: it would lose the data. */
    CHECK(weft_data_copy_detach(d, 1) == WEFT_ERR_INVALID);
    weft_data__unref(d);
}

/* Rule 2: one place holds the newest version; a write makes the rest stale. */
static void write_invalidates(void)
{
    weft_data_t *d = weft_data__create(NULL, 2, WEFT_DOUBLE, 4, 4, 0);
    for (int dev = 0; dev < 3; dev++) attach(d, dev, WEFT_MEM_RUNTIME, NULL);
    weft_data_copy_set_initial_locked(d, 0);
    weft_data_copied_locked(d, 1, d->version);
    CHECK(d->copies[0]->state == WEFT_COPY_SHARED && d->copies[1]->state == WEFT_COPY_SHARED);
    uint32_t v = d->version;
    weft_data_written_locked(d, 2);
    CHECK(d->version == v + 1);
    CHECK(d->copies[2]->state == WEFT_COPY_OWNED && d->copies[2]->version == v + 1);
    CHECK(d->copies[0]->state == WEFT_COPY_INVALID && d->copies[1]->state == WEFT_COPY_INVALID);
    CHECK(weft_data_valid_copies_locked(d) == 1);
    CHECK(weft_data_newest_copy_locked(d, 0) == d->copies[2]);
    /* A stale copy may go; its memory returns to its allocator. */
    frees = 0;
    CHECK(weft_data_copy_detach(d, 0) == WEFT_SUCCESS && frees == 1);
    weft_data__unref(d);
}

/* A newer version from another rank makes every local copy stale. */
static void newer_version_arrives(void)
{
    weft_data_t *d = weft_data__create(NULL, 3, WEFT_DOUBLE, 2, 2, 0);
    attach(d, 0, WEFT_MEM_RUNTIME, NULL);
    attach(d, 1, WEFT_MEM_RUNTIME, NULL);
    weft_data_copy_set_initial_locked(d, 0);
    weft_data_copied_locked(d, 1, 5);
    CHECK(d->version == 5);
    CHECK(d->copies[0]->state == WEFT_COPY_INVALID);
    CHECK(d->copies[1]->state == WEFT_COPY_OWNED);
    weft_data__unref(d);
}

/* Rule 3 (in part): a copy under transfer is not readable yet. */
static void under_transfer_not_newest(void)
{
    weft_data_t *d = weft_data__create(NULL, 4, WEFT_DOUBLE, 2, 2, 0);
    attach(d, 1, WEFT_MEM_RUNTIME, NULL);
    weft_data_written_locked(d, 1);
    weft_data_copy_t *h = attach(d, 0, WEFT_MEM_RUNTIME, NULL);
    h->xfer = WEFT_XFER_UNDER;
    h->version = d->version;
    h->state = WEFT_COPY_SHARED;
    CHECK(weft_data_newest_copy_locked(d, 0) == d->copies[1]);
    weft_data_copied_locked(d, 0, d->version);
    CHECK(weft_data_newest_copy_locked(d, 0) == h);
    weft_data__unref(d);
}

/* Rule 4: readers pin a copy. */
static void readers_pin(void)
{
    weft_data_t *d = weft_data__create(NULL, 5, WEFT_DOUBLE, 2, 2, 0);
    attach(d, 0, WEFT_MEM_RUNTIME, NULL);
    attach(d, 1, WEFT_MEM_RUNTIME, NULL);
    weft_data_copy_set_initial_locked(d, 0);
    weft_data_copied_locked(d, 1, d->version);
    weft_data_copy_reader_acquire_locked(d->copies[1]);
    weft_data_copy_reader_acquire_locked(d->copies[1]);
    CHECK(weft_data_copy_detach(d, 1) == WEFT_ERR_INVALID);
    weft_data_copy_reader_release_locked(d->copies[1]);
    CHECK(weft_data_copy_detach(d, 1) == WEFT_ERR_INVALID);
    weft_data_copy_reader_release_locked(d->copies[1]);
    CHECK(weft_data_copy_detach(d, 1) == WEFT_SUCCESS);
    weft_data__unref(d);
}

/* Rules 4 and 6: a transfer's destination holds no reader, only its UNDER
 * mark (the host copy an eviction writes back into), and is not detached
 * while the bytes land; it was, freeing memory a copy was writing. */
static void under_transfer_pinned(void)
{
    weft_data_t *d = weft_data__create(NULL, 8, WEFT_DOUBLE, 2, 2, 0);
    attach(d, 0, WEFT_MEM_RUNTIME, NULL);
    attach(d, 1, WEFT_MEM_RUNTIME, NULL);
    weft_data_written_locked(d, 1); /* the host copy is stale */
    uint32_t v = weft_data_xfer_begin_locked(d, 0);
    CHECK(d->copies[0]->readers == 0 && d->copies[0]->state == WEFT_COPY_INVALID);
    CHECK(weft_data_copy_detach(d, 0) == WEFT_ERR_INVALID);
    weft_data_xfer_end_locked(d, 0, v, 1);
    CHECK(weft_data_copy_detach(d, 0) == WEFT_SUCCESS);
    weft_data__unref(d);
}

/* Rule 5: each copy is freed where it came from; MANAGED memory never. */
static void free_where_allocated(void)
{
    int zone_a, zone_b;
    weft_data_t *d = weft_data__create(NULL, 6, WEFT_DOUBLE, 2, 2, 0);
    attach(d, 0, WEFT_MEM_MANAGED, NULL);
    attach(d, 1, WEFT_MEM_RUNTIME, &zone_a);
    attach(d, 2, WEFT_MEM_RUNTIME, &zone_b);
    frees = 0;
    weft_data_copy_detach_force_locked(d, 1);
    CHECK(frees == 1 && last_allocator == &zone_a);
    weft_data_copy_detach_force_locked(d, 2);
    CHECK(frees == 2 && last_allocator == &zone_b);
    weft_data_copy_detach_force_locked(d, 0);
    CHECK(frees == 2); /* the user's memory is not ours to free */
    weft_data__unref(d);
}

static void bad_sizes(void)
{
    CHECK(weft_data__create(NULL, 7, WEFT_DOUBLE, 0, 4, 0) == NULL);
    CHECK(weft_data__create(NULL, 8, WEFT_DOUBLE, 4, -1, 0) == NULL);
    CHECK(weft_data__create(NULL, 9, (weft_dtype_t)77, 4, 4, 0) == NULL);
}

/* Locking rule 6: a thread waiting for another's transfer into the host
 * copy sleeps until that transfer ends (woken by it, not by the wait's
 * safety net), and one waiting for a reader to let go until the last
 * reader does. The waiter holds the lock from the end of each wait to its
 * check, so the wait during which the change comes always returns woken. */
typedef struct ender {
    weft_data_t *d;
    uint32_t v;
    int release; /* 0: end the transfer, 1: release the reader */
} ender_t;

static void *end_later(void *arg)
{
    ender_t *e = arg;
    struct timespec ts = {.tv_sec = 0, .tv_nsec = 2000000};
    nanosleep(&ts, NULL);
    weft_data_lock(e->d);
    if (e->release)
        weft_data_copy_reader_release_locked(e->d->copies[0]);
    else
        weft_data_xfer_end_locked(e->d, 0, e->v, 1);
    weft_data_unlock(e->d);
    return NULL;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void wait_for_change(void)
{
    weft_data_t *d = weft_data__create(NULL, 9, WEFT_DOUBLE, 4, 4, 0);
    attach(d, 0, WEFT_MEM_RUNTIME, NULL);
    attach(d, 1, WEFT_MEM_RUNTIME, NULL);
    weft_data_lock(d);
    weft_data_written_locked(d, 1);
    ender_t e = {.d = d, .v = weft_data_xfer_begin_locked(d, 0)};
    weft_data_unlock(d);
    for (int release = 0; release < 2; release++) {
        e.release = release;
        if (release) {
            weft_data_lock(d);
            weft_data_copy_reader_acquire_locked(d->copies[0]);
            weft_data_unlock(d);
        }
        /* Locked before the other thread starts: it cannot change the
         * copy before this one waits, however late either is scheduled. */
        pthread_t th;
        double t0 = now_ms();
        weft_data_lock(d);
        CHECK(pthread_create(&th, NULL, end_later, &e) == 0);
        int waits = 0, woken = 0;
        while (release ? d->copies[0]->readers > 0 : d->copies[0]->xfer == WEFT_XFER_UNDER) {
            woken = weft_data_wait_change(d);
            waits++;
        }
        weft_data_unlock(d);
        double ms = now_ms() - t0;
        pthread_join(th, NULL);
        /* The wait the change came in was ended by it, not by the safety
         * net (which may end earlier ones on a loaded machine, when the
         * other thread runs late). */
        CHECK(waits >= 1 && woken);
        CHECK(ms >= 1.5); /* after the other thread's 2 ms */
        CHECK(d->waiters == NULL && d->wake == NULL);
    }
    CHECK(weft_data_copy_is_newest_locked(d, d->copies[0]));
    weft_data__destroy(d);
}

int main(void)
{
    gpu_only_copy();
    write_invalidates();
    newer_version_arrives();
    under_transfer_not_newest();
    readers_pin();
    under_transfer_pinned();
    free_where_allocated();
    bad_sizes();
    wait_for_change();
    printf("test_data: %d checks, %d failed\n", checks, failures);
    return failures != 0;
}
