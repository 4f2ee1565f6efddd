/* The per-data STF record: creation at first insertion, readers, reset at
 * the end of a taskpool, and its destructor, which the data calls. */
#include "stf/record.h"

#include <stdlib.h>

#include "stf/redux.h"

static void rec_free(void *p)
{
    weft_stf_rec_t *r = p;
    weft_redux_free(r->redux);
    weft_meta_add(r->meta, WEFT_META_RECORDS,
                  -(long long)(sizeof *r + r->readers.elem * r->readers.cap));
    weft_meta_add(r->meta, WEFT_META_HOLDERS, -r->remote_bytes);
    weft_vec_fini(&r->readers);
    free(r->remote);
    free(r);
}

weft_stf_rec_t *weft_stf_rec_get(weft_data_t *d)
{
    weft_stf_rec_t *r = d->stf;
    if (!r) {
        r = calloc(1, sizeof *r);
        if (!r) return NULL;
        weft_vec_init(&r->readers, sizeof(weft_task_t *), 4);
        d->stf = r;
        d->stf_free = rec_free;
        r->meta = &d->ctx->meta;
        weft_meta_add(r->meta, WEFT_META_RECORDS, (long long)sizeof *r);
    }
    return r;
}

weft_stf_rec_t *weft_stf_rec_touch(weft_taskpool_t *tp, weft_data_t *d)
{
    weft_stf_rec_t *r = weft_stf_rec_get(d);
    if (!r) return NULL;
    if (r->epoch != tp->epoch) {
        if (weft_taskpool_touch(tp, d) != WEFT_SUCCESS) return NULL;
        r->epoch = tp->epoch;
    }
    return r;
}

int weft_stf_rec_drop_writer(weft_stf_rec_t *r)
{
    if (!r->last_writer) return 0;
    if (!weft_task_is_done(r->last_writer)) return 1;
    /* Ended: an edge from it would add nothing (weft_task_add_edge). */
    weft_task_unref(r->last_writer);
    r->last_writer = NULL;
    return 0;
}

void weft_stf_rec_drop_ended(weft_stf_rec_t *r)
{
    /* Still queued (writer_queued): the queue finds the writer gone. */
    (void)weft_stf_rec_drop_writer(r);
    size_t keep = 0;
    for (size_t i = 0; i < r->readers.n; i++) {
        weft_task_t *t = weft_stf_rec_reader(r, i);
        if (weft_task_is_done(t))
            weft_task_unref(t);
        else
            *(weft_task_t **)weft_vec_at(&r->readers, keep++) = t;
    }
    r->readers.n = keep;
}

int weft_stf_rec_push_reader(weft_stf_rec_t *r, weft_task_t *t)
{
    size_t cap = r->readers.cap;
    if (r->readers.n == cap) {
        weft_stf_rec_drop_ended(r);
        /* Less than half let go: the list doubles now, so that the next
         * scan comes as many pushes later as it holds (with one reader
         * ending between two pushes, every push scanned it whole). */
        if (r->readers.n > cap / 2 && weft_vec_reserve(&r->readers, 2 * cap) != WEFT_SUCCESS)
            return WEFT_ERR_NOMEM;
    }
    if (weft_vec_push(&r->readers, &t) != WEFT_SUCCESS) return WEFT_ERR_NOMEM;
    /* Counted by capacity, as it grows. */
    if (r->readers.cap != cap)
        weft_meta_add(r->meta, WEFT_META_RECORDS,
                      (long long)(r->readers.elem * (r->readers.cap - cap)));
    weft_task_retain(t);
    return WEFT_SUCCESS;
}

void weft_stf_rec_reset(weft_stf_rec_t *r)
{
    if (r->last_writer) weft_task_unref(r->last_writer);
    r->last_writer = NULL;
    r->written = 0;
    r->writer_queued = 0;
    for (size_t i = 0; i < r->readers.n; i++) weft_task_unref(weft_stf_rec_reader(r, i));
    weft_vec_clear(&r->readers);
    r->epoch = 0;
}
