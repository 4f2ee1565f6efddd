/* GPU layer: probing, open/close (streams, library handles, workspaces),
 * device memory, identity, peer access and launch. Copies, events and IPC
 * are in gpu_copy.c. */
#include <stdio.h>
#include <stdlib.h>

#include "device/gpu/gpu_internal.h"
#include "util/log.h"

/* ---- probe and memory ------------------------------------------------ */

int weft_gpu_probe(const weft_gpu_vendor_t *v, int *count)
{
    int n = 0;
    int rc = weft_gpu_check(v, NULL, v->device_count(&n), "GetDeviceCount");
    if (rc == WEFT_SUCCESS) *count = n;
    return rc;
}

int weft_gpu_mem_info(weft_device_t *dev, size_t *free_bytes, size_t *total_bytes)
{
    size_t f = 0, t = 0;
    int rc = weft_gpu__use(dev);
    if (rc == WEFT_SUCCESS)
        rc = weft_gpu__check(dev, weft_gpu__vendor(dev)->mem_info(&f, &t), "MemGetInfo");
    if (rc == WEFT_SUCCESS) {
        *free_bytes = f;
        *total_bytes = t;
    }
    return rc;
}

/* The UUID: the same in every process whatever the visible devices are,
 * and distinct for partitions of one GPU (which have their own memory). */
int weft_gpu_identity(weft_device_t *dev, char *key, size_t len)
{
    const weft_gpu_vendor_t *v = weft_gpu__vendor(dev);
    unsigned char uuid[16];
    int rc = weft_gpu__check(dev, v->uuid(weft_gpu__priv(dev)->ordinal, uuid), "DeviceGetUuid");
    if (rc != WEFT_SUCCESS) return rc;
    int n = snprintf(key, len, "%s-", v->name);
    for (int i = 0; i < 16 && n > 0 && (size_t)n < len; i++)
        n += snprintf(key + n, len - (size_t)n, "%02x", uuid[i]);
    return n > 0 && (size_t)n < len ? WEFT_SUCCESS : WEFT_ERR_INVALID;
}

int weft_gpu_mem_reserve(weft_device_t *dev, size_t bytes, void **base)
{
    void *p = NULL;
    int rc = weft_gpu__use(dev);
    if (rc == WEFT_SUCCESS)
        rc = weft_gpu__check(dev, weft_gpu__vendor(dev)->mem_alloc(&p, bytes),
                             "Malloc (device zone)");
    if (rc == WEFT_SUCCESS) *base = p;
    return rc;
}

void weft_gpu_mem_release(weft_device_t *dev, void *base, size_t bytes)
{
    (void)bytes;
    if (base == NULL || weft_gpu__use(dev) != WEFT_SUCCESS) return;
    (void)weft_gpu__check(dev, weft_gpu__vendor(dev)->mem_free(base), "Free (device zone)");
}

/* ---- open and close -------------------------------------------------- */

/* Streams IN, OUT and PREFETCH at the highest priority (copies only:
 * priorities order kernels, copies use the copy engines), the execution
 * streams at the lowest, and the urgent one, if asked for, at the highest,
 * so that the block scheduler serves its kernels before theirs. */
static int gpu_open_streams(weft_device_t *dev, weft_gpu_dev_t *g, int nstreams)
{
    const weft_gpu_vendor_t *v = g->vendor;
    int least = 0, greatest = 0;
    int rc = weft_gpu__check(dev, v->stream_priorities(&least, &greatest),
                             "DeviceGetStreamPriorityRange");
    for (int s = 0; s < nstreams && rc == WEFT_SUCCESS; s++) {
        int prio = s < WEFT_STREAM_EXEC0 || s == dev->urgent_stream ? greatest : least;
        rc =
            weft_gpu__check(dev, v->stream_create(&g->stream[s], prio), "StreamCreateWithPriority");
    }
    return rc;
}

/* The library handles and the workspace of one execution stream. */
static int gpu_open_exec(weft_device_t *dev, weft_gpu_dev_t *g, int s)
{
    int rc = g->vendor->libs_open(dev, g->stream[s], &g->blas[s], &g->solver[s]);
    if (rc == WEFT_SUCCESS && g->workspace_bytes > 0)
        rc = weft_gpu__check(dev, g->vendor->mem_alloc(&g->workspace[s], g->workspace_bytes),
                             "Malloc (task workspace; see parameter device_workspace)");
    return rc;
}

/* Frees what gpu_open_streams/gpu_open_exec made, in reverse order;
 * tolerates a partial open. The device is current. */
static void gpu_teardown(weft_device_t *dev, weft_gpu_dev_t *g)
{
    const weft_gpu_vendor_t *v = g->vendor;
    for (int s = WEFT_MAX_STREAMS - 1; s >= 0; s--) {
        if (g->workspace[s] != NULL)
            (void)weft_gpu__check(dev, v->mem_free(g->workspace[s]), "Free (workspace)");
        v->libs_close(dev, g->blas[s], g->solver[s]);
        if (g->stream[s] != NULL)
            (void)weft_gpu__check(dev, v->stream_destroy(g->stream[s]), "StreamDestroy");
    }
}

static int gpu_open_ordinal(const weft_gpu_vendor_t *v, weft_device_t *dev, int index)
{
    int count = 0;
    int rc = weft_gpu_probe(v, &count);
    if (rc != WEFT_SUCCESS) return rc;
    if (index < 0 || index >= count) {
        weft_log(WEFT_LOG_ERROR, dev->index,
                 "%s: device %d asked for but %d visible (check device_%s_enabled and the "
                 "visible devices)",
                 v->name, index, count, v->name);
        return WEFT_ERR_NODEV;
    }
    return weft_gpu_check(v, dev, v->set_device(index), "SetDevice");
}

/* The streams, and per execution stream its handles and workspace. */
static int gpu_open_resources(weft_device_t *dev, weft_gpu_dev_t *g, int *nstreams_out)
{
    int urgent = 0;
    int nstreams = WEFT_STREAM_EXEC0 +
                   weft_device_exec_streams(dev->params, WEFT_GPU_EXEC_STREAMS_DEFAULT, &urgent);
    dev->urgent_stream = urgent ? nstreams : -1;
    nstreams += urgent;
    int rc = gpu_open_streams(dev, g, nstreams);
    for (int s = WEFT_STREAM_EXEC0; s < nstreams && rc == WEFT_SUCCESS; s++)
        rc = gpu_open_exec(dev, g, s);
    *nstreams_out = nstreams;
    return rc;
}

int weft_gpu_open(const weft_gpu_vendor_t *v, weft_device_t *dev, int index)
{
    int rc = gpu_open_ordinal(v, dev, index);
    if (rc != WEFT_SUCCESS) return rc;
    weft_gpu_dev_t *g = calloc(1, sizeof *g);
    if (g == NULL) return WEFT_ERR_NOMEM;
    g->vendor = v;
    g->ordinal = index;
    g->workspace_bytes = dev->workspace_bytes;
    weft_vec_init(&g->pool, sizeof(void *), 64);
    if (pthread_mutex_init(&g->pool_lock, NULL) != 0) {
        free(g);
        return WEFT_ERR_NOMEM;
    }
    dev->priv = g; /* the checks below log through it */
    int nstreams = 0;
    rc = gpu_open_resources(dev, g, &nstreams);
    if (rc != WEFT_SUCCESS) goto undo_resources;
    dev->nstreams = nstreams;
    dev->caps = WEFT_DEVCAP_IPC;
    if (v->time_sliced && v->time_sliced()) dev->caps |= WEFT_DEVCAP_TIME_SLICED;
    size_t nexec = (size_t)(nstreams - WEFT_STREAM_EXEC0);
    dev->headroom_bytes =
        v->headroom_context + nexec * (v->headroom_per_stream + g->workspace_bytes);
    weft_debug(dev->index, "%s: device %d open, %d execution streams, %zu B workspace each",
               v->name, index, (int)nexec, g->workspace_bytes);
    return WEFT_SUCCESS;

undo_resources:
    gpu_teardown(dev, g);
    pthread_mutex_destroy(&g->pool_lock);
    free(g);
    dev->priv = NULL;
    return rc;
}

void weft_gpu_close(weft_device_t *dev)
{
    weft_gpu_dev_t *g = weft_gpu__priv(dev);
    if (g == NULL) return;
    if (weft_gpu__use(dev) == WEFT_SUCCESS) {
        for (int s = 0; s < dev->nstreams; s++)
            (void)weft_gpu__check(dev, g->vendor->stream_sync(g->stream[s]),
                                  "StreamSynchronize (close)");
        weft_gpu__event_pool_drain(dev);
        gpu_teardown(dev, g);
    } else {
        /* A broken device (or one that cannot be made current): nothing
         * more is asked of its runtime; the driver takes the context's
         * streams, events and memory back when the process ends. */
        weft_vec_fini(&g->pool);
    }
    pthread_mutex_destroy(&g->pool_lock);
    free(g);
    dev->priv = NULL;
}

/* ---- peer access ----------------------------------------------------- */

int weft_gpu_can_access_peer(weft_device_t *dev, weft_device_t *peer)
{
    if (peer == NULL || peer->ops == NULL || peer->ops->type != dev->ops->type ||
        peer->priv == NULL)
        return 0;
    const weft_gpu_vendor_t *v = weft_gpu__vendor(dev);
    int me = weft_gpu__priv(dev)->ordinal, other = weft_gpu__priv(peer)->ordinal;
    if (me == other) return 1;
    int can = 0;
    if (weft_gpu__check(dev, v->peer_can(&can, me, other), "DeviceCanAccessPeer") != WEFT_SUCCESS ||
        !can)
        return 0;
    if (weft_gpu__use(dev) != WEFT_SUCCESS) return 0;
    int err = v->peer_enable(other);
    if (err != 0 && err == v->err_peer_enabled) {
        (void)v->last_error();
        err = 0;
    }
    if (weft_gpu__check(dev, err, "DeviceEnablePeerAccess") != WEFT_SUCCESS) return 0;
    weft_debug(dev->index, "%s: peer access %d -> %d enabled", v->name, me, other);
    return 1;
}

/* ---- launch ---------------------------------------------------------- */

int weft_gpu_launch(weft_device_t *dev, int stream, weft_device_kernel_fn kernel, void *arg)
{
    const weft_gpu_vendor_t *v = weft_gpu__vendor(dev);
    if (stream < WEFT_STREAM_EXEC0 || stream >= dev->nstreams) {
        weft_log(WEFT_LOG_ERROR, dev->index,
                 "%s launch: stream %d is not an execution stream [%d, %d)", v->name, stream,
                 WEFT_STREAM_EXEC0, dev->nstreams);
        return WEFT_ERR_INVALID;
    }
    weft_gpu_dev_t *g = weft_gpu__priv(dev);
    int rc = weft_gpu__use(dev);
    if (rc != WEFT_SUCCESS) return rc;
    weft_device_env_t env = {
        .device = dev->index,
        .stream = stream,
        .stream_handle = g->stream[stream],
        .blas = g->blas[stream],
        .solver = g->solver[stream],
        .workspace = g->workspace[stream],
        .workspace_bytes = g->workspace[stream] != NULL ? g->workspace_bytes : 0,
    };
    rc = kernel(&env, arg);
    int err = v->last_error(); /* a failed launch of the kernel's own work */
    if (err != 0 && weft_gpu__status_of(v, err) == WEFT_ERR_DEVICE)
        return weft_gpu_check(v, dev, err, "GetLastError (after a launch)"); /* broken now */
    if (err != 0) {
        weft_log(WEFT_LOG_ERROR, dev->index, "%s: a kernel on stream %d left an error: %s (%s)",
                 v->name, stream, v->error_string(err), v->error_name(err));
        return rc < 0 ? rc : WEFT_ERR_TASK;
    }
    return rc;
}

void *weft_gpu_stream_handle(weft_device_t *dev, int stream)
{
    if (stream < 0 || stream >= dev->nstreams) return NULL;
    return weft_gpu__priv(dev)->stream[stream];
}
