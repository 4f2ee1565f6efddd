/* Private to the CUDA module: the cuBLAS and cuSOLVER handles of an
 * execution stream, made and freed for the GPU layer (its vendor table's
 * libs_open and libs_close). The libraries are loaded at the first
 * libs_open. */
#ifndef WEFT_DEVICE_CUDA_CUDA_LIBS_H
#define WEFT_DEVICE_CUDA_CUDA_LIBS_H

#include "device/device.h"

/* One cuBLAS and one cuSOLVER handle bound to stream (a cudaStream_t).
 * Errors are logged on dev with the library's message; a handle made
 * before a failure is left in its slot for libs_close. The device is
 * current. */
int weft_cuda__libs_open(const weft_device_t *dev, void *stream, void **blas, void **solver);
/* Destroys what libs_open made; NULL handles are skipped. */
void weft_cuda__libs_close(const weft_device_t *dev, void *blas, void *solver);
/* Loads the cuBLAS and cuSOLVER files named (a soname or a path; NULL: the
 * ones weft was built against) and looks up every entry point libs_open
 * uses, as the first device's opening does; for tests. */
int weft_cuda__libs_try(const char *blas, const char *solver);

#endif /* WEFT_DEVICE_CUDA_CUDA_LIBS_H */
