/* Private to the GPU layer (src/device/gpu/): the state of an open GPU
 * device and the helpers its files share. */
#ifndef WEFT_DEVICE_GPU_GPU_INTERNAL_H
#define WEFT_DEVICE_GPU_GPU_INTERNAL_H

#include <pthread.h>

#include "device/gpu/gpu.h"
#include "util/vec.h"

/* dev->priv of an open GPU device. The stream, handle and workspace arrays
 * are indexed by weft stream number; handles and workspaces exist for the
 * execution streams only (NULL for the copy streams). */
typedef struct weft_gpu_dev {
    const weft_gpu_vendor_t *vendor;
    int ordinal; /* the vendor's device ordinal */
    void *stream[WEFT_MAX_STREAMS];
    void *blas[WEFT_MAX_STREAMS];
    void *solver[WEFT_MAX_STREAMS];
    void *workspace[WEFT_MAX_STREAMS];
    size_t workspace_bytes;

    /* Recycled events (no timing), so recording one costs no event
     * creation in steady state. */
    pthread_mutex_t pool_lock;
    weft_vec_t pool; /* idle events (void *), reused before making new ones */
    int nevents_out; /* recorded and not yet destroyed */
} weft_gpu_dev_t;

static inline weft_gpu_dev_t *weft_gpu__priv(const weft_device_t *dev)
{
    return (weft_gpu_dev_t *)dev->priv;
}

static inline const weft_gpu_vendor_t *weft_gpu__vendor(const weft_device_t *dev)
{
    return weft_gpu__priv(dev)->vendor;
}

/* weft_gpu_check on an open device. */
static inline int weft_gpu__check(const weft_device_t *dev, int err, const char *call)
{
    return err == 0 ? 0 : weft_gpu_check(weft_gpu__vendor(dev), dev, err, call);
}

/* The weft status of a vendor error code (the vendor's error map;
 * WEFT_ERR_DEVICE: a sticky error, the device is broken). */
int weft_gpu__status_of(const weft_gpu_vendor_t *v, int err);

/* Makes dev's GPU current on the calling thread (if it is not already). */
int weft_gpu__use(const weft_device_t *dev) __attribute__((warn_unused_result));

/* 0 when 0 <= stream < dev->nstreams, WEFT_ERR_INVALID after logging. */
int weft_gpu__check_stream(const weft_device_t *dev, int stream, const char *op);

/* Destroys the pooled events; called by close with the device current. */
void weft_gpu__event_pool_drain(weft_device_t *dev);

#endif /* WEFT_DEVICE_GPU_GPU_INTERNAL_H */
