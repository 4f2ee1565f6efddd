/* What the one-GPU cuSOLVER peers (cusolver_potrf.c, _getrf.c, _geqrf.c)
 * share: their command line (-N --seed --nruns --check, and where a peer
 * takes them -M --device), the device state (handle, stream, matrix, its
 * pristine copy, workspace, info, events), the run of one routine timed
 * with CUDA events with its info checked, and the "[****]" line. Define
 * PEER_NAME before including it. Header-only, plain C. */
#ifndef WEFT_BENCH_PEER_DN_H
#define WEFT_BENCH_PEER_DN_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <cusolverDn.h>

#include "peer_util.h" /* CUDA_OK, SOLVER_OK, parse_u64 */

/* ---- command line -------------------------------------------------------- */

enum { PEER_DN_M = 1, PEER_DN_DEVICE = 2 }; /* the optional flags */

typedef struct peer_dn_opts {
    int64_t m, n;
    uint64_t seed;
    int nruns, device, check;
} peer_dn_opts_t;

/* The options into o, those of mask among the optional ones; -1 on an
 * unknown option, a missing or bad value. */
static inline int peer_dn_parse(int argc, char **argv, unsigned mask, peer_dn_opts_t *o)
{
    for (int i = 1; i < argc; i++) {
        uint64_t v = 0;
        if (strcmp(argv[i], "--check") == 0) {
            o->check = 1;
            continue;
        }
        if (i + 1 >= argc || parse_u64(argv[i + 1], &v) != 0) return -1;
        const char *a = argv[i++];
        if (strcmp(a, "--seed") == 0)
            o->seed = v;
        else if (v > INT32_MAX)
            return -1; /* M, N, r and d are ints for CUDA */
        else if (strcmp(a, "-N") == 0)
            o->n = (int64_t)v;
        else if ((mask & PEER_DN_M) && strcmp(a, "-M") == 0)
            o->m = (int64_t)v;
        else if (strcmp(a, "--nruns") == 0)
            o->nruns = (int)v;
        else if ((mask & PEER_DN_DEVICE) && strcmp(a, "--device") == 0)
            o->device = (int)v;
        else
            return -1;
    }
    return 0;
}

/* ---- device state -------------------------------------------------------- */

typedef struct peer_dn {
    cusolverDnHandle_t solver;
    cudaStream_t stream;
    double *d, *d0, *work, *tau; /* matrix, pristine copy (NULL: none), workspace, QR's tau */
    int *dinfo;
    int lwork;        /* of work, in doubles */
    cudaEvent_t e[4]; /* e[1], e[2] around each run; all four around copies */
} peer_dn_t;

/* On device: handle, stream, the matrix of bytes, info and events (p
 * zeroed first); the peer then sizes and allocates work (peer_dn_work). */
static inline int peer_dn_setup(peer_dn_t *p, size_t bytes, int device)
{
    memset(p, 0, sizeof *p);
    CUDA_OK(cudaSetDevice(device));
    SOLVER_OK(cusolverDnCreate(&p->solver));
    CUDA_OK(cudaStreamCreateWithFlags(&p->stream, cudaStreamNonBlocking));
    SOLVER_OK(cusolverDnSetStream(p->solver, p->stream));
    CUDA_OK(cudaMalloc((void **)&p->d, bytes));
    CUDA_OK(cudaMalloc((void **)&p->dinfo, sizeof(int)));
    for (int k = 0; k < 4; k++) CUDA_OK(cudaEventCreate(&p->e[k]));
    return 0;
}

/* The workspace of p->lwork doubles, and 256 bytes to spare. */
static inline int peer_dn_work(peer_dn_t *p)
{
    CUDA_OK(cudaMalloc((void **)&p->work, (size_t)p->lwork * sizeof(double) + 256));
    return 0;
}

/* What peer_dn_setup and the peer made, also when they stopped half way. */
static inline void peer_dn_free(peer_dn_t *p)
{
    for (int k = 0; k < 4; k++)
        if (p->e[k] != NULL) cudaEventDestroy(p->e[k]);
    cudaFree(p->dinfo);
    cudaFree(p->tau);
    cudaFree(p->work);
    cudaFree(p->d0);
    cudaFree(p->d);
    if (p->solver != NULL) cusolverDnDestroy(p->solver);
    if (p->stream != NULL) cudaStreamDestroy(p->stream);
}

/* ---- timed runs ---------------------------------------------------------- */

/* Enqueues the factorization of p->d on p's stream. */
typedef cusolverStatus_t (*peer_dn_call_fn)(const peer_dn_t *p, const void *arg);

/* One factorization of p->d (already in place), timed with events around
 * call alone, its info checked (routine names it); the time in *t. */
static inline int peer_dn_timed(const peer_dn_t *p, const char *routine, peer_dn_call_fn call,
                                const void *arg, double *t)
{
    CUDA_OK(cudaEventRecord(p->e[1], p->stream));
    SOLVER_OK(call(p, arg));
    CUDA_OK(cudaEventRecord(p->e[2], p->stream));
    int info = -1;
    CUDA_OK(cudaMemcpyAsync(&info, p->dinfo, sizeof info, cudaMemcpyDeviceToHost, p->stream));
    CUDA_OK(cudaStreamSynchronize(p->stream));
    if (info != 0) {
        fprintf(stderr, PEER_NAME ": %s info = %d\n", routine, info);
        return 1;
    }
    float ms = 0.0f;
    CUDA_OK(cudaEventElapsedTime(&ms, p->e[1], p->e[2]));
    *t = ms * 1e-3;
    return 0;
}

/* p->d := the pristine copy p->d0 (bytes), on p's stream. */
static inline int peer_dn_restore(const peer_dn_t *p, size_t bytes)
{
    CUDA_OK(cudaMemcpyAsync(p->d, p->d0, bytes, cudaMemcpyDeviceToDevice, p->stream));
    return 0;
}

/* The line of a run in the apps' format; dims: " N= 8192" or the like. */
static inline void peer_dn_report(const char *routine, const char *dims, double t, double flops)
{
    printf("[****] TIME(s) %.6f : %s%s : %.2f gflops\n", t, routine, dims, flops / t * 1e-9);
    fflush(stdout);
}

#endif
