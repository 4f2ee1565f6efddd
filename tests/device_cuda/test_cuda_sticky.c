/*
 * A real sticky error on a CUDA device (docs/SEMANTICS.md section 3, "An
 * accelerator that fails"): a kernel launched through the module's launch
 * (cublasDscal on an address no allocation holds) faults with an illegal
 * address. Whichever call reports it first (the launch's check, the event
 * record or its wait) returns WEFT_ERR_DEVICE and marks the device broken;
 * every later operation then fails with WEFT_ERR_DEVICE without calling
 * the dead context, and close returns. The CUDA counterpart of the fake
 * vendor's check in tests/device_gpu/test_gpu_layer.c (test_sticky).
 * Exit 0 when every check passes, 1 at the first failure (printed), 77
 * (skipped) when no GPU is visible.
 */
#include <cublas_v2.h>
#include <stdint.h>
#include <stdio.h>

#include "device/cuda/cuda_device.h"
#include "device/gpu/gpu.h"

#include "../check.h"
#include "../device_gpu/smoke_util.h"

static const weft_device_ops_t *ops = &weft_cuda_ops;

/* Scales a megabyte at an address near 0: the kernel faults. */
static int bad_kernel(const weft_device_env_t *env, void *arg)
{
    (void)arg;
    const double alpha = 2.0;
    double *nowhere = (double *)(uintptr_t)0x100;
    return cublasDscal((cublasHandle_t)env->blas, 1 << 17, &alpha, nowhere, 1) ==
                   CUBLAS_STATUS_SUCCESS
               ? 0
               : WEFT_ERR_INTERNAL;
}

int main(void)
{
    int count = 0;
    REQUIRE(ops->probe(&count) == WEFT_SUCCESS);
    if (count == 0) {
        printf("test_cuda_sticky: SKIPPED: no CUDA GPU visible\n");
        return 77;
    }
    static weft_device_t dev;
    smoke_open(&dev, ops, 0, 0);
    int rc = ops->launch(&dev, WEFT_STREAM_EXEC0, bad_kernel, NULL);
    CHECK(rc == WEFT_SUCCESS || rc == WEFT_ERR_DEVICE);
    weft_event_t ev;
    if (rc == WEFT_SUCCESS) rc = ops->event_record(&dev, WEFT_STREAM_EXEC0, &ev);
    if (rc == WEFT_SUCCESS) {
        rc = ops->event_sync(&dev, &ev);
        ops->event_destroy(&dev, &ev);
    }
    CHECK(rc == WEFT_ERR_DEVICE);
    CHECK(weft_device_is_broken(&dev));
    double h[4] = {0};
    void *p = NULL;
    CHECK(ops->event_record(&dev, WEFT_STREAM_IN, &ev) == WEFT_ERR_DEVICE);
    CHECK(ops->copy_async(&dev, WEFT_STREAM_IN, region(h, 2), 0, region(h, 2), 0, 2, 2,
                          sizeof(double)) == WEFT_ERR_DEVICE);
    CHECK(ops->mem_reserve(&dev, 1 << 20, &p) == WEFT_ERR_DEVICE && p == NULL);
    CHECK(ops->launch(&dev, WEFT_STREAM_EXEC0, bad_kernel, NULL) == WEFT_ERR_DEVICE);
    ops->close(&dev);
    CHECK(dev.priv == NULL);
    return check_report("test_cuda_sticky");
}
