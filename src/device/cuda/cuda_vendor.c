/* CUDA module: the CUDA runtime behind the GPU layer's vendor table (one
 * wrapper a call), the operations table, and the module's public calls for
 * pinned host memory. cuBLAS and cuSOLVER are in cuda_libs.c. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "device/cuda/cuda_device.h"
#include "device/cuda/cuda_libs.h"
#include "device/gpu/gpu.h"
#include "util/log.h"

_Static_assert(sizeof(cudaIpcMemHandle_t) <= WEFT_IPC_HANDLE_MAX,
               "a cudaIpcMemHandle_t must fit in WEFT_IPC_HANDLE_MAX");
_Static_assert(sizeof(cudaEvent_t) <= sizeof(void *), "a cudaEvent_t must fit a pointer");

/* ---- the runtime, one call each ---------------------------------------- */

static const char *cu_error_name(int err) { return cudaGetErrorName((cudaError_t)err); }
static const char *cu_error_string(int err) { return cudaGetErrorString((cudaError_t)err); }
static int cu_last_error(void) { return (int)cudaGetLastError(); }

/* No device, or no driver for one, is a machine without CUDA GPUs. */
static int cu_device_count(int *count)
{
    cudaError_t err = cudaGetDeviceCount(count);
    if (err != cudaErrorNoDevice && err != cudaErrorInsufficientDriver) return (int)err;
    (void)cudaGetLastError();
    weft_debug(-1, "cuda: no device (%s)", cudaGetErrorString(err));
    *count = 0;
    return 0;
}

static int cu_set_device(int ordinal) { return (int)cudaSetDevice(ordinal); }
static int cu_get_device(int *ordinal) { return (int)cudaGetDevice(ordinal); }
static int cu_mem_info(size_t *f, size_t *t) { return (int)cudaMemGetInfo(f, t); }

static int cu_uuid(int ordinal, unsigned char uuid[16])
{
    struct cudaDeviceProp prop;
    cudaError_t err = cudaGetDeviceProperties(&prop, ordinal);
    if (err == cudaSuccess) memcpy(uuid, prop.uuid.bytes, 16);
    return (int)err;
}

static int cu_mem_alloc(void **p, size_t bytes) { return (int)cudaMalloc(p, bytes); }
static int cu_mem_free(void *p) { return (int)cudaFree(p); }

static int cu_stream_priorities(int *least, int *greatest)
{
    return (int)cudaDeviceGetStreamPriorityRange(least, greatest);
}

static int cu_stream_create(void **s, int prio)
{
    return (int)cudaStreamCreateWithPriority((cudaStream_t *)s, cudaStreamNonBlocking, prio);
}

static int cu_stream_destroy(void *s) { return (int)cudaStreamDestroy(s); }
static int cu_stream_sync(void *s) { return (int)cudaStreamSynchronize(s); }
static int cu_stream_wait(void *s, void *e) { return (int)cudaStreamWaitEvent(s, e, 0); }

static int cu_event_create(void **e)
{
    return (int)cudaEventCreateWithFlags((cudaEvent_t *)e, cudaEventDisableTiming);
}

static int cu_event_destroy(void *e) { return (int)cudaEventDestroy(e); }
static int cu_event_record(void *e, void *s) { return (int)cudaEventRecord(e, s); }
static int cu_event_query(void *e) { return (int)cudaEventQuery(e); }
static int cu_event_sync(void *e) { return (int)cudaEventSynchronize(e); }

static int cu_copy_1d(void *dst, const void *src, size_t bytes, void *s)
{
    return (int)cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s);
}

static int cu_copy_2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                      size_t rows, void *s)
{
    return (int)cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, rows, cudaMemcpyDefault, s);
}

static int cu_peer_can(int *can, int me, int other)
{
    return (int)cudaDeviceCanAccessPeer(can, me, other);
}

static int cu_peer_enable(int other) { return (int)cudaDeviceEnablePeerAccess(other, 0); }

static int cu_ipc_get(void *handle, void *base)
{
    return (int)cudaIpcGetMemHandle((cudaIpcMemHandle_t *)handle, base);
}

static int cu_ipc_open(void **base, const void *handle)
{
    cudaIpcMemHandle_t h;
    memcpy(&h, handle, sizeof h);
    return (int)cudaIpcOpenMemHandle(base, h, cudaIpcMemLazyEnablePeerAccess);
}

static int cu_ipc_close(void *base) { return (int)cudaIpcCloseMemHandle(base); }

static int cu_host_register(void *p, size_t bytes)
{
    return (int)cudaHostRegister(p, bytes, cudaHostRegisterPortable);
}

static int cu_host_unregister(void *p) { return (int)cudaHostUnregister(p); }

/* Kernels of different processes run side by side on one GPU only through
 * MPS, which the CUDA library joins when the control daemon's pipe (a FIFO
 * or a socket, by version) is in CUDA_MPS_PIPE_DIRECTORY (default
 * /tmp/nvidia-mps); without it the GPU switches between the processes'
 * contexts. */
static int cu_time_sliced(void)
{
    const char *dir = getenv("CUDA_MPS_PIPE_DIRECTORY");
    char path[4096];
    snprintf(path, sizeof path, "%s/control", dir && *dir ? dir : "/tmp/nvidia-mps");
    struct stat st;
    return stat(path, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
}

static void cu_host_is_pinned(const void *ptr, int *pinned)
{
    struct cudaPointerAttributes attr;
    if (cudaPointerGetAttributes(&attr, ptr) != cudaSuccess) {
        (void)cudaGetLastError();
        return;
    }
    *pinned = attr.type == cudaMemoryTypeHost;
}

/* ---- the vendor table -------------------------------------------------- */

static const weft_gpu_errmap_t cu_errors[] = {
    {cudaErrorMemoryAllocation, WEFT_ERR_DEVMEM},
    {cudaErrorNoDevice, WEFT_ERR_NODEV},
    {cudaErrorInsufficientDriver, WEFT_ERR_NODEV},
    {cudaErrorInvalidDevice, WEFT_ERR_NODEV},
    {cudaErrorDevicesUnavailable, WEFT_ERR_NODEV},
    {cudaErrorInvalidValue, WEFT_ERR_INVALID},
    {cudaErrorInvalidDevicePointer, WEFT_ERR_INVALID},
    {cudaErrorInvalidPitchValue, WEFT_ERR_INVALID},
    {cudaErrorInvalidMemcpyDirection, WEFT_ERR_INVALID},
    /* Sticky errors: a kernel faulted, and the context stays unusable
     * (every later call returns the error): the device is broken. */
    {cudaErrorIllegalAddress, WEFT_ERR_DEVICE},
    {cudaErrorLaunchFailure, WEFT_ERR_DEVICE},
    {cudaErrorHardwareStackError, WEFT_ERR_DEVICE},
    {cudaErrorIllegalInstruction, WEFT_ERR_DEVICE},
    {cudaErrorMisalignedAddress, WEFT_ERR_DEVICE},
    {cudaErrorInvalidAddressSpace, WEFT_ERR_DEVICE},
    {cudaErrorInvalidPc, WEFT_ERR_DEVICE},
    {cudaErrorAssert, WEFT_ERR_DEVICE},
    {cudaErrorLaunchTimeout, WEFT_ERR_DEVICE},
    {cudaErrorECCUncorrectable, WEFT_ERR_DEVICE},
    {0, 0},
};

/* Beside the zone, a rank's context grows and cuBLAS and cuSOLVER allocate
 * workspaces on first use, for each execution stream. */
static const weft_gpu_vendor_t cu_vendor = {
    .name = "cuda",
    .type = WEFT_DEV_CUDA,
    .headroom_context = (size_t)512 << 20,
    .headroom_per_stream = (size_t)32 << 20,
    .ipc_handle_bytes = sizeof(cudaIpcMemHandle_t),
    .err_not_ready = cudaErrorNotReady,
    .err_peer_enabled = cudaErrorPeerAccessAlreadyEnabled,
    .err_host_registered = cudaErrorHostMemoryAlreadyRegistered,
    .err_host_not_registered = cudaErrorHostMemoryNotRegistered,
    .errors = cu_errors,
    .error_name = cu_error_name,
    .error_string = cu_error_string,
    .last_error = cu_last_error,
    .device_count = cu_device_count,
    .set_device = cu_set_device,
    .get_device = cu_get_device,
    .mem_info = cu_mem_info,
    .uuid = cu_uuid,
    .time_sliced = cu_time_sliced,
    .mem_alloc = cu_mem_alloc,
    .mem_free = cu_mem_free,
    .stream_priorities = cu_stream_priorities,
    .stream_create = cu_stream_create,
    .stream_destroy = cu_stream_destroy,
    .stream_sync = cu_stream_sync,
    .stream_wait_event = cu_stream_wait,
    .event_create = cu_event_create,
    .event_destroy = cu_event_destroy,
    .event_record = cu_event_record,
    .event_query = cu_event_query,
    .event_sync = cu_event_sync,
    .copy_1d = cu_copy_1d,
    .copy_2d = cu_copy_2d,
    .copy_peer = cu_copy_1d, /* unified addressing finds both GPUs */
    .peer_can = cu_peer_can,
    .peer_enable = cu_peer_enable,
    .ipc_get = cu_ipc_get,
    .ipc_open = cu_ipc_open,
    .ipc_close = cu_ipc_close,
    .host_register = cu_host_register,
    .host_unregister = cu_host_unregister,
    .host_is_pinned = cu_host_is_pinned,
    .libs_open = weft_cuda__libs_open,
    .libs_close = weft_cuda__libs_close,
};

/* ---- the module -------------------------------------------------------- */

static int cuda_probe(int *count) { return weft_gpu_probe(&cu_vendor, count); }
static int cuda_open(weft_device_t *dev, int index)
{
    return weft_gpu_open(&cu_vendor, dev, index);
}

int weft_cuda_host_register(void *ptr, size_t bytes)
{
    return weft_gpu_host_register(&cu_vendor, "weft_cuda_host_register", ptr, bytes);
}

int weft_cuda_host_unregister(void *ptr)
{
    return weft_gpu_host_unregister(&cu_vendor, "weft_cuda_host_unregister", ptr);
}

int weft_cuda_host_is_pinned(const void *ptr) { return weft_gpu_host_is_pinned(&cu_vendor, ptr); }

const weft_device_ops_t weft_cuda_ops = {
    .name = "cuda",
    .type = WEFT_DEV_CUDA,
    .probe = cuda_probe,
    .open = cuda_open,
    .close = weft_gpu_close,
    .mem_info = weft_gpu_mem_info,
    .identity = weft_gpu_identity,
    .mem_reserve = weft_gpu_mem_reserve,
    .mem_release = weft_gpu_mem_release,
    .mem_alloc_tile = weft_gpu_mem_reserve, /* a cudaMalloc either way */
    .mem_free_tile = weft_gpu_mem_release,
    .copy_async = weft_gpu_copy_async,
    .event_record = weft_gpu_event_record,
    .event_query = weft_gpu_event_query,
    .event_sync = weft_gpu_event_sync,
    .event_destroy = weft_gpu_event_destroy,
    .stream_wait = weft_gpu_stream_wait,
    .launch = weft_gpu_launch,
    .can_access_peer = weft_gpu_can_access_peer,
    .ipc_export = weft_gpu_ipc_export,
    .ipc_import = weft_gpu_ipc_import,
    .ipc_close = weft_gpu_ipc_close,
    .stream_handle = weft_gpu_stream_handle,
    .host_register = weft_gpu_host_register_op,
    .host_unregister = weft_gpu_host_unregister_op,
};
