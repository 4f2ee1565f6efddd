/* GPU layer: asynchronous 2D and peer copies, pooled events, IPC of the
 * zone. */
#include <stdlib.h>
#include <string.h>

#include "device/gpu/gpu_internal.h"
#include "util/log.h"

/* ---- copies ---------------------------------------------------------- */

static int gpu_copy_args_ok(const weft_device_t *dev, weft_region_t dst, weft_region_t src,
                            int rows, int cols, size_t elem)
{
    if (dst.ptr != NULL && src.ptr != NULL && rows > 0 && cols > 0 && elem > 0 && dst.ld >= rows &&
        src.ld >= rows)
        return 1;
    weft_log(WEFT_LOG_ERROR, dev->index,
             "%s copy_async: bad region (dst %p ld %lld, src %p ld %lld, %d x %d of %zu B): "
             "pointers must be set, rows, cols, elem > 0 and ld >= rows",
             weft_gpu__vendor(dev)->name, dst.ptr, (long long)dst.ld, src.ptr, (long long)src.ld,
             rows, cols, elem);
    return 0;
}

/* With unified addressing the runtime tells host, device and peer memory
 * apart by address, so one kind of call covers H2D, D2H, D2D on one device
 * and strided peer D2D (direct when peer access is enabled); a contiguous
 * copy between two GPUs goes through the vendor's peer copy. Pageable host
 * memory makes the copy synchronous for the host side, which is correct,
 * only slower. */
int weft_gpu_copy_async(weft_device_t *dev, int stream, weft_region_t dst, int dst_dev,
                        weft_region_t src, int src_dev, int rows, int cols, size_t elem)
{
    if (!gpu_copy_args_ok(dev, dst, src, rows, cols, elem)) return WEFT_ERR_INVALID;
    int rc = weft_gpu__check_stream(dev, stream, "copy_async");
    if (rc == WEFT_SUCCESS) rc = weft_gpu__use(dev);
    if (rc != WEFT_SUCCESS) return rc;
    const weft_gpu_vendor_t *v = weft_gpu__vendor(dev);
    void *s = weft_gpu__priv(dev)->stream[stream];
    size_t width = (size_t)rows * elem;
    if (dst.ld == rows && src.ld == rows) {
        size_t bytes = width * (size_t)cols;
        if (dst_dev > 0 && src_dev > 0 && dst_dev != src_dev)
            return weft_gpu__check(dev, v->copy_peer(dst.ptr, src.ptr, bytes, s),
                                   "MemcpyAsync (peer)");
        return weft_gpu__check(dev, v->copy_1d(dst.ptr, src.ptr, bytes, s), "MemcpyAsync");
    }
    return weft_gpu__check(dev,
                           v->copy_2d(dst.ptr, (size_t)dst.ld * elem, src.ptr,
                                      (size_t)src.ld * elem, width, (size_t)cols, s),
                           "Memcpy2DAsync");
}

/* ---- events ---------------------------------------------------------- */

/* An event from the pool, or a new one. The device is current. */
static int gpu_event_get(weft_device_t *dev, void **out)
{
    weft_gpu_dev_t *g = weft_gpu__priv(dev);
    void *e = NULL;
    pthread_mutex_lock(&g->pool_lock);
    if (g->pool.n > 0) e = *(void **)weft_vec_at(&g->pool, --g->pool.n);
    g->nevents_out++;
    pthread_mutex_unlock(&g->pool_lock);
    int rc = WEFT_SUCCESS;
    if (e == NULL) rc = weft_gpu__check(dev, g->vendor->event_create(&e), "EventCreateWithFlags");
    if (rc == WEFT_SUCCESS) {
        *out = e;
        return rc;
    }
    pthread_mutex_lock(&g->pool_lock);
    g->nevents_out--;
    pthread_mutex_unlock(&g->pool_lock);
    return rc;
}

/* Back to the pool; destroyed when the pool cannot grow. */
static void gpu_event_put(weft_device_t *dev, void *e)
{
    weft_gpu_dev_t *g = weft_gpu__priv(dev);
    pthread_mutex_lock(&g->pool_lock);
    g->nevents_out--;
    if (weft_vec_push(&g->pool, &e) == WEFT_SUCCESS) e = NULL;
    pthread_mutex_unlock(&g->pool_lock);
    if (e != NULL) (void)weft_gpu__check(dev, g->vendor->event_destroy(e), "EventDestroy");
}

void weft_gpu__event_pool_drain(weft_device_t *dev)
{
    weft_gpu_dev_t *g = weft_gpu__priv(dev);
    pthread_mutex_lock(&g->pool_lock);
    for (size_t i = 0; i < g->pool.n; i++) {
        void *e = *(void **)weft_vec_at(&g->pool, i);
        (void)weft_gpu__check(dev, g->vendor->event_destroy(e), "EventDestroy");
    }
    weft_vec_fini(&g->pool);
    if (g->nevents_out != 0)
        weft_log(WEFT_LOG_WARN, dev->index, "%s close: %d events recorded and never destroyed",
                 g->vendor->name, g->nevents_out);
    pthread_mutex_unlock(&g->pool_lock);
}

int weft_gpu_event_record(weft_device_t *dev, int stream, weft_event_t *ev)
{
    int rc = weft_gpu__check_stream(dev, stream, "event_record");
    if (rc == WEFT_SUCCESS) rc = weft_gpu__use(dev); /* a broken device: no call at all */
    if (rc != WEFT_SUCCESS) return rc;
    void *e = NULL;
    rc = gpu_event_get(dev, &e);
    weft_gpu_dev_t *g = weft_gpu__priv(dev);
    if (rc == WEFT_SUCCESS) {
        rc = weft_gpu__check(dev, g->vendor->event_record(e, g->stream[stream]), "EventRecord");
        if (rc != WEFT_SUCCESS) gpu_event_put(dev, e);
    }
    if (rc != WEFT_SUCCESS) {
        /* The caller gives back what the stream's work used (device.h):
         * that work must be over (a failed EventCreate leaves the device
         * well and the copies running). A context the failure killed
         * runs nothing more. */
        if (!weft_device_is_broken(dev))
            (void)weft_gpu__check(dev, g->vendor->stream_sync(g->stream[stream]),
                                  "StreamSynchronize (after a failed event record)");
        return rc;
    }
    ev->handle = e;
    ev->ticket = 0;
    return WEFT_SUCCESS;
}

/* Query and sync make the device current too: a runtime call on a thread
 * with no current device would otherwise create a context on device 0. */
int weft_gpu_event_query(weft_device_t *dev, weft_event_t *ev)
{
    int rc = weft_gpu__use(dev);
    if (rc != WEFT_SUCCESS) return rc;
    const weft_gpu_vendor_t *v = weft_gpu__vendor(dev);
    int err = v->event_query(ev->handle);
    if (err != 0 && err == v->err_not_ready) return WEFT_AGAIN;
    return weft_gpu__check(dev, err, "EventQuery");
}

int weft_gpu_event_sync(weft_device_t *dev, weft_event_t *ev)
{
    int rc = weft_gpu__use(dev);
    if (rc != WEFT_SUCCESS) return rc;
    return weft_gpu__check(dev, weft_gpu__vendor(dev)->event_sync(ev->handle), "EventSynchronize");
}

/* The wait takes the event as last recorded: recycling it through the
 * pool afterwards does not change what the stream waits for. */
int weft_gpu_stream_wait(weft_device_t *dev, int stream, weft_event_t *ev)
{
    int rc = weft_gpu__check_stream(dev, stream, "stream_wait");
    if (rc == WEFT_SUCCESS) rc = weft_gpu__use(dev);
    if (rc != WEFT_SUCCESS) return rc;
    weft_gpu_dev_t *g = weft_gpu__priv(dev);
    return weft_gpu__check(dev, g->vendor->stream_wait_event(g->stream[stream], ev->handle),
                           "StreamWaitEvent");
}

void weft_gpu_event_destroy(weft_device_t *dev, weft_event_t *ev)
{
    if (ev->handle == NULL) return;
    gpu_event_put(dev, ev->handle);
    ev->handle = NULL;
}

/* ---- IPC ------------------------------------------------------------- */

int weft_gpu_ipc_export(weft_device_t *dev, void *handle, size_t *handle_bytes)
{
    const weft_gpu_vendor_t *v = weft_gpu__vendor(dev);
    if (dev->zone_base == NULL) {
        weft_log(WEFT_LOG_ERROR, dev->index, "%s ipc_export: the device has no zone yet", v->name);
        return WEFT_ERR_INVALID;
    }
    unsigned char h[WEFT_IPC_HANDLE_MAX];
    int rc = weft_gpu__use(dev);
    if (rc == WEFT_SUCCESS)
        rc = weft_gpu__check(dev, v->ipc_get(h, dev->zone_base), "IpcGetMemHandle");
    if (rc != WEFT_SUCCESS) return rc;
    memcpy(handle, h, v->ipc_handle_bytes);
    *handle_bytes = v->ipc_handle_bytes;
    return WEFT_SUCCESS;
}

int weft_gpu_ipc_import(weft_device_t *dev, const void *handle, size_t handle_bytes, void **base)
{
    const weft_gpu_vendor_t *v = weft_gpu__vendor(dev);
    if (handle_bytes != v->ipc_handle_bytes) {
        weft_log(WEFT_LOG_ERROR, dev->index,
                 "%s ipc_import: a handle of %zu bytes, a %s IPC handle has %zu "
                 "(was it exported by another device type?)",
                 v->name, handle_bytes, v->name, v->ipc_handle_bytes);
        return WEFT_ERR_INVALID;
    }
    void *p = NULL;
    int rc = weft_gpu__use(dev);
    if (rc == WEFT_SUCCESS) rc = weft_gpu__check(dev, v->ipc_open(&p, handle), "IpcOpenMemHandle");
    if (rc == WEFT_SUCCESS) *base = p;
    return rc;
}

int weft_gpu_ipc_close(weft_device_t *dev, void *base)
{
    int rc = weft_gpu__use(dev);
    if (rc == WEFT_SUCCESS)
        rc = weft_gpu__check(dev, weft_gpu__vendor(dev)->ipc_close(base), "IpcCloseMemHandle");
    return rc;
}
