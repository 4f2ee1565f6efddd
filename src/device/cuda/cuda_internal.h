/* Private to the CUDA module (src/device/cuda/): its per-device state and
 * the helpers its files share. */
#ifndef WEFT_DEVICE_CUDA_CUDA_INTERNAL_H
#define WEFT_DEVICE_CUDA_CUDA_INTERNAL_H

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>
#include <pthread.h>

#include "device/cuda/cuda_device.h"

/* dev->priv of an open CUDA device. The stream, handle and workspace
 * arrays are indexed by weft stream number; handles and workspaces exist
 * for the execution streams only (NULL for IN and OUT). */
typedef struct weft_cuda_dev {
    int ordinal; /* CUDA device ordinal */
    cudaStream_t stream[WEFT_MAX_STREAMS];
    cublasHandle_t blas[WEFT_MAX_STREAMS];
    cusolverDnHandle_t solver[WEFT_MAX_STREAMS];
    void *workspace[WEFT_MAX_STREAMS];
    size_t workspace_bytes;

    /* Recycled events (cudaEventDisableTiming), so recording one costs no
     * cudaEventCreate in steady state. */
    pthread_mutex_t pool_lock;
    cudaEvent_t *pool;
    int npool, pool_cap;
    int nevents_out; /* recorded and not yet destroyed */
} weft_cuda_dev_t;

static inline weft_cuda_dev_t *weft_cuda_priv(const weft_device_t *dev)
{
    return (weft_cuda_dev_t *)dev->priv;
}

/* Makes dev's GPU current on the calling thread (if it is not already). */
int weft_cuda_use(const weft_device_t *dev) __attribute__((warn_unused_result));

/* 0 for success; otherwise logs "<call> failed: <message>" on dev (NULL:
 * no device) and returns the weft status of the error. The CUDA variant
 * also clears the thread's last (non-sticky) error. */
int weft_cuda_check(const weft_device_t *dev, cudaError_t err, const char *call);
int weft_cuda_check_blas(const weft_device_t *dev, cublasStatus_t st, const char *call);
int weft_cuda_check_solver(const weft_device_t *dev, cusolverStatus_t st, const char *call);

/* 0 when 0 <= stream < dev->nstreams, WEFT_ERR_INVALID after logging. */
int weft_cuda_check_stream(const weft_device_t *dev, int stream, const char *op);

/* The operations of cuda_copy.c. */
int weft_cuda_copy_async(weft_device_t *dev, int stream, weft_region_t dst, int dst_dev,
                         weft_region_t src, int src_dev, int rows, int cols, size_t elem);
int weft_cuda_event_record(weft_device_t *dev, int stream, weft_event_t *ev);
int weft_cuda_event_query(weft_device_t *dev, weft_event_t *ev);
int weft_cuda_event_sync(weft_device_t *dev, weft_event_t *ev);
void weft_cuda_event_destroy(weft_device_t *dev, weft_event_t *ev);
int weft_cuda_stream_wait(weft_device_t *dev, int stream, weft_event_t *ev);
/* Destroys the pooled events; called by close with the device current. */
void weft_cuda_event_pool_drain(weft_device_t *dev);
int weft_cuda_ipc_export(weft_device_t *dev, void *handle, size_t *handle_bytes);
int weft_cuda_ipc_import(weft_device_t *dev, const void *handle, size_t handle_bytes, void **base);
int weft_cuda_ipc_close(weft_device_t *dev, void *base);

#endif /* WEFT_DEVICE_CUDA_CUDA_INTERNAL_H */
