/* CUDA module: errors turned into weft statuses, the current device, and
 * pinning of host memory. */
#include <stdint.h>

#include "device/cuda/cuda_internal.h"
#include "util/log.h"

static int cuda_dev_index(const weft_device_t *dev) { return dev ? dev->index : -1; }

static int cuda_status_of(cudaError_t err)
{
    switch (err) {
    case cudaErrorMemoryAllocation:
        return WEFT_ERR_DEVMEM;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInvalidDevice:
    case cudaErrorDevicesUnavailable:
        return WEFT_ERR_NODEV;
    case cudaErrorInvalidValue:
    case cudaErrorInvalidDevicePointer:
    case cudaErrorInvalidPitchValue:
    case cudaErrorInvalidMemcpyDirection:
        return WEFT_ERR_INVALID;
    default:
        return WEFT_ERR_INTERNAL;
    }
}

int weft_cuda_check(const weft_device_t *dev, cudaError_t err, const char *call)
{
    if (err == cudaSuccess) return WEFT_SUCCESS;
    (void)cudaGetLastError(); /* the failed call also left it as the last error */
    weft_log(WEFT_LOG_ERROR, cuda_dev_index(dev), "%s failed: %s (%s)", call,
             cudaGetErrorString(err), cudaGetErrorName(err));
    return cuda_status_of(err);
}

int weft_cuda_check_blas(const weft_device_t *dev, cublasStatus_t st, const char *call)
{
    if (st == CUBLAS_STATUS_SUCCESS) return WEFT_SUCCESS;
    weft_log(WEFT_LOG_ERROR, cuda_dev_index(dev), "%s failed: %s (%s)", call,
             cublasGetStatusString(st), cublasGetStatusName(st));
    if (st == CUBLAS_STATUS_ALLOC_FAILED) return WEFT_ERR_DEVMEM;
    return st == CUBLAS_STATUS_INVALID_VALUE ? WEFT_ERR_INVALID : WEFT_ERR_INTERNAL;
}

static const char *cuda_solver_message(cusolverStatus_t st)
{
    switch (st) {
    case CUSOLVER_STATUS_NOT_INITIALIZED:
        return "the cuSOLVER library was not initialized";
    case CUSOLVER_STATUS_ALLOC_FAILED:
        return "resource allocation failed";
    case CUSOLVER_STATUS_INVALID_VALUE:
        return "an unsupported value or parameter was passed";
    case CUSOLVER_STATUS_ARCH_MISMATCH:
        return "the device does not support this operation";
    case CUSOLVER_STATUS_EXECUTION_FAILED:
        return "the GPU program failed to execute";
    case CUSOLVER_STATUS_INTERNAL_ERROR:
        return "an internal cuSOLVER operation failed";
    case CUSOLVER_STATUS_NOT_SUPPORTED:
        return "not supported";
    case CUSOLVER_STATUS_INVALID_WORKSPACE:
        return "invalid workspace";
    default:
        return "cuSOLVER error";
    }
}

int weft_cuda_check_solver(const weft_device_t *dev, cusolverStatus_t st, const char *call)
{
    if (st == CUSOLVER_STATUS_SUCCESS) return WEFT_SUCCESS;
    weft_log(WEFT_LOG_ERROR, cuda_dev_index(dev), "%s failed: %s (cusolverStatus_t %d)", call,
             cuda_solver_message(st), (int)st);
    if (st == CUSOLVER_STATUS_ALLOC_FAILED) return WEFT_ERR_DEVMEM;
    return st == CUSOLVER_STATUS_INVALID_VALUE ? WEFT_ERR_INVALID : WEFT_ERR_INTERNAL;
}

int weft_cuda_check_stream(const weft_device_t *dev, int stream, const char *op)
{
    if (stream >= 0 && stream < dev->nstreams) return WEFT_SUCCESS;
    weft_log(WEFT_LOG_ERROR, dev->index, "cuda %s: stream %d out of range [0, %d)", op, stream,
             dev->nstreams);
    return WEFT_ERR_INVALID;
}

/* cudaGetDevice reads a thread-local value: cheaper than cudaSetDevice, and
 * right even when foreign code (a task body, the application) changed the
 * current device since weft last set it. */
int weft_cuda_use(const weft_device_t *dev)
{
    int ordinal = weft_cuda_priv(dev)->ordinal, current = -1;
    if (cudaGetDevice(&current) == cudaSuccess && current == ordinal) return WEFT_SUCCESS;
    return weft_cuda_check(dev, cudaSetDevice(ordinal), "cudaSetDevice");
}

/* ---- pinned host memory --------------------------------------------- */

int weft_cuda_host_register(void *ptr, size_t bytes)
{
    if (ptr == NULL || bytes == 0) {
        weft_error("weft_cuda_host_register: NULL pointer or 0 bytes (%p, %zu)", ptr, bytes);
        return WEFT_ERR_INVALID;
    }
    cudaError_t err = cudaHostRegister(ptr, bytes, cudaHostRegisterPortable);
    if (err == cudaErrorHostMemoryAlreadyRegistered) {
        (void)cudaGetLastError();
        weft_warn("weft_cuda_host_register: [%p, +%zu) overlaps memory already pinned; "
                  "register whole allocations once (weft_cuda_host_is_pinned tells)",
                  ptr, bytes);
        return WEFT_ERR_INVALID;
    }
    return weft_cuda_check(NULL, err, "cudaHostRegister");
}

int weft_cuda_host_unregister(void *ptr)
{
    cudaError_t err = cudaHostUnregister(ptr);
    if (err == cudaErrorHostMemoryNotRegistered) {
        (void)cudaGetLastError();
        weft_error("weft_cuda_host_unregister: %p was not registered "
                   "(pass the pointer given to weft_cuda_host_register)",
                   ptr);
        return WEFT_ERR_INVALID;
    }
    return weft_cuda_check(NULL, err, "cudaHostUnregister");
}

int weft_cuda_host_is_pinned(const void *ptr)
{
    struct cudaPointerAttributes attr;
    if (ptr == NULL || cudaPointerGetAttributes(&attr, ptr) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return attr.type == cudaMemoryTypeHost;
}
