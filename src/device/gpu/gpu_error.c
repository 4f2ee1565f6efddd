/* GPU layer: vendor errors turned into weft statuses, the current device,
 * and pinning of host memory. */
#include <stdio.h>

#include "device/gpu/gpu_internal.h"
#include "util/log.h"

int weft_gpu__status_of(const weft_gpu_vendor_t *v, int err)
{
    for (const weft_gpu_errmap_t *m = v->errors; m->code != 0; m++)
        if (m->code == err) return m->status;
    return WEFT_ERR_INTERNAL;
}

int weft_gpu_check(const weft_gpu_vendor_t *v, const weft_device_t *dev, int err, const char *call)
{
    if (err == 0) return WEFT_SUCCESS;
    (void)v->last_error(); /* the failed call also left it as the last error */
    int status = weft_gpu__status_of(v, err);
    if (status == WEFT_ERR_DEVICE && dev != NULL) {
        /* A sticky error: every later call on the device fails alike;
         * weft stops calling it (weft_gpu__use refuses). */
        char why[256];
        snprintf(why, sizeof why, "%s%s reported %s (%s), a sticky error", v->name, call,
                 v->error_name(err), v->error_string(err));
        weft_device_set_broken((weft_device_t *)dev, why);
        return status;
    }
    if (dev != NULL && weft_device_is_broken(dev)) return WEFT_ERR_DEVICE; /* logged once */
    weft_log(WEFT_LOG_ERROR, dev ? dev->index : -1, "%s%s failed: %s (%s)", v->name, call,
             v->error_string(err), v->error_name(err));
    return status;
}

int weft_gpu__check_stream(const weft_device_t *dev, int stream, const char *op)
{
    if (stream >= 0 && stream < dev->nstreams) return WEFT_SUCCESS;
    weft_log(WEFT_LOG_ERROR, dev->index, "%s %s: stream %d out of range [0, %d)",
             weft_gpu__vendor(dev)->name, op, stream, dev->nstreams);
    return WEFT_ERR_INVALID;
}

/* Reading the current device is a thread-local read: cheaper than setting
 * it, and right even when foreign code (a task body, the application)
 * changed the current device since weft last set it. */
int weft_gpu__use(const weft_device_t *dev)
{
    int rc = weft_device_check_alive(dev, "a runtime call");
    if (rc != WEFT_SUCCESS) return rc;
    const weft_gpu_vendor_t *v = weft_gpu__vendor(dev);
    int ordinal = weft_gpu__priv(dev)->ordinal, current = -1;
    if (v->get_device(&current) == 0 && current == ordinal) return WEFT_SUCCESS;
    return weft_gpu__check(dev, v->set_device(ordinal), "SetDevice");
}

/* ---- pinned host memory --------------------------------------------- */

int weft_gpu_host_register(const weft_gpu_vendor_t *v, const char *fn, void *ptr, size_t bytes)
{
    if (ptr == NULL || bytes == 0) {
        weft_error("%s: NULL pointer or 0 bytes (%p, %zu)", fn, ptr, bytes);
        return WEFT_ERR_INVALID;
    }
    int err = v->host_register(ptr, bytes);
    if (err != 0 && err == v->err_host_registered) {
        (void)v->last_error();
        weft_warn("%s: [%p, +%zu) overlaps memory already pinned; register whole allocations "
                  "once (weft_%s_host_is_pinned tells)",
                  fn, ptr, bytes, v->name);
        return WEFT_ERR_INVALID;
    }
    return weft_gpu_check(v, NULL, err, "HostRegister");
}

int weft_gpu_host_unregister(const weft_gpu_vendor_t *v, const char *fn, void *ptr)
{
    int err = v->host_unregister(ptr);
    if (err != 0 && err == v->err_host_not_registered) {
        (void)v->last_error();
        weft_error("%s: %p was not registered (pass the pointer given to weft_%s_host_register)",
                   fn, ptr, v->name);
        return WEFT_ERR_INVALID;
    }
    return weft_gpu_check(v, NULL, err, "HostUnregister");
}

int weft_gpu_host_is_pinned(const weft_gpu_vendor_t *v, const void *ptr)
{
    int pinned = 0;
    if (ptr != NULL) v->host_is_pinned(ptr, &pinned);
    return pinned;
}

int weft_gpu_host_register_op(weft_device_t *dev, void *ptr, size_t bytes)
{
    int rc = weft_device_check_alive(dev, "host_register");
    if (rc != WEFT_SUCCESS) return rc;
    const weft_gpu_vendor_t *v = weft_gpu__vendor(dev);
    return weft_gpu_host_register(v, "host_register", ptr, bytes);
}

int weft_gpu_host_unregister_op(weft_device_t *dev, void *ptr)
{
    /* Through a dead context nothing is given back: the driver unpins the
     * memory at exit, and the memory may be freed meanwhile. */
    if (weft_device_is_broken(dev)) return WEFT_SUCCESS;
    return weft_gpu_host_unregister(weft_gpu__vendor(dev), "host_unregister", ptr);
}
