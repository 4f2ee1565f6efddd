/* Released handles whose memory is kept a while before it is freed, so
 * that a call made with a handle after its release reads a "released" tag
 * instead of freed memory: a clear error rather than a crash, and nothing
 * for AddressSanitizer to report. Bounded: past WEFT_QUARANTINE_SLOTS
 * entries, or WEFT_QUARANTINE_BYTES of them, the oldest are really freed
 * (16384 taskpools of 1.8 KB held 29 MB, and kept them past weft_fini).
 * Any thread. */
#ifndef WEFT_UTIL_QUARANTINE_H
#define WEFT_UTIL_QUARANTINE_H

#include <pthread.h>
#include <stddef.h>

#define WEFT_QUARANTINE_SLOTS 16384
#define WEFT_QUARANTINE_BYTES ((size_t)4 << 20)

typedef void (*weft_quarantine_free_fn)(void *p);

typedef struct weft_quarantine {
    pthread_mutex_t lock;
    void **ptr;
    weft_quarantine_free_fn *free_fn;
    size_t *bytes;    /* each entry's size */
    size_t held;      /* their sum */
    long next, count; /* ring: next slot to fill, entries held (the oldest count back) */
    int ended;        /* weft_quarantine_end ran: no ring to put into */
} weft_quarantine_t;

void weft_quarantine_init(weft_quarantine_t *q);
/* Frees every entry still held. */
void weft_quarantine_fini(weft_quarantine_t *q);
/* At weft_fini: every entry still held keeps its memory, its tag (the
 * first uint32_t of every entry) turned to the ended form (util/handle.h),
 * until weft_quarantine_drop; the ring itself goes (the entries stay in
 * arrays of their count). Only drop and held may follow; main thread. */
void weft_quarantine_end(weft_quarantine_t *q);
/* An ended quarantine's entries freed at last (a bound on what the ended
 * contexts of a process keep between them). */
void weft_quarantine_drop(weft_quarantine_t *q);
/* Entries held, and their bytes in *bytes. */
long weft_quarantine_held(const weft_quarantine_t *q, size_t *bytes);
/* Keeps p, of `bytes` (freed later by free_fn); with q NULL, or when the
 * ring cannot be allocated, frees it at once. */
void weft_quarantine_put(weft_quarantine_t *q, void *p, size_t bytes,
                         weft_quarantine_free_fn free_fn);
/* When a put of `bytes` would free the oldest entry and that entry was put
 * with free_fn and as many bytes: that entry, out of the ring, for the
 * caller to reuse as an object of the same kind instead of allocating one
 * (it is past the window, where put would free it). NULL otherwise. */
void *weft_quarantine_take(weft_quarantine_t *q, size_t bytes, weft_quarantine_free_fn free_fn);

#endif
