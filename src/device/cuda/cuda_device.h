/* The CUDA device module: the vendor part of the GPU layer
 * (device/gpu/gpu.h, which says what a GPU device does) over the CUDA
 * runtime, with one cuBLAS and one cuSOLVER handle per execution stream
 * (built only when the toolkit is found: WEFT_HAVE_CUDA). A kernel gets
 * them in its environment: stream_handle a cudaStream_t, blas a
 * cublasHandle_t, solver a cusolverDnHandle_t. apps/potrf_cuda.h keeps
 * cusolverDnDpotrf's devInfo in the first 256 bytes of the workspace and
 * the cuSOLVER work array after them. cuBLAS and cuSOLVER errors are
 * logged with the library's message and mapped as the runtime's are. */
#ifndef WEFT_DEVICE_CUDA_CUDA_DEVICE_H
#define WEFT_DEVICE_CUDA_CUDA_DEVICE_H

#include <stddef.h>

#include "device/device.h"

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
