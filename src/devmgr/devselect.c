/* Where a ready task runs. Owner computes: a task with an AFFINITY flow
 * runs on that data's home device when its class has a body for it.
 * Otherwise every place with a body is scored by its estimated completion
 * time: the work already queued there, the bytes the task would move in,
 * and the task's own run time (flops over the place's speed). The speeds
 * are coarse per-type figures: they only need to rank the places. */
#include "devmgr/devmgr.h"
#include "stf/home.h"
#include "stf/taskrun.h"
#include "util/log.h"

typedef struct place_speed {
    double flops_per_s; /* one core, or one device */
    double bytes_per_s; /* moving a tile in from elsewhere */
} place_speed_t;

static const place_speed_t speeds[WEFT_DEV_TYPES] = {
    [WEFT_DEV_CPU] = {.flops_per_s = 1e10, .bytes_per_s = 1e10},
    [WEFT_DEV_CUDA] = {.flops_per_s = 2e13, .bytes_per_s = 2e10},
    [WEFT_DEV_EMU] = {.flops_per_s = 1e10, .bytes_per_s = 5e9},
    [WEFT_DEV_HIP] = {.flops_per_s = 2e13, .bytes_per_s = 2e10},
};

#define TASK_NS_UNKNOWN 20000 /* a class without a flops estimate */

/* A task of `flops` (its class's estimate, read once a selection) on a
 * device of the type. */
static int64_t task_ns(double flops, weft_device_type_t type)
{
    if (flops <= 0.0) return TASK_NS_UNKNOWN;
    double ns = flops / speeds[type].flops_per_s * 1e9;
    /* 1000 s: an estimate past it is one, and the loads that sum the
     * queued tasks' estimates stay far from int64's end. */
    return ns < 1e12 ? (int64_t)ns : (int64_t)1e12;
}

/* Bytes that reading flows would move to `device`, in nanoseconds. */
static int64_t move_ns(const weft_context_t *ctx, weft_task_t *t, int device)
{
    double bytes = 0;
    for (int i = 0; i < t->nflows; i++) {
        weft_data_t *d = t->flow[i].data;
        if (!(t->flow[i].mode & WEFT_R)) continue;
        weft_data_lock(d);
        int here = weft_data_copy_at_newest_locked(d, d->copies[device]);
        weft_data_unlock(d);
        if (!here) bytes += (double)d->bytes;
    }
    return (int64_t)(bytes / speeds[weft_home_device_type(ctx, device)].bytes_per_s * 1e9);
}

static int64_t queued_ns(weft_context_t *ctx, int device)
{
    if (device == 0) return atomic_load(&ctx->host_load_ns) / (ctx->ncores > 0 ? ctx->ncores : 1);
    return atomic_load(&ctx->devmgr[device]->load_ns);
}

/* Whether t's tiles fit the zone of `device` when it is empty (the host:
 * always). The sum of the tiles' bytes is a bound read without locks; only
 * a task above it is counted exactly (weft_devcopy_task_bytes). */
static int fits_empty(weft_context_t *ctx, const weft_task_t *t, int device)
{
    if (device == 0) return 1;
    weft_devmgr_t *m = ctx->devmgr[device];
    size_t capacity = weft_zone_capacity(m->dev->zone), bound = 0;
    for (int i = 0; i < t->nflows; i++) bound += t->flow[i].data->bytes + WEFT_ZONE_ALIGNMENT;
    return bound <= capacity || weft_devcopy_task_bytes(m, t) <= capacity;
}

/* Whether t can run on `device` at all: the host always; a device that
 * did not fail (weft_device_set_broken) and whose empty zone holds t's
 * tiles. */
static int usable(weft_context_t *ctx, const weft_task_t *t, int device)
{
    return device == 0 ||
           (!weft_device_is_broken(ctx->devmgr[device]->dev) && fits_empty(ctx, t, device));
}

/* A place other than `device` that can run t, for a task that can never
 * run there (its tiles never fit that device's zone, or the device
 * failed): said once per device (the task runs, where it used to fail
 * although the host could run it). */
static int elsewhere(weft_context_t *ctx, const weft_task_t *t, int device)
{
    for (int k = 0; k <= ctx->ndevices; k++) {
        if (k == device || !weft_home_body(ctx, t, k) || !usable(ctx, t, k)) continue;
        weft_devmgr_t *m = ctx->devmgr[device];
        const char *there = k == 0 ? "the host" : ctx->devmgr[k]->dev->name;
        if (weft_device_is_broken(m->dev)) {
            if (!atomic_exchange(&m->told_dead, 1))
                weft_log(WEFT_LOG_WARN, device,
                         "task %s and the later tasks meant for %s, which failed, run on "
                         "%s instead where their classes allow",
                         weft_task_name(t).text, m->dev->name, there);
            return k;
        }
        if (!atomic_exchange(&m->told_too_small, 1))
            weft_log(WEFT_LOG_WARN, device,
                     "task %s needs more device memory for its tiles than the zone of %s "
                     "holds even when empty: it and such tasks run on %s instead (raise "
                     "device_memory_use, device_memory_limit or device_emu_memory, or use "
                     "smaller tiles)",
                     weft_task_name(t).text, m->dev->name, there);
        return k;
    }
    return -1;
}

int weft_devselect(weft_context_t *ctx, weft_task_t *t)
{
    int best = weft_home_device(ctx, t);
    double flops = weft_taskrun_flops(t);
    if (best >= 0 && !usable(ctx, t, best) && elsewhere(ctx, t, best) >= 0) best = -1;
    if (best >= 0) {
        t->est_ns = task_ns(flops, weft_home_device_type(ctx, best));
        return best;
    }
    int64_t best_ect = 0, best_run = 0;
    for (int k = 0; k <= ctx->ndevices; k++) {
        if (!weft_home_body(ctx, t, k)) continue;
        /* Left out only when a place that holds the task remains. */
        if (!usable(ctx, t, k) && elsewhere(ctx, t, k) >= 0) continue;
        int64_t run = task_ns(flops, weft_home_device_type(ctx, k));
        int64_t ect = queued_ns(ctx, k) + move_ns(ctx, t, k) + run;
        if (best < 0 || ect < best_ect) {
            best = k;
            best_ect = ect;
            best_run = run;
        }
    }
    t->est_ns = best_run;
    return best;
}

int weft_devselect_instead(weft_context_t *ctx, const weft_task_t *t, int device)
{
    for (int k = 0; k <= ctx->ndevices; k++)
        if (k != device && !(t->room_waited >> k & 1) && weft_home_body(ctx, t, k) &&
            usable(ctx, t, k))
            return k;
    return -1;
}
