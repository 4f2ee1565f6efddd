/* The GPU layer: what every GPU device module (cuda/, hip/) shares, over a
 * vendor table of the runtime's primitive calls. The layer holds the logic:
 * streams and their priorities, library handles and workspaces per
 * execution stream, the event pool, 2D and peer copies, the zone and
 * per-tile memory, IPC of the zone, peer access, launch with its execution
 * environment, pinned host memory, and the mapping of vendor errors to
 * weft statuses. A vendor part fills one weft_gpu_vendor_t with thin
 * wrappers of its runtime (one call each) and one weft_device_ops_t whose
 * operations are the weft_gpu_* functions below (probe and open through
 * two one-line wrappers that name its vendor table).
 *
 * One weft device per vendor ordinal (index 0-based within the type = the
 * ordinal among the visible GPUs). open creates:
 *   - streams WEFT_STREAM_IN, WEFT_STREAM_OUT and WEFT_STREAM_PREFETCH at
 *     the highest stream priority, then `device_streams` execution streams
 *     at the lowest (WEFT_GPU_EXEC_STREAMS_DEFAULT when dev->params is
 *     NULL) and, with device_urgent_stream, one more at the highest, all
 *     non-blocking;
 *   - per execution stream: the vendor's library handles bound to it (cuda:
 *     cuBLAS, cuSOLVER; hip: none) and a workspace of dev->workspace_bytes
 *     (none when 0) allocated at open, before the caller reserves the zone.
 * launch hands a kernel the stream, handles and workspace of its execution
 * stream (weft_device_env_t). Kernels of one stream run in stream order, so
 * a kernel may use the whole workspace without synchronizing; it must not
 * synchronize either. The workspace is 256-byte aligned device memory with
 * no layout imposed.
 *
 * Every vendor error is logged once with the call's name and the vendor's
 * message, then returned as a weft status through the vendor's error map
 * (out of device memory -> WEFT_ERR_DEVMEM, no device or driver ->
 * WEFT_ERR_NODEV, a bad argument -> WEFT_ERR_INVALID, anything else ->
 * WEFT_ERR_INTERNAL; a kernel's launch error -> WEFT_ERR_TASK). A sticky
 * error (the vendor maps it to WEFT_ERR_DEVICE: an illegal address in a
 * kernel, after which the context fails every call) marks the device
 * broken (weft_device_set_broken, logged once): every later operation
 * returns WEFT_ERR_DEVICE without calling the runtime, and close and the
 * frees give nothing back through the dead context. The layer counts no
 * statistics.
 *
 * Threads: every operation may be called from any thread; each makes its
 * device current itself and the event pool is locked. */
#ifndef WEFT_DEVICE_GPU_GPU_H
#define WEFT_DEVICE_GPU_GPU_H

#include <stddef.h>

#include "device/device.h"

/* Execution streams when the device has no parameters (tests). */
#define WEFT_GPU_EXEC_STREAMS_DEFAULT 4

/* A vendor error code and the weft status it means. */
typedef struct weft_gpu_errmap {
    int code;
    int status;
} weft_gpu_errmap_t;

/* The primitive calls of one GPU runtime. Every function returning int
 * returns the vendor's error code (0: success) unless it says otherwise;
 * handles (streams, events) are the vendor's, held as pointers. */
typedef struct weft_gpu_vendor {
    const char *name; /* "cuda", "hip": messages, identity keys, and the
                         prefix of the runtime's call names */
    weft_device_type_t type;
    /* What a rank still takes on its GPU outside its zone once open: the
     * context's growth, and for each execution stream what its libraries
     * allocate on first use. */
    size_t headroom_context, headroom_per_stream;
    size_t ipc_handle_bytes; /* an exported IPC handle, <= WEFT_IPC_HANDLE_MAX */
    /* Codes the layer tells apart from failures. */
    int err_not_ready, err_peer_enabled, err_host_registered, err_host_not_registered;
    /* Codes that mean something other than WEFT_ERR_INTERNAL; ends with a
     * zero code. */
    const weft_gpu_errmap_t *errors;
    const char *(*error_name)(int err);
    const char *(*error_string)(int err);
    /* Returns and clears the calling thread's last (non-sticky) error. */
    int (*last_error)(void);

    /* No driver or no device is 0 devices and success. */
    int (*device_count)(int *count);
    int (*set_device)(int ordinal);
    int (*get_device)(int *ordinal);
    int (*mem_info)(size_t *free_bytes, size_t *total_bytes);
    int (*uuid)(int ordinal, unsigned char uuid[16]);
    /* 1 when this process's kernels take turns with other processes' on
     * the GPU instead of running beside them (WEFT_DEVCAP_TIME_SLICED);
     * NULL: they run beside them. */
    int (*time_sliced)(void);
    int (*mem_alloc)(void **ptr, size_t bytes);
    int (*mem_free)(void *ptr);

    /* "greatest" is the priority served first. */
    int (*stream_priorities)(int *least, int *greatest);
    int (*stream_create)(void **stream, int priority); /* non-blocking */
    int (*stream_destroy)(void *stream);
    int (*stream_sync)(void *stream);
    int (*stream_wait_event)(void *stream, void *event);
    int (*event_create)(void **event); /* without timing */
    int (*event_destroy)(void *event);
    int (*event_record)(void *event, void *stream);
    int (*event_query)(void *event); /* err_not_ready while pending */
    int (*event_sync)(void *event);

    /* Copies between any two of host, device and peer memory, told apart
     * by address (unified addressing). */
    int (*copy_1d)(void *dst, const void *src, size_t bytes, void *stream);
    int (*copy_2d)(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                   size_t rows, void *stream);
    /* A contiguous copy between two GPUs with peer access. */
    int (*copy_peer)(void *dst, const void *src, size_t bytes, void *stream);
    int (*peer_can)(int *can, int ordinal, int peer_ordinal);
    int (*peer_enable)(int peer_ordinal); /* from the current device */

    int (*ipc_get)(void *handle, void *base);
    int (*ipc_open)(void **base, const void *handle); /* lazy peer access */
    int (*ipc_close)(void *base);

    int (*host_register)(void *ptr, size_t bytes); /* portable */
    int (*host_unregister)(void *ptr);
    /* 1 in *pinned for pinned host memory, else 0; never fails. */
    void (*host_is_pinned)(const void *ptr, int *pinned);

    /* The libraries of one execution stream, bound to it: weft statuses
     * (errors logged on dev); *blas and *solver stay NULL for a library
     * the vendor part does not have. close takes what open left, NULL
     * included. The device is current. */
    int (*libs_open)(const weft_device_t *dev, void *stream, void **blas, void **solver);
    void (*libs_close)(const weft_device_t *dev, void *blas, void *solver);
} weft_gpu_vendor_t;

/* The operations a vendor's probe and open wrap. */
int weft_gpu_probe(const weft_gpu_vendor_t *v, int *count);
int weft_gpu_open(const weft_gpu_vendor_t *v, weft_device_t *dev, int index);

/* The other operations of weft_device_ops_t (device.h's contracts), the
 * same for every vendor: the vendor table is found through dev. */
void weft_gpu_close(weft_device_t *dev);
int weft_gpu_mem_info(weft_device_t *dev, size_t *free_bytes, size_t *total_bytes);
int weft_gpu_identity(weft_device_t *dev, char *key, size_t len);
int weft_gpu_mem_reserve(weft_device_t *dev, size_t bytes, void **base);
void weft_gpu_mem_release(weft_device_t *dev, void *base, size_t bytes);
int weft_gpu_copy_async(weft_device_t *dev, int stream, weft_region_t dst, int dst_dev,
                        weft_region_t src, int src_dev, int rows, int cols, size_t elem);
int weft_gpu_event_record(weft_device_t *dev, int stream, weft_event_t *ev);
int weft_gpu_event_query(weft_device_t *dev, weft_event_t *ev);
int weft_gpu_event_sync(weft_device_t *dev, weft_event_t *ev);
void weft_gpu_event_destroy(weft_device_t *dev, weft_event_t *ev);
int weft_gpu_stream_wait(weft_device_t *dev, int stream, weft_event_t *ev);
int weft_gpu_launch(weft_device_t *dev, int stream, weft_device_kernel_fn kernel, void *arg);
int weft_gpu_can_access_peer(weft_device_t *dev, weft_device_t *peer);
int weft_gpu_ipc_export(weft_device_t *dev, void *handle, size_t *handle_bytes);
int weft_gpu_ipc_import(weft_device_t *dev, const void *handle, size_t handle_bytes, void **base);
int weft_gpu_ipc_close(weft_device_t *dev, void *base);
void *weft_gpu_stream_handle(weft_device_t *dev, int stream);
int weft_gpu_host_register_op(weft_device_t *dev, void *ptr, size_t bytes);
int weft_gpu_host_unregister_op(weft_device_t *dev, void *ptr);

/* Pinned host memory for every device of the process, with no device at
 * hand (the vendor modules' public calls: weft_cuda_host_register...).
 * fn names the public call in messages. Returns 0; WEFT_ERR_INVALID for
 * NULL/0, a range already (partly) pinned, or unregistering memory not
 * registered; WEFT_ERR_NODEV without a usable GPU; WEFT_ERR_INTERNAL for
 * other errors (logged). Any thread. */
int weft_gpu_host_register(const weft_gpu_vendor_t *v, const char *fn, void *ptr, size_t bytes)
    __attribute__((warn_unused_result));
int weft_gpu_host_unregister(const weft_gpu_vendor_t *v, const char *fn, void *ptr)
    __attribute__((warn_unused_result));
int weft_gpu_host_is_pinned(const weft_gpu_vendor_t *v, const void *ptr);

/* 0 for success; otherwise logs "<vendor><call> failed: <message> (<name>)"
 * on dev (NULL: no device), clears the thread's last error and returns the
 * weft status of err. call is the runtime's call without its prefix
 * ("Malloc": cudaMalloc, hipMalloc), the two runtimes naming calls alike. */
int weft_gpu_check(const weft_gpu_vendor_t *v, const weft_device_t *dev, int err, const char *call);

#endif /* WEFT_DEVICE_GPU_GPU_H */
