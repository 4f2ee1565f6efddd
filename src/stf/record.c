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
                  -(long long)(sizeof *r + sizeof *r->readers * (size_t)r->readers_cap));
    weft_meta_add(r->meta, WEFT_META_HOLDERS, -r->remote_bytes);
    free(r->readers);
    free(r->remote);
    free(r);
}

weft_stf_rec_t *weft_stf_rec_get(weft_data_t *d)
{
    weft_stf_rec_t *r = d->stf;
    if (!r) {
        r = calloc(1, sizeof *r);
        if (!r) return NULL;
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

int weft_stf_rec_push_reader(weft_stf_rec_t *r, weft_task_t *t)
{
    if (r->nreaders == r->readers_cap) {
        int cap = r->readers_cap ? r->readers_cap * 2 : 4;
        weft_task_t **v = realloc(r->readers, sizeof *v * (size_t)cap);
        if (!v) return WEFT_ERR_NOMEM;
        weft_meta_add(r->meta, WEFT_META_RECORDS,
                      (long long)(sizeof *v * (size_t)(cap - r->readers_cap)));
        r->readers = v;
        r->readers_cap = cap;
    }
    weft_task_retain(t);
    r->readers[r->nreaders++] = t;
    return WEFT_SUCCESS;
}

void weft_stf_rec_reset(weft_stf_rec_t *r)
{
    if (r->last_writer) weft_task_unref(r->last_writer);
    r->last_writer = NULL;
    for (int i = 0; i < r->nreaders; i++) weft_task_unref(r->readers[i]);
    r->nreaders = 0;
    r->epoch = 0;
}
