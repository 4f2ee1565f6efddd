/* check_reads (readcheck.h). */
#include "stf/readcheck.h"

#include <string.h>

#include "device/registry.h"
#include "stf/taskpool.h"
#include "util/hash.h"
#include "util/log.h"

/* Whether flow i is read only (a data named twice takes the union of its
 * modes, so its first flow alone speaks for it) and its copy is memory the
 * host can read. */
static int checkable(const weft_task_t *t, int i)
{
    const weft_flow_t *f = &t->flow[i];
    if ((f->mode & (WEFT_R | WEFT_W | WEFT_REDUX)) != WEFT_R) return 0;
    if (weft_task_first_flow_of(t, i) != i || !f->copy || !f->copy->ptr) return 0;
    int dev = f->copy->device;
    const weft_devices_t *devs = t->tp->ctx->devices;
    return dev == 0 || (devs && dev > 0 && dev < WEFT_MAX_DEVICES && devs->dev[dev] &&
                        devs->dev[dev]->ops->type == WEFT_DEV_EMU);
}

uint64_t weft_readcheck_hash(const weft_data_t *d, const void *ptr, int64_t ld)
{
    size_t col = (size_t)d->rows * d->elem;
    uint64_t h = WEFT_HASH_INIT;
    for (int j = 0; j < d->cols; j++) {
        const unsigned char *p = (const unsigned char *)ptr + (size_t)j * (size_t)ld * d->elem;
        size_t k = 0;
        for (; k + 8 <= col; k += 8) {
            uint64_t w;
            memcpy(&w, p + k, 8);
            h = weft_hash_step(h, w);
        }
        for (; k < col; k++) h = weft_hash_step(h, p[k]);
    }
    return h;
}

/* The tile's bytes where the flow's copy holds them. */
static uint64_t tile_hash(const weft_flow_t *f)
{
    return weft_readcheck_hash(f->data, f->copy->ptr, f->copy->ld);
}

void weft_readcheck_before(weft_task_t *t, weft_readcheck_t *rc)
{
    rc->on = atomic_load_explicit(&t->tp->ctx->check_reads, memory_order_relaxed);
    if (!rc->on) return; /* every task's path: nothing more when off */
    for (int i = 0; i < t->nflows; i++) {
        rc->checked[i] = checkable(t, i);
        if (rc->checked[i]) rc->hash[i] = tile_hash(&t->flow[i]);
    }
}

void weft_readcheck_after(weft_task_t *t, const weft_readcheck_t *rc, int batch_n)
{
    if (!rc->on) return;
    for (int i = 0; i < t->nflows; i++) {
        if (!rc->checked[i] || tile_hash(&t->flow[i]) == rc->hash[i]) continue;
        if (batch_n > 0)
            weft_error("task %s: its flow %d (data %llu), which it was given to read (WEFT_R; "
                       "check_reads), changed during the batch call of %d tasks it ran in (one "
                       "of them wrote it): the task fails",
                       weft_task_name(t).text, i, (unsigned long long)t->flow[i].data->key,
                       batch_n);
        else
            weft_error("task %s wrote its flow %d (data %llu), which it was given to read "
                       "(WEFT_R; check_reads): the task fails",
                       weft_task_name(t).text, i, (unsigned long long)t->flow[i].data->key);
        atomic_fetch_or(&t->misuse, 1);
    }
}
