/* The host side of the device managers: which device pins host memory,
 * and the pool of weft's own host copies (data/hostmem.h) with its
 * pinning rule and its limit (host_memory_use). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "data/hostmem.h"
#include "data/zone.h"
#include "devmgr/devmgr.h"
#include "params/params.h"
#include "util/fault.h"
#include "util/log.h"

weft_device_t *weft_devexec_pin_device(const weft_context_t *ctx)
{
    for (int i = 1; i <= ctx->ndevices; i++)
        if (ctx->devices->dev[i]->ops->type != WEFT_DEV_EMU) return ctx->devices->dev[i];
    return NULL;
}

int weft_devexec_host_pin(weft_context_t *ctx, weft_device_t *dev, void *ptr, size_t bytes,
                          const char *what)
{
    /* A warning: the callers say what a failed pinning costs (host copies
     * stay pageable; weft_host_pin's caller gets an error line). */
    if (weft_fault_hit(ctx->fault, WEFT_FAULT_HOST_PIN, NULL)) {
        weft_log(WEFT_LOG_WARN, dev->index,
                 "fault_inject: pinning %zu bytes of %s fails (injected)", bytes, what);
        return WEFT_ERR_INTERNAL;
    }
    return dev->ops->host_register(dev, ptr, bytes);
}

/* The host memory pool pins through the pinning device, or on emu devices
 * only through the first (a no-op that keeps the pool's path the same). */
static weft_device_t *hostmem_device(weft_context_t *ctx)
{
    weft_device_t *dev = weft_devexec_pin_device(ctx);
    return dev ? dev : ctx->devices->dev[1];
}

static int hostmem_pin(void *arg, void *ptr, size_t bytes)
{
    return weft_devexec_host_pin(arg, hostmem_device(arg), ptr, bytes, "host copies");
}

static void hostmem_unpin(void *arg, void *ptr)
{
    weft_device_t *dev = hostmem_device(arg);
    (void)dev->ops->host_unregister(dev, ptr);
}

/* The memory this process may use: the node's physical memory, or the
 * limit of its control group when lower (a batch job's --mem, a
 * container: cgroup v2's memory.max, "max" when there is none). */
static double host_memory_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    double bytes = pages > 0 && page > 0 ? (double)pages * (double)page : 0.0;
    FILE *f = fopen("/sys/fs/cgroup/memory.max", "r");
    unsigned long long cap = 0;
    if (f && fscanf(f, "%llu", &cap) == 1 && cap > 0 && (bytes == 0.0 || (double)cap < bytes))
        bytes = (double)cap;
    if (f) fclose(f);
    return bytes;
}

/* The bytes the tiles of this rank's matrices may take (0: no limit):
 * host_memory_use percent of the memory above over the ranks of the node
 * (a simulation is one process: all of it). */
static size_t host_limit(const weft_context_t *ctx)
{
    int64_t use = weft_params_int(ctx->params, "host_memory_use");
    double bytes = use > 0 ? host_memory_bytes() : 0.0;
    if (bytes <= 0.0) return 0;
    int mates = 0;
    for (int r = 0; r < ctx->nranks && !ctx->sim; r++)
        mates += ctx->node_of[r] == ctx->node_of[ctx->rank];
    return (size_t)(bytes * (double)use / 100.0 / (mates > 0 ? mates : 1));
}

void weft_devexec_hostmem_open(weft_context_t *ctx)
{
    const char *pin = weft_params_str(ctx->params, "host_pin");
    /* Never pinned without devices or with host_pin=off: the slabs still
     * serve every host copy the runtime allocates, so that a received
     * tile's copy reuses memory already mapped (a fresh allocation a tile
     * faulted its pages in on the comm thread, a tenth of a core on 2 ranks
     * x 1 core). */
    weft_hostmem_pinner_t pinner = {NULL, NULL, ctx, "host", 1, SIZE_MAX};
    if (ctx->devices->n > 0 && strcmp(pin, "off") != 0) {
        /* auto: pinned once the host copies outgrow the rank's zones. */
        size_t zones = 0;
        for (int i = 1; i <= ctx->devices->n; i++)
            zones += weft_zone_capacity(ctx->devices->dev[i]->zone);
        /* Pinned memory serves every device of the process. */
        pinner = (weft_hostmem_pinner_t){hostmem_pin,
                                         hostmem_unpin,
                                         ctx,
                                         hostmem_device(ctx)->name,
                                         ctx->ncores + 1,
                                         strcmp(pin, "auto") == 0 ? zones : 0};
    }
    ctx->hostmem = weft_hostmem_open(&pinner, host_limit(ctx));
}
