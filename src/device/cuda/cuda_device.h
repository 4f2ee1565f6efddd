/* The CUDA device module: weft_device_ops_t over the CUDA runtime, cuBLAS
 * and cuSOLVER (built only when the toolkit is found: WEFT_HAVE_CUDA).
 *
 * One weft device per CUDA ordinal (index 0-based within the type = the
 * ordinal under CUDA_VISIBLE_DEVICES). open creates:
 *   - streams WEFT_STREAM_IN, WEFT_STREAM_OUT and WEFT_STREAM_PREFETCH at
 *     the highest stream priority, then `device_streams` execution streams
 *     at the lowest (4 when dev->params is NULL) and, with
 *     device_urgent_stream, one more at the highest, all non-blocking
 *     (cudaStreamNonBlocking);
 *   - per execution stream: one cuBLAS handle and one cuSOLVER handle bound
 *     to it, and a workspace of dev->workspace_bytes (none when 0) allocated
 *     at open, before the caller reserves the zone from what is left.
 * launch hands a body the stream, handles and workspace of its execution
 * stream (t->stream, t->blas, t->solver, t->workspace, t->workspace_bytes).
 * Bodies of one stream run in stream order, so a body may use the whole
 * workspace without synchronizing; it must not synchronize either.
 * The workspace is 256-byte aligned device memory with no layout imposed:
 * apps/potrf_cuda.h keeps cusolverDnDpotrf's devInfo in its first 256 bytes
 * and the cuSOLVER work array after them.
 *
 * Every CUDA, cuBLAS and cuSOLVER error is logged once with the call's name
 * and the library's message, then returned as a weft status: out of device
 * memory -> WEFT_ERR_DEVMEM, no device or driver -> WEFT_ERR_NODEV, a bad
 * argument -> WEFT_ERR_INVALID, anything else -> WEFT_ERR_INTERNAL (a body's
 * kernel launch error -> WEFT_ERR_TASK). The module counts no statistics.
 *
 * Threads: every operation may be called from any thread; each makes its
 * device current itself (cudaSetDevice) and the event pool is locked. */
#ifndef WEFT_DEVICE_CUDA_CUDA_DEVICE_H
#define WEFT_DEVICE_CUDA_CUDA_DEVICE_H

#include <stddef.h>

#include "device/device.h"

/* Execution streams when the device has no parameters (tests). */
#define WEFT_CUDA_EXEC_STREAMS_DEFAULT 4

/* The operations table, registered under WEFT_HAVE_CUDA. */
extern const weft_device_ops_t weft_cuda_ops;

/* Pins host memory [ptr, ptr + bytes) for every device of the process
 * (cudaHostRegisterPortable) so copies to and from it are asynchronous and
 * run at full speed. Register whole allocations once (a matrix, not its
 * strided tiles: pages of overlapping ranges cannot be pinned twice).
 * Returns 0; WEFT_ERR_INVALID for NULL/0 or a range that is already
 * (partly) pinned (check weft_cuda_host_is_pinned first; do not unregister
 * memory you did not register); WEFT_ERR_NODEV without a usable GPU;
 * WEFT_ERR_INTERNAL for other CUDA errors (logged). Any thread. */
int weft_cuda_host_register(void *ptr, size_t bytes) __attribute__((warn_unused_result));

/* Unpins memory pinned by weft_cuda_host_register (ptr: the same start).
 * Returns 0, or WEFT_ERR_INVALID (logged) when ptr was not registered. */
int weft_cuda_host_unregister(void *ptr) __attribute__((warn_unused_result));

/* 1 when ptr lies in pinned host memory (cudaHostRegister, cudaMallocHost),
 * 0 otherwise (pageable, device memory, or no GPU). Any thread. */
int weft_cuda_host_is_pinned(const void *ptr);

#endif /* WEFT_DEVICE_CUDA_CUDA_DEVICE_H */
