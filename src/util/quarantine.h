/* Released handles whose memory is kept a while before it is freed, so
 * that a call made with a handle after its release reads a "released" tag
 * instead of freed memory: a clear error rather than a crash, and nothing
 * for AddressSanitizer to report. Bounded: past WEFT_QUARANTINE_SLOTS
 * entries the oldest is really freed. Any thread. */
#ifndef WEFT_UTIL_QUARANTINE_H
#define WEFT_UTIL_QUARANTINE_H

#include <pthread.h>

#define WEFT_QUARANTINE_SLOTS 16384

typedef void (*weft_quarantine_free_fn)(void *p);

typedef struct weft_quarantine {
    pthread_mutex_t lock;
    void **ptr;
    weft_quarantine_free_fn *free_fn;
    long next, count; /* ring: next slot to fill, entries held */
} weft_quarantine_t;

void weft_quarantine_init(weft_quarantine_t *q);
/* Frees every entry still held. */
void weft_quarantine_fini(weft_quarantine_t *q);
/* At weft_fini: every entry still held keeps its memory for the rest of
 * the process, its tag (the first uint32_t of every entry) turned to the
 * ended form (util/handle.h). Nothing is freed; main thread. */
void weft_quarantine_end(weft_quarantine_t *q);
/* Keeps p (freed later by free_fn); with q NULL, or when the ring cannot be
 * allocated, frees it at once. */
void weft_quarantine_put(weft_quarantine_t *q, void *p, weft_quarantine_free_fn free_fn);
/* When the ring is full and its oldest entry was put with free_fn: that
 * entry, out of the ring, for the caller to reuse as an object of the
 * same kind instead of allocating one (it is past the window, where put
 * would free it). NULL otherwise. */
void *weft_quarantine_take(weft_quarantine_t *q, weft_quarantine_free_fn free_fn);

#endif
