/* Released handles kept a while before their memory goes, so that a
 * call with a freed handle reads a released tag. */
#include "util/quarantine.h"

#include <stdint.h>
#include <stdlib.h>

#include "util/handle.h"

void weft_quarantine_init(weft_quarantine_t *q)
{
    pthread_mutex_init(&q->lock, NULL);
    q->ptr = NULL;
    q->free_fn = NULL;
    q->bytes = NULL;
    q->held = 0;
    q->next = q->count = 0;
    q->ended = 0;
}

/* The ring's slot of the k-th newest entry (k = 0: the newest). */
static long slot_back(const weft_quarantine_t *q, long k)
{
    return (q->next - 1 - k + WEFT_QUARANTINE_SLOTS) % WEFT_QUARANTINE_SLOTS;
}

/* The ring's three arrays freed (its entries are the caller's to free or
 * keep). */
static void ring_free(weft_quarantine_t *q)
{
    free(q->ptr);
    free(q->free_fn);
    free(q->bytes);
    q->ptr = NULL;
    q->free_fn = NULL;
    q->bytes = NULL;
}

/* Every entry held freed by its function, and the arrays that held them
 * (a live ring, or an ended quarantine's, laid out alike). */
static void free_held(weft_quarantine_t *q)
{
    for (long k = 0; k < q->count; k++) {
        long slot = slot_back(q, k);
        q->free_fn[slot](q->ptr[slot]);
    }
    ring_free(q);
    q->next = q->count = 0;
    q->held = 0;
}

void weft_quarantine_fini(weft_quarantine_t *q)
{
    free_held(q);
    pthread_mutex_destroy(&q->lock);
}

void weft_quarantine_end(weft_quarantine_t *q)
{
    for (long k = 0; k < q->count; k++) {
        void *h = q->ptr[slot_back(q, k)];
        weft_handle_tag_set(h, weft_handle_ended(weft_handle_tag(h)));
    }
    /* The ring's three arrays of WEFT_QUARANTINE_SLOTS (384 KiB) stayed
     * with every ended context: a process that made and ended contexts in
     * a loop grew by that much each time. Only the entries are kept, with
     * their free functions, in arrays of their count, oldest first with
     * next at their count, where slot_back finds them as in the ring
     * (still reachable: no leak to report). Without memory for them the
     * ring stays as it is. */
    q->ended = 1;
    long n = q->count;
    void **kept = n > 0 ? malloc(sizeof *kept * (size_t)n) : NULL;
    weft_quarantine_free_fn *fns = n > 0 ? malloc(sizeof *fns * (size_t)n) : NULL;
    if (n > 0 && (!kept || !fns)) {
        free(kept);
        free(fns);
        return;
    }
    for (long k = 0; k < n; k++) {
        kept[n - 1 - k] = q->ptr[slot_back(q, k)];
        fns[n - 1 - k] = q->free_fn[slot_back(q, k)];
    }
    ring_free(q);
    q->ptr = kept;
    q->free_fn = fns;
    q->next = n;
}

void weft_quarantine_drop(weft_quarantine_t *q) { free_held(q); }

long weft_quarantine_held(const weft_quarantine_t *q, size_t *bytes)
{
    *bytes = q->held;
    return q->count;
}

/* The ring is allocated at the first release: most runs never need it. */
static int ring_ready_locked(weft_quarantine_t *q)
{
    if (q->ended) return 0; /* weft_quarantine_end */
    if (q->ptr) return 1;
    q->ptr = calloc(WEFT_QUARANTINE_SLOTS, sizeof *q->ptr);
    q->free_fn = calloc(WEFT_QUARANTINE_SLOTS, sizeof *q->free_fn);
    q->bytes = calloc(WEFT_QUARANTINE_SLOTS, sizeof *q->bytes);
    if (q->ptr && q->free_fn && q->bytes) return 1;
    ring_free(q);
    return 0;
}

/* Whether a new entry of `bytes` needs the oldest out first. */
static int over_locked(const weft_quarantine_t *q, size_t bytes)
{
    return q->count > 0 &&
           (q->count == WEFT_QUARANTINE_SLOTS || q->held + bytes > WEFT_QUARANTINE_BYTES);
}

/* The oldest entry out of the ring: its pointer, *fn its free function. */
static void *pop_oldest_locked(weft_quarantine_t *q, weft_quarantine_free_fn *fn)
{
    long slot = slot_back(q, q->count - 1);
    void *p = q->ptr[slot];
    *fn = q->free_fn[slot];
    q->held -= q->bytes[slot];
    q->ptr[slot] = NULL;
    q->count--;
    return p;
}

void weft_quarantine_put(weft_quarantine_t *q, void *p, size_t bytes,
                         weft_quarantine_free_fn free_fn)
{
    if (!q) {
        free_fn(p);
        return;
    }
    pthread_mutex_lock(&q->lock);
    if (!ring_ready_locked(q)) {
        pthread_mutex_unlock(&q->lock);
        free_fn(p);
        return;
    }
    /* Outside the lock, a free may take long: a few at a time (one but
     * where a larger entry makes room). */
    for (;;) {
        void *old[16];
        weft_quarantine_free_fn old_fn[16];
        int n = 0;
        while (n < 16 && over_locked(q, bytes)) old[n] = pop_oldest_locked(q, &old_fn[n]), n++;
        if (n == 0) break;
        pthread_mutex_unlock(&q->lock);
        for (int i = 0; i < n; i++) old_fn[i](old[i]);
        pthread_mutex_lock(&q->lock);
    }
    q->ptr[q->next] = p;
    q->free_fn[q->next] = free_fn;
    q->bytes[q->next] = bytes;
    q->held += bytes;
    q->count++;
    q->next = (q->next + 1) % WEFT_QUARANTINE_SLOTS;
    pthread_mutex_unlock(&q->lock);
}

void *weft_quarantine_take(weft_quarantine_t *q, size_t bytes, weft_quarantine_free_fn free_fn)
{
    void *p = NULL;
    pthread_mutex_lock(&q->lock);
    long oldest = q->count > 0 ? slot_back(q, q->count - 1) : 0;
    if (!q->ended && q->ptr && q->free_fn && over_locked(q, bytes) &&
        q->free_fn[oldest] == free_fn && q->bytes[oldest] == bytes) {
        weft_quarantine_free_fn fn;
        p = pop_oldest_locked(q, &fn);
    }
    pthread_mutex_unlock(&q->lock);
    return p;
}
