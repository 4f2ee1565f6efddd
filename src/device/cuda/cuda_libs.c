/* CUDA module: the cuBLAS and cuSOLVER handles of each execution stream,
 * and their errors turned into weft statuses. */
#include "device/cuda/cuda_libs.h"

#include <cublas_v2.h>
#include <cusolverDn.h>

#include "util/log.h"

static int cuda_dev_index(const weft_device_t *dev) { return dev ? dev->index : -1; }

static int cuda_check_blas(const weft_device_t *dev, cublasStatus_t st, const char *call)
{
    if (st == CUBLAS_STATUS_SUCCESS) return WEFT_SUCCESS;
    weft_log(WEFT_LOG_ERROR, cuda_dev_index(dev), "%s failed: %s (%s)", call,
             cublasGetStatusString(st), cublasGetStatusName(st));
    if (st == CUBLAS_STATUS_ALLOC_FAILED) return WEFT_ERR_DEVMEM;
    return st == CUBLAS_STATUS_INVALID_VALUE ? WEFT_ERR_INVALID : WEFT_ERR_INTERNAL;
}

/* cuSOLVER has no status strings of its own. */
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

static int cuda_check_solver(const weft_device_t *dev, cusolverStatus_t st, const char *call)
{
    if (st == CUSOLVER_STATUS_SUCCESS) return WEFT_SUCCESS;
    weft_log(WEFT_LOG_ERROR, cuda_dev_index(dev), "%s failed: %s (cusolverStatus_t %d)", call,
             cuda_solver_message(st), (int)st);
    if (st == CUSOLVER_STATUS_ALLOC_FAILED) return WEFT_ERR_DEVMEM;
    return st == CUSOLVER_STATUS_INVALID_VALUE ? WEFT_ERR_INVALID : WEFT_ERR_INTERNAL;
}

int weft_cuda__libs_open(const weft_device_t *dev, void *stream, void **blas, void **solver)
{
    cublasHandle_t b = NULL;
    cusolverDnHandle_t s = NULL;
    int rc = cuda_check_blas(dev, cublasCreate(&b), "cublasCreate");
    if (rc == WEFT_SUCCESS) {
        *blas = b;
        rc = cuda_check_blas(dev, cublasSetStream(b, stream), "cublasSetStream");
    }
    if (rc == WEFT_SUCCESS) rc = cuda_check_solver(dev, cusolverDnCreate(&s), "cusolverDnCreate");
    if (rc == WEFT_SUCCESS) {
        *solver = s;
        rc = cuda_check_solver(dev, cusolverDnSetStream(s, stream), "cusolverDnSetStream");
    }
    return rc;
}

void weft_cuda__libs_close(const weft_device_t *dev, void *blas, void *solver)
{
    if (solver != NULL)
        (void)cuda_check_solver(dev, cusolverDnDestroy(solver), "cusolverDnDestroy");
    if (blas != NULL) (void)cuda_check_blas(dev, cublasDestroy(blas), "cublasDestroy");
}
