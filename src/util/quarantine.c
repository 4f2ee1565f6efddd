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
    q->next = q->count = 0;
}

void weft_quarantine_fini(weft_quarantine_t *q)
{
    for (long k = 0; k < q->count; k++) {
        long slot = (q->next - 1 - k + WEFT_QUARANTINE_SLOTS) % WEFT_QUARANTINE_SLOTS;
        q->free_fn[slot](q->ptr[slot]);
    }
    free(q->ptr);
    free(q->free_fn);
    q->ptr = NULL;
    q->free_fn = NULL;
    q->next = q->count = 0;
    pthread_mutex_destroy(&q->lock);
}

void weft_quarantine_end(weft_quarantine_t *q)
{
    for (long k = 0; k < q->count; k++) {
        long slot = (q->next - 1 - k + WEFT_QUARANTINE_SLOTS) % WEFT_QUARANTINE_SLOTS;
        uint32_t *tag = q->ptr[slot];
        *tag = weft_handle_ended(*tag);
    }
}

/* The ring is allocated at the first release: most runs never need it. */
static int ring_ready_locked(weft_quarantine_t *q)
{
    if (q->ptr) return 1;
    q->ptr = calloc(WEFT_QUARANTINE_SLOTS, sizeof *q->ptr);
    q->free_fn = calloc(WEFT_QUARANTINE_SLOTS, sizeof *q->free_fn);
    if (q->ptr && q->free_fn) return 1;
    free(q->ptr);
    free(q->free_fn);
    q->ptr = NULL;
    q->free_fn = NULL;
    return 0;
}

void weft_quarantine_put(weft_quarantine_t *q, void *p, weft_quarantine_free_fn free_fn)
{
    if (!q) {
        free_fn(p);
        return;
    }
    void *old = NULL;
    weft_quarantine_free_fn old_fn = NULL;
    pthread_mutex_lock(&q->lock);
    if (!ring_ready_locked(q)) {
        pthread_mutex_unlock(&q->lock);
        free_fn(p);
        return;
    }
    if (q->count == WEFT_QUARANTINE_SLOTS) {
        old = q->ptr[q->next];
        old_fn = q->free_fn[q->next];
    } else {
        q->count++;
    }
    q->ptr[q->next] = p;
    q->free_fn[q->next] = free_fn;
    q->next = (q->next + 1) % WEFT_QUARANTINE_SLOTS;
    pthread_mutex_unlock(&q->lock);
    if (old) old_fn(old); /* outside the lock: a free may take long */
}

void *weft_quarantine_take(weft_quarantine_t *q, weft_quarantine_free_fn free_fn)
{
    void *p = NULL;
    pthread_mutex_lock(&q->lock);
    /* Full: the oldest entry sits at next, the slot the next put fills. */
    if (q->ptr && q->count == WEFT_QUARANTINE_SLOTS && q->free_fn[q->next] == free_fn) {
        p = q->ptr[q->next];
        q->ptr[q->next] = NULL;
        q->count--;
    }
    pthread_mutex_unlock(&q->lock);
    return p;
}
