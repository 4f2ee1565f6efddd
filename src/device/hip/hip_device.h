/* The HIP device module: the vendor part of the GPU layer
 * (device/gpu/gpu.h, which says what a GPU device does) over the HIP
 * runtime for AMD GPUs (built only when the runtime is found:
 * WEFT_HAVE_HIP). A kernel gets in its environment the stream
 * (stream_handle, a hipStream_t) and its workspace; no library handles
 * (blas and solver are NULL: hipBLAS and hipSOLVER are not in the
 * distributions weft builds on, so bodies call what they link themselves).
 * Copies between two GPUs go through hipMemcpyPeerAsync; IPC of the zone
 * through hipIpcGetMemHandle. */
#ifndef WEFT_DEVICE_HIP_HIP_DEVICE_H
#define WEFT_DEVICE_HIP_HIP_DEVICE_H

#include <stddef.h>

#include "device/device.h"

/* The operations table, registered under WEFT_HAVE_HIP. */
extern const weft_device_ops_t weft_hip_ops;

/* As weft_cuda_host_register, weft_cuda_host_unregister and
 * weft_cuda_host_is_pinned (cuda/cuda_device.h), with hipHostRegister. */
int weft_hip_host_register(void *ptr, size_t bytes) __attribute__((warn_unused_result));
int weft_hip_host_unregister(void *ptr) __attribute__((warn_unused_result));
int weft_hip_host_is_pinned(const void *ptr);

#endif /* WEFT_DEVICE_HIP_HIP_DEVICE_H */
