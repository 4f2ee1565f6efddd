/* The home-device rule, written once: used by device selection
 * (devmgr/devselect.c) and by remote inference to receive a tile where its
 * consumer will run (stf/remote.c). */
#include "stf/home.h"

#include "device/registry.h"

weft_device_type_t weft_home_device_type(const weft_context_t *ctx, int device)
{
    return device == 0 ? WEFT_DEV_CPU : ctx->devices->dev[device]->ops->type;
}

weft_body_fn weft_home_body(const weft_context_t *ctx, const weft_task_t *t, int device)
{
    weft_device_type_t type = weft_home_device_type(ctx, device);
    weft_body_fn b = t->cls->body[type];
    if (!b && type == WEFT_DEV_EMU) b = t->cls->body[WEFT_DEV_CPU];
    return b;
}

int weft_home_device(const weft_context_t *ctx, const weft_task_t *t)
{
    /* A device hint (WEFT_DEVICE_HINT) wins where the class can run. */
    if (t->device_hint >= 0 && t->device_hint <= ctx->ndevices &&
        weft_home_body(ctx, t, t->device_hint))
        return t->device_hint;
    if (t->affinity < 0) return -1;
    const weft_data_t *d = t->flow[t->affinity].data;
    int home = d->home_device;
    if (!(d->flags & WEFT_DATA_HOMED) || home < 0 || home > ctx->ndevices) return -1;
    return weft_home_body(ctx, t, home) ? home : -1;
}
