/* What the comm engine needs from the layers above it: copies to receive
 * into (device copies come with eviction, owned by the device path), the
 * newest version brought to host for sends that may not read device
 * memory, and the GPU-aware switches resolved from the parameters. */
#include "runtime/comm_glue.h"

#include <string.h>

#include "device/registry.h"
#include "devmgr/devmgr.h"
#include "util/log.h"

#if defined(WEFT_GPU_AWARE_COMM) && defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

static int recv_copy(void *arg, weft_data_t *d, int device, weft_data_copy_t **out)
{
    weft_context_t *ctx = arg;
    weft_data_copy_t *c = NULL;
    /* A write-only flow of the host: the host copy, created when absent.
     * Neither waits: WEFT_AGAIN (device memory full, the device copy being
     * written by another transfer, a write-back still landing in the host
     * copy) and the engine lands it elsewhere or tries again later. */
    int rc = device > 0 ? weft_devcopy_get_nowait(ctx->devmgr[device], d, &c)
                        : weft_devcopy_host_write_nowait(d, &c);
    if (rc != WEFT_SUCCESS) return rc;
    /* Not readable until the bytes are in (weft_data_copied_locked). */
    weft_data_lock(d);
    weft_data_copy_arriving_locked(c);
    weft_data_unlock(d);
    *out = c;
    return WEFT_SUCCESS;
}

static void landing(void *arg, weft_task_t *t, weft_data_copy_t *c)
{
    int gated = weft_devgate_ahead(arg, t, c);
    (void)gated; /* counted in the device's statistics */
}

static int host_pull(void *arg, weft_data_t *d, weft_comm_pull_t *p, weft_data_copy_t **out)
{
    weft_devcopy_pull_t dp;
    int rc = weft_devcopy_pull_begin(d, &dp, out);
    if (rc == WEFT_SUCCESS && !*out)
        *p = (weft_comm_pull_t){.dev = dp.by, .ev = dp.ev, .src = dp.src, .version = dp.version};
    return rc;
}

static int host_pull_end(void *arg, weft_data_t *d, weft_comm_pull_t *p, int status,
                         weft_data_copy_t **out)
{
    weft_devcopy_pull_t dp = {.by = p->dev, .ev = p->ev, .src = p->src, .version = p->version};
    return weft_devcopy_pull_end(d, &dp, status, out);
}

/* auto follows the general switch; the general switch's auto means "on
 * when compiled in and the rank has accelerators". */
static int resolve_switch(weft_context_t *ctx, const char *name, int general)
{
    int64_t v = weft_params_int(ctx->params, name); /* auto|on|off */
    return v == 0 ? general : v == 1;
}

/* Whether MPI reads device memory itself: the library says so (Open MPI's
 * MPIX_Query_cuda_support), or the user forces it. */
static int mpi_reads_device(weft_context_t *ctx)
{
    int64_t v = weft_params_int(ctx->params, "comm_mpi_device"); /* auto|yes|no */
    if (v != 0) return v == 1;
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    return MPIX_Query_cuda_support() == 1;
#else
    return 0;
#endif
}

int weft_comm_glue_config(weft_context_t *ctx, weft_comm_config_t *cfg)
{
    int64_t general = weft_params_int(ctx->params, "comm_gpu_aware"); /* auto|on|off */
#ifndef WEFT_GPU_AWARE_COMM
    if (general == 1) {
        weft_error("comm_gpu_aware=on, but weft was built with WEFT_GPU_AWARE_COMM=OFF");
        return WEFT_ERR_UNSUPPORTED;
    }
    general = 2;
#endif
    int on = general == 1 || (general == 0 && ctx->ndevices > 0);
    cfg->ndevices = ctx->ndevices;
    cfg->devices = ctx->devices ? ctx->devices->dev : NULL;
    cfg->gpu_aware_send = ctx->ndevices > 0 && resolve_switch(ctx, "comm_gpu_aware_send", on);
    cfg->gpu_aware_recv = ctx->ndevices > 0 && resolve_switch(ctx, "comm_gpu_aware_recv", on);
#ifndef WEFT_GPU_AWARE_COMM
    cfg->gpu_aware_send = cfg->gpu_aware_recv = 0;
#endif
    cfg->transport = (weft_transport_t)weft_params_int(ctx->params, "comm_transport");
    cfg->mpi_device_ok = mpi_reads_device(ctx);
    cfg->staged_chunk = (size_t)weft_params_int(ctx->params, "comm_staged_chunk");
    cfg->mpi_piece = (size_t)weft_params_int(ctx->params, "comm_mpi_piece");
    cfg->recv_copy = recv_copy;
    cfg->host_pull = host_pull;
    cfg->host_pull_end = host_pull_end;
    cfg->landing = weft_params_int(ctx->params, "device_launch_ahead") ? landing : NULL;
    cfg->copy_arg = ctx;
    cfg->fault = ctx->fault;
    return WEFT_SUCCESS;
}
