/* cublas_gemm: the one-GPU peer of weft-gemm -g 1: one cublasDgemm of the
 * whole N x N matrices, C = 0.5 A B - 0.25 C, on uniform random data
 * (cuRAND), A, B and C resident on the GPU. A first call warms cuBLAS up;
 * each of the --nruns calls after it is timed with CUDA events and printed
 * in weft-gemm's format:
 *   [****] TIME(s) <t> : cublasDgemm N= <n> : <gflops> gflops
 * Usage: cublas_gemm [-N n] [--nruns r]   (default N 32768, 3 runs) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <curand.h>

#define PEER_NAME "cublas_gemm"
#include "peer_util.h"

#define BLAS_OK(call)                                                                              \
    do {                                                                                           \
        cublasStatus_t b_ = (call);                                                                \
        if (b_ != CUBLAS_STATUS_SUCCESS) {                                                         \
            fprintf(stderr, PEER_NAME ": %s failed: %s\n", #call, cublasGetStatusString(b_));      \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

static int fill(double *const m[3], size_t elems)
{
    curandGenerator_t gen;
    if (curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_DEFAULT) != CURAND_STATUS_SUCCESS ||
        curandSetPseudoRandomGeneratorSeed(gen, 42) != CURAND_STATUS_SUCCESS) {
        fprintf(stderr, PEER_NAME ": cuRAND setup failed\n");
        return 1;
    }
    int rc = 0;
    for (int i = 0; i < 3 && rc == 0; i++)
        rc = curandGenerateUniformDouble(gen, m[i], elems) != CURAND_STATUS_SUCCESS;
    curandDestroyGenerator(gen);
    if (rc) fprintf(stderr, PEER_NAME ": curandGenerateUniformDouble failed\n");
    return rc;
}

static int run(int n, int nruns)
{
    size_t elems = (size_t)n * (size_t)n;
    double *m[3] = {NULL, NULL, NULL}, alpha = 0.5, beta = -0.25;
    for (int i = 0; i < 3; i++) CUDA_OK(cudaMalloc((void **)&m[i], elems * sizeof(double)));
    if (fill(m, elems) != 0) return 1;
    cublasHandle_t h;
    BLAS_OK(cublasCreate(&h));
    cudaEvent_t e0, e1;
    CUDA_OK(cudaEventCreate(&e0));
    CUDA_OK(cudaEventCreate(&e1));
    for (int r = -1; r < nruns; r++) { /* r = -1: warm-up, not printed */
        CUDA_OK(cudaEventRecord(e0, 0));
        BLAS_OK(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, m[0], n, m[1], n, &beta,
                            m[2], n));
        CUDA_OK(cudaEventRecord(e1, 0));
        CUDA_OK(cudaEventSynchronize(e1));
        float ms = 0.0f;
        CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
        double t = ms * 1e-3, nn = n;
        if (r >= 0)
            printf("[****] TIME(s) %.6f : cublasDgemm N= %d : %.2f gflops\n", t, n,
                   2.0 * nn * nn * nn / t * 1e-9);
        fflush(stdout);
    }
    cublasDestroy(h);
    for (int i = 0; i < 3; i++) cudaFree(m[i]);
    return 0;
}

int main(int argc, char **argv)
{
    uint64_t n = 32768, nruns = 3;
    for (int i = 1; i < argc; i += 2) {
        uint64_t *dst = strcmp(argv[i], "-N") == 0        ? &n
                        : strcmp(argv[i], "--nruns") == 0 ? &nruns
                                                          : NULL;
        if (dst == NULL || i + 1 >= argc || parse_u64(argv[i + 1], dst) != 0 || *dst < 1 ||
            *dst > 65536) {
            fprintf(stderr, "usage: %s [-N n <= 65536] [--nruns r]\n", argv[0]);
            return 2;
        }
    }
    return run((int)n, (int)nruns);
}
