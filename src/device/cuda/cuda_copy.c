/* CUDA module: asynchronous 2D copies, pooled events, IPC of the zone. */
#include <stdlib.h>
#include <string.h>

#include "device/cuda/cuda_internal.h"
#include "util/log.h"

_Static_assert(sizeof(cudaIpcMemHandle_t) <= WEFT_IPC_HANDLE_MAX,
               "a cudaIpcMemHandle_t must fit in WEFT_IPC_HANDLE_MAX");
_Static_assert(sizeof(cudaEvent_t) <= sizeof(void *), "a cudaEvent_t must fit a pointer");

/* ---- copies ---------------------------------------------------------- */

static int cuda_copy_args_ok(const weft_device_t *dev, weft_region_t dst, weft_region_t src,
                             int rows, int cols, size_t elem)
{
    if (dst.ptr != NULL && src.ptr != NULL && rows > 0 && cols > 0 && elem > 0 && dst.ld >= rows &&
        src.ld >= rows)
        return 1;
    weft_log(WEFT_LOG_ERROR, dev->index,
             "cuda copy_async: bad region (dst %p ld %lld, src %p ld %lld, %d x %d of %zu B): "
             "pointers must be set, rows, cols, elem > 0 and ld >= rows",
             dst.ptr, (long long)dst.ld, src.ptr, (long long)src.ld, rows, cols, elem);
    return 0;
}

/* With unified addressing (every 64-bit platform CUDA supports) the
 * runtime tells host, device and peer memory apart by address, so one
 * cudaMemcpyDefault call covers H2D, D2H, D2D on one device and peer D2D
 * (direct when peer access is enabled). Pageable host memory makes the
 * copy synchronous for the host side, which is correct, only slower. */
int weft_cuda_copy_async(weft_device_t *dev, int stream, weft_region_t dst, int dst_dev,
                         weft_region_t src, int src_dev, int rows, int cols, size_t elem)
{
    (void)dst_dev;
    (void)src_dev;
    if (!cuda_copy_args_ok(dev, dst, src, rows, cols, elem)) return WEFT_ERR_INVALID;
    int rc = weft_cuda_check_stream(dev, stream, "copy_async");
    if (rc == WEFT_SUCCESS) rc = weft_cuda_use(dev);
    if (rc != WEFT_SUCCESS) return rc;
    cudaStream_t s = weft_cuda_priv(dev)->stream[stream];
    size_t width = (size_t)rows * elem;
    if (dst.ld == rows && src.ld == rows)
        return weft_cuda_check(
            dev, cudaMemcpyAsync(dst.ptr, src.ptr, width * (size_t)cols, cudaMemcpyDefault, s),
            "cudaMemcpyAsync");
    return weft_cuda_check(dev,
                           cudaMemcpy2DAsync(dst.ptr, (size_t)dst.ld * elem, src.ptr,
                                             (size_t)src.ld * elem, width, (size_t)cols,
                                             cudaMemcpyDefault, s),
                           "cudaMemcpy2DAsync");
}

/* ---- events ---------------------------------------------------------- */

/* An event from the pool, or a new one. The device is current. */
static int cuda_event_get(weft_device_t *dev, cudaEvent_t *out)
{
    weft_cuda_dev_t *c = weft_cuda_priv(dev);
    cudaEvent_t e = NULL;
    pthread_mutex_lock(&c->pool_lock);
    if (c->npool > 0) e = c->pool[--c->npool];
    c->nevents_out++;
    pthread_mutex_unlock(&c->pool_lock);
    int rc = WEFT_SUCCESS;
    if (e == NULL)
        rc = weft_cuda_check(dev, cudaEventCreateWithFlags(&e, cudaEventDisableTiming),
                             "cudaEventCreateWithFlags");
    if (rc == WEFT_SUCCESS) {
        *out = e;
        return rc;
    }
    pthread_mutex_lock(&c->pool_lock);
    c->nevents_out--;
    pthread_mutex_unlock(&c->pool_lock);
    return rc;
}

/* Back to the pool; destroyed when the pool cannot grow. */
static void cuda_event_put(weft_device_t *dev, cudaEvent_t e)
{
    weft_cuda_dev_t *c = weft_cuda_priv(dev);
    pthread_mutex_lock(&c->pool_lock);
    c->nevents_out--;
    if (c->npool == c->pool_cap) {
        int cap = c->pool_cap ? 2 * c->pool_cap : 64;
        cudaEvent_t *p = realloc(c->pool, (size_t)cap * sizeof *p);
        if (p != NULL) {
            c->pool = p;
            c->pool_cap = cap;
        }
    }
    if (c->npool < c->pool_cap) {
        c->pool[c->npool++] = e;
        e = NULL;
    }
    pthread_mutex_unlock(&c->pool_lock);
    if (e != NULL) (void)weft_cuda_check(dev, cudaEventDestroy(e), "cudaEventDestroy");
}

void weft_cuda_event_pool_drain(weft_device_t *dev)
{
    weft_cuda_dev_t *c = weft_cuda_priv(dev);
    pthread_mutex_lock(&c->pool_lock);
    for (int i = 0; i < c->npool; i++)
        (void)weft_cuda_check(dev, cudaEventDestroy(c->pool[i]), "cudaEventDestroy");
    free(c->pool);
    c->pool = NULL;
    c->npool = c->pool_cap = 0;
    if (c->nevents_out != 0)
        weft_log(WEFT_LOG_WARN, dev->index, "cuda close: %d events recorded and never destroyed",
                 c->nevents_out);
    pthread_mutex_unlock(&c->pool_lock);
}

int weft_cuda_event_record(weft_device_t *dev, int stream, weft_event_t *ev)
{
    int rc = weft_cuda_check_stream(dev, stream, "event_record");
    if (rc == WEFT_SUCCESS) rc = weft_cuda_use(dev);
    cudaEvent_t e = NULL;
    if (rc == WEFT_SUCCESS) rc = cuda_event_get(dev, &e);
    if (rc != WEFT_SUCCESS) return rc;
    rc = weft_cuda_check(dev, cudaEventRecord(e, weft_cuda_priv(dev)->stream[stream]),
                         "cudaEventRecord");
    if (rc != WEFT_SUCCESS) {
        cuda_event_put(dev, e);
        return rc;
    }
    ev->handle = (void *)e;
    ev->ticket = 0;
    return WEFT_SUCCESS;
}

/* Query and sync make the device current too: a runtime call on a thread
 * with no current device would otherwise create a context on device 0. */
int weft_cuda_event_query(weft_device_t *dev, weft_event_t *ev)
{
    int rc = weft_cuda_use(dev);
    if (rc != WEFT_SUCCESS) return rc;
    cudaError_t err = cudaEventQuery((cudaEvent_t)ev->handle);
    if (err == cudaErrorNotReady) return WEFT_AGAIN;
    return weft_cuda_check(dev, err, "cudaEventQuery");
}

int weft_cuda_event_sync(weft_device_t *dev, weft_event_t *ev)
{
    int rc = weft_cuda_use(dev);
    if (rc != WEFT_SUCCESS) return rc;
    return weft_cuda_check(dev, cudaEventSynchronize((cudaEvent_t)ev->handle),
                           "cudaEventSynchronize");
}

/* The wait takes the event as last recorded: recycling it through the
 * pool afterwards does not change what the stream waits for. */
int weft_cuda_stream_wait(weft_device_t *dev, int stream, weft_event_t *ev)
{
    int rc = weft_cuda_check_stream(dev, stream, "stream_wait");
    if (rc == WEFT_SUCCESS) rc = weft_cuda_use(dev);
    if (rc != WEFT_SUCCESS) return rc;
    return weft_cuda_check(
        dev, cudaStreamWaitEvent(weft_cuda_priv(dev)->stream[stream], (cudaEvent_t)ev->handle, 0),
        "cudaStreamWaitEvent");
}

void weft_cuda_event_destroy(weft_device_t *dev, weft_event_t *ev)
{
    if (ev->handle == NULL) return;
    cuda_event_put(dev, (cudaEvent_t)ev->handle);
    ev->handle = NULL;
}

/* ---- IPC ------------------------------------------------------------- */

int weft_cuda_ipc_export(weft_device_t *dev, void *handle, size_t *handle_bytes)
{
    if (dev->zone_base == NULL) {
        weft_log(WEFT_LOG_ERROR, dev->index, "cuda ipc_export: the device has no zone yet");
        return WEFT_ERR_INVALID;
    }
    cudaIpcMemHandle_t h;
    int rc = weft_cuda_use(dev);
    if (rc == WEFT_SUCCESS)
        rc = weft_cuda_check(dev, cudaIpcGetMemHandle(&h, dev->zone_base), "cudaIpcGetMemHandle");
    if (rc != WEFT_SUCCESS) return rc;
    memcpy(handle, &h, sizeof h);
    *handle_bytes = sizeof h;
    return WEFT_SUCCESS;
}

int weft_cuda_ipc_import(weft_device_t *dev, const void *handle, size_t handle_bytes, void **base)
{
    cudaIpcMemHandle_t h;
    if (handle_bytes != sizeof h) {
        weft_log(WEFT_LOG_ERROR, dev->index,
                 "cuda ipc_import: a handle of %zu bytes, a CUDA IPC handle has %zu "
                 "(was it exported by another device type?)",
                 handle_bytes, sizeof h);
        return WEFT_ERR_INVALID;
    }
    memcpy(&h, handle, sizeof h);
    void *p = NULL;
    int rc = weft_cuda_use(dev);
    if (rc == WEFT_SUCCESS)
        rc = weft_cuda_check(dev, cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess),
                             "cudaIpcOpenMemHandle");
    if (rc == WEFT_SUCCESS) *base = p;
    return rc;
}

int weft_cuda_ipc_close(weft_device_t *dev, void *base)
{
    int rc = weft_cuda_use(dev);
    if (rc == WEFT_SUCCESS)
        rc = weft_cuda_check(dev, cudaIpcCloseMemHandle(base), "cudaIpcCloseMemHandle");
    return rc;
}
