/* check_reads and check_writes (flowcheck.h). */
#include "stf/flowcheck.h"

#include <string.h>

#include "device/registry.h"
#include "stf/taskpool.h"
#include "util/hash.h"
#include "util/log.h"

/* Whether flow i has exactly `mode` (a data named twice takes the union of
 * its modes, so its first flow alone speaks for it) and its copy is memory
 * the host can read. */
static int checkable(const weft_task_t *t, int i, int mode)
{
    const weft_flow_t *f = &t->flow[i];
    if ((f->mode & (WEFT_R | WEFT_W | WEFT_REDUX)) != mode) return 0;
    if (weft_task_first_flow_of(t, i) != i || !f->copy || !f->copy->ptr) return 0;
    int dev = f->copy->device;
    const weft_devices_t *devs = t->tp->ctx->devices;
    return dev == 0 || (devs && dev > 0 && dev < WEFT_MAX_DEVICES && devs->dev[dev] &&
                        devs->dev[dev]->ops->type == WEFT_DEV_EMU);
}

uint64_t weft_flowcheck_hash(const weft_data_t *d, const void *ptr, int64_t ld)
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
    return weft_flowcheck_hash(f->data, f->copy->ptr, f->copy->ld);
}

/* check_writes' fill, 8 bytes repeated from each column's start: a NaN
 * read as a double (0xFFF8DEAD...) and as either float of it. */
static const uint64_t POISON = 0xFFF8DEADFFC0DEADull;

static void poison(const weft_flow_t *f)
{
    const weft_data_t *d = f->data;
    size_t col = (size_t)d->rows * d->elem;
    unsigned char pat[8];
    memcpy(pat, &POISON, 8);
    for (int j = 0; j < d->cols; j++) {
        unsigned char *p =
            (unsigned char *)f->copy->ptr + (size_t)j * (size_t)f->copy->ld * d->elem;
        for (size_t k = 0; k < col; k++) p[k] = pat[k % 8];
    }
}

/* Elements of the flow's tile that still hold the fill; none counted for
 * elements under 4 bytes, which a body writes as the fill's bytes by
 * chance (a byte tile of random values: 1 in 256). */
static long long unwritten(const weft_flow_t *f)
{
    const weft_data_t *d = f->data;
    if (d->elem < 4) return 0;
    unsigned char pat[8];
    memcpy(pat, &POISON, 8);
    long long n = 0;
    for (int j = 0; j < d->cols; j++) {
        const unsigned char *p =
            (const unsigned char *)f->copy->ptr + (size_t)j * (size_t)f->copy->ld * d->elem;
        for (int i = 0; i < d->rows; i++) {
            size_t at = (size_t)i * d->elem, k = 0;
            while (k < d->elem && p[at + k] == pat[(at + k) % 8]) k++;
            n += k == d->elem;
        }
    }
    return n;
}

void weft_flowcheck_before(weft_task_t *t, weft_flowcheck_t *rc)
{
    weft_context_t *ctx = t->tp->ctx;
    rc->reads = atomic_load_explicit(&ctx->check_reads, memory_order_relaxed);
    rc->writes = atomic_load_explicit(&ctx->check_writes, memory_order_relaxed);
    if (!rc->reads && !rc->writes) return; /* every task's path: nothing more when off */
    for (int i = 0; i < t->nflows; i++) {
        rc->checked[i] = rc->reads && checkable(t, i, WEFT_R);
        if (rc->checked[i]) rc->hash[i] = tile_hash(&t->flow[i]);
        rc->poisoned[i] = rc->writes && checkable(t, i, WEFT_W);
        if (rc->poisoned[i]) poison(&t->flow[i]);
    }
}

/* Write-only flow i of t has n elements that still hold the fill: left
 * unwritten, or computed from the fill (a NaN payload goes through
 * arithmetic; so does one read from an input that an earlier such task
 * left unwritten, which the earlier line named). Said for the first few
 * such flows of the context (a body that fills a triangle of its tiles on
 * purpose would say it at every task). */
static void say_unwritten(weft_task_t *t, int i, long long n)
{
    enum { SAID_MAX = 8 };
    const weft_data_t *d = t->flow[i].data;
    int said = atomic_fetch_add(&t->tp->ctx->unwritten_said, 1);
    if (said >= SAID_MAX) return;
    weft_warn("task %s: %lld of the %lld elements of its flow %d (data %llu), which it was "
              "given to write only (WEFT_W; check_writes), still hold the NaNs put there before "
              "its body: it left them unwritten, or computed them from the flow's contents, "
              "which only WEFT_RW passes to a body (or from inputs that held NaNs already, as "
              "a tile that a task named so earlier left unwritten does)%s",
              weft_task_name(t).text, n, (long long)d->rows * d->cols, i,
              (unsigned long long)d->key,
              said + 1 == SAID_MAX ? " (the next such flows are not said)" : "");
}

void weft_flowcheck_after(weft_task_t *t, const weft_flowcheck_t *rc, int batch_n)
{
    if (!rc->reads && !rc->writes) return;
    for (int i = 0; i < t->nflows; i++) {
        long long n = rc->poisoned[i] ? unwritten(&t->flow[i]) : 0;
        if (n > 0) say_unwritten(t, i, n);
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
