/* HIP module: the HIP runtime behind the GPU layer's vendor table (one
 * wrapper a call), the operations table, and the module's public calls for
 * pinned host memory. */
#include <hip/hip_runtime_api.h>
#include <string.h>

#include "device/gpu/gpu.h"
#include "device/hip/hip_device.h"
#include "util/log.h"

_Static_assert(sizeof(hipIpcMemHandle_t) <= WEFT_IPC_HANDLE_MAX,
               "a hipIpcMemHandle_t must fit in WEFT_IPC_HANDLE_MAX");
_Static_assert(sizeof(hipEvent_t) <= sizeof(void *), "a hipEvent_t must fit a pointer");

/* ---- the runtime, one call each ---------------------------------------- */

static const char *hp_error_name(int err) { return hipGetErrorName((hipError_t)err); }
static const char *hp_error_string(int err) { return hipGetErrorString((hipError_t)err); }
static int hp_last_error(void) { return (int)hipGetLastError(); }

/* No device, or no driver for one, is a machine without AMD GPUs. */
static int hp_device_count(int *count)
{
    hipError_t err = hipGetDeviceCount(count);
    if (err != hipErrorNoDevice && err != hipErrorInsufficientDriver) return (int)err;
    (void)hipGetLastError();
    weft_debug(-1, "hip: no device (%s)", hipGetErrorString(err));
    *count = 0;
    return 0;
}

static int hp_set_device(int ordinal) { return (int)hipSetDevice(ordinal); }
static int hp_get_device(int *ordinal) { return (int)hipGetDevice(ordinal); }
static int hp_mem_info(size_t *f, size_t *t) { return (int)hipMemGetInfo(f, t); }

static int hp_uuid(int ordinal, unsigned char uuid[16])
{
    hipDevice_t d;
    hipUUID u;
    hipError_t err = hipDeviceGet(&d, ordinal);
    if (err == hipSuccess) err = hipDeviceGetUuid(&u, d);
    if (err == hipSuccess) memcpy(uuid, u.bytes, 16);
    return (int)err;
}

static int hp_mem_alloc(void **p, size_t bytes) { return (int)hipMalloc(p, bytes); }
static int hp_mem_free(void *p) { return (int)hipFree(p); }

static int hp_stream_priorities(int *least, int *greatest)
{
    return (int)hipDeviceGetStreamPriorityRange(least, greatest);
}

static int hp_stream_create(void **s, int prio)
{
    return (int)hipStreamCreateWithPriority((hipStream_t *)s, hipStreamNonBlocking, prio);
}

static int hp_stream_destroy(void *s) { return (int)hipStreamDestroy(s); }
static int hp_stream_sync(void *s) { return (int)hipStreamSynchronize(s); }
static int hp_stream_wait(void *s, void *e) { return (int)hipStreamWaitEvent(s, e, 0); }

static int hp_event_create(void **e)
{
    return (int)hipEventCreateWithFlags((hipEvent_t *)e, hipEventDisableTiming);
}

static int hp_event_destroy(void *e) { return (int)hipEventDestroy(e); }
static int hp_event_record(void *e, void *s) { return (int)hipEventRecord(e, s); }
static int hp_event_query(void *e) { return (int)hipEventQuery(e); }
static int hp_event_sync(void *e) { return (int)hipEventSynchronize(e); }

static int hp_copy_1d(void *dst, const void *src, size_t bytes, void *s)
{
    return (int)hipMemcpyAsync(dst, src, bytes, hipMemcpyDefault, s);
}

static int hp_copy_2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                      size_t rows, void *s)
{
    return (int)hipMemcpy2DAsync(dst, dpitch, src, spitch, width, rows, hipMemcpyDefault, s);
}

/* hipMemcpyPeerAsync names both GPUs: the pointers tell which. */
static int hp_copy_peer(void *dst, const void *src, size_t bytes, void *s)
{
    hipPointerAttribute_t a, b;
    hipError_t err = hipPointerGetAttributes(&a, dst);
    if (err == hipSuccess) err = hipPointerGetAttributes(&b, src);
    if (err == hipSuccess) err = hipMemcpyPeerAsync(dst, a.device, src, b.device, bytes, s);
    return (int)err;
}

static int hp_peer_can(int *can, int me, int other)
{
    return (int)hipDeviceCanAccessPeer(can, me, other);
}

static int hp_peer_enable(int other) { return (int)hipDeviceEnablePeerAccess(other, 0); }

static int hp_ipc_get(void *handle, void *base)
{
    return (int)hipIpcGetMemHandle((hipIpcMemHandle_t *)handle, base);
}

static int hp_ipc_open(void **base, const void *handle)
{
    hipIpcMemHandle_t h;
    memcpy(&h, handle, sizeof h);
    return (int)hipIpcOpenMemHandle(base, h, hipIpcMemLazyEnablePeerAccess);
}

static int hp_ipc_close(void *base) { return (int)hipIpcCloseMemHandle(base); }

static int hp_host_register(void *p, size_t bytes)
{
    return (int)hipHostRegister(p, bytes, hipHostRegisterPortable);
}

static int hp_host_unregister(void *p) { return (int)hipHostUnregister(p); }

static void hp_host_is_pinned(const void *ptr, int *pinned)
{
    hipPointerAttribute_t attr;
    if (hipPointerGetAttributes(&attr, ptr) != hipSuccess) {
        (void)hipGetLastError();
        return;
    }
    *pinned = attr.memoryType == hipMemoryTypeHost;
}

/* No hipBLAS or hipSOLVER to bind: the handles stay NULL. */
static int hp_libs_open(const weft_device_t *dev, void *stream, void **blas, void **solver)
{
    return WEFT_SUCCESS;
}

static void hp_libs_close(const weft_device_t *dev, void *blas, void *solver) {}

/* ---- the vendor table -------------------------------------------------- */

static const weft_gpu_errmap_t hp_errors[] = {
    {hipErrorOutOfMemory, WEFT_ERR_DEVMEM},
    {hipErrorNoDevice, WEFT_ERR_NODEV},
    {hipErrorInsufficientDriver, WEFT_ERR_NODEV},
    {hipErrorInvalidDevice, WEFT_ERR_NODEV},
    {hipErrorInvalidValue, WEFT_ERR_INVALID},
    {hipErrorInvalidDevicePointer, WEFT_ERR_INVALID},
    {hipErrorInvalidPitchValue, WEFT_ERR_INVALID},
    {hipErrorInvalidMemcpyDirection, WEFT_ERR_INVALID},
    /* Sticky errors: the device is broken (gpu.h). */
    {hipErrorIllegalAddress, WEFT_ERR_DEVICE},
    {hipErrorLaunchFailure, WEFT_ERR_DEVICE},
    {hipErrorAssert, WEFT_ERR_DEVICE},
    {0, 0},
};

/* Beside the zone, a rank's context grows (as with CUDA: measured there,
 * kept here for want of an AMD GPU to measure on). */
static const weft_gpu_vendor_t hp_vendor = {
    .name = "hip",
    .type = WEFT_DEV_HIP,
    .headroom_context = (size_t)512 << 20,
    .headroom_per_stream = (size_t)32 << 20,
    .ipc_handle_bytes = sizeof(hipIpcMemHandle_t),
    .err_not_ready = hipErrorNotReady,
    .err_peer_enabled = hipErrorPeerAccessAlreadyEnabled,
    .err_host_registered = hipErrorHostMemoryAlreadyRegistered,
    .err_host_not_registered = hipErrorHostMemoryNotRegistered,
    .errors = hp_errors,
    .error_name = hp_error_name,
    .error_string = hp_error_string,
    .last_error = hp_last_error,
    .device_count = hp_device_count,
    .set_device = hp_set_device,
    .get_device = hp_get_device,
    .mem_info = hp_mem_info,
    .uuid = hp_uuid,
    .mem_alloc = hp_mem_alloc,
    .mem_free = hp_mem_free,
    .stream_priorities = hp_stream_priorities,
    .stream_create = hp_stream_create,
    .stream_destroy = hp_stream_destroy,
    .stream_sync = hp_stream_sync,
    .stream_wait_event = hp_stream_wait,
    .event_create = hp_event_create,
    .event_destroy = hp_event_destroy,
    .event_record = hp_event_record,
    .event_query = hp_event_query,
    .event_sync = hp_event_sync,
    .copy_1d = hp_copy_1d,
    .copy_2d = hp_copy_2d,
    .copy_peer = hp_copy_peer,
    .peer_can = hp_peer_can,
    .peer_enable = hp_peer_enable,
    .ipc_get = hp_ipc_get,
    .ipc_open = hp_ipc_open,
    .ipc_close = hp_ipc_close,
    .host_register = hp_host_register,
    .host_unregister = hp_host_unregister,
    .host_is_pinned = hp_host_is_pinned,
    .libs_open = hp_libs_open,
    .libs_close = hp_libs_close,
};

/* ---- the module -------------------------------------------------------- */

static int hip_probe(int *count) { return weft_gpu_probe(&hp_vendor, count); }
static int hip_open(weft_device_t *dev, int index) { return weft_gpu_open(&hp_vendor, dev, index); }

int weft_hip_host_register(void *ptr, size_t bytes)
{
    return weft_gpu_host_register(&hp_vendor, "weft_hip_host_register", ptr, bytes);
}

int weft_hip_host_unregister(void *ptr)
{
    return weft_gpu_host_unregister(&hp_vendor, "weft_hip_host_unregister", ptr);
}

int weft_hip_host_is_pinned(const void *ptr) { return weft_gpu_host_is_pinned(&hp_vendor, ptr); }

const weft_device_ops_t weft_hip_ops = {
    .name = "hip",
    .type = WEFT_DEV_HIP,
    .probe = hip_probe,
    .open = hip_open,
    .close = weft_gpu_close,
    .mem_info = weft_gpu_mem_info,
    .identity = weft_gpu_identity,
    .mem_reserve = weft_gpu_mem_reserve,
    .mem_release = weft_gpu_mem_release,
    .mem_alloc_tile = weft_gpu_mem_reserve, /* a hipMalloc either way */
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
