/* The per-data STF record: creation at first insertion, readers, reset at
 * the end of a taskpool, and its destructor, which the data calls. */
#include "stf/record.h"

#include <stdlib.h>

static void rec_free(void *p)
{
    weft_stf_rec_t *r = p;
    weft_vec_fini(&r->readers);
    free(r->remote);
    free(r);
}

weft_stf_rec_t *weft_stf_rec_touch(weft_taskpool_t *tp, weft_data_t *d)
{
    weft_stf_rec_t *r = d->stf;
    if (!r) {
        r = calloc(1, sizeof *r);
        if (!r) return NULL;
        weft_vec_init(&r->readers, sizeof(weft_task_t *), 4);
        d->stf = r;
        d->stf_free = rec_free;
    }
    if (r->epoch != tp->epoch) {
        if (weft_taskpool_touch(tp, d) != WEFT_SUCCESS) return NULL;
        r->epoch = tp->epoch;
    }
    return r;
}

int weft_stf_rec_push_reader(weft_stf_rec_t *r, weft_task_t *t)
{
    if (weft_vec_push(&r->readers, &t) != WEFT_SUCCESS) return WEFT_ERR_NOMEM;
    weft_task_retain(t);
    return WEFT_SUCCESS;
}

void weft_stf_rec_reset(weft_stf_rec_t *r)
{
    if (r->last_writer) weft_task_unref(r->last_writer);
    r->last_writer = NULL;
    for (size_t i = 0; i < r->readers.n; i++) weft_task_unref(weft_stf_rec_reader(r, i));
    weft_vec_clear(&r->readers);
    r->epoch = 0;
}
