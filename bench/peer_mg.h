/* What the multi-GPU cuSOLVER peers (cusolvermg_potrf.c, cusolvermg_getrf.c)
 * share, all but the routine: the command line (-N -T -G --seed --nruns and
 * one switch of the peer's), the matrix 1-D column block cyclic on a 1 x G
 * grid of devices generated on the host, peer access, the pristine copies,
 * the runs timed with a wall clock from all devices idle to all idle with
 * the "[****]" line, and the freeing. A peer gives a table of operations
 * (peer_mg_ops_t) to peer_mg_main. Define PEER_NAME and
 * DISABLE_CUSOLVERMG_DEPRECATED before including it. Header-only, plain C
 * with OpenMP. */
#ifndef WEFT_BENCH_PEER_MG_H
#define WEFT_BENCH_PEER_MG_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>
#include <cusolverMg.h>

#include "peer_util.h" /* CUDA_OK, SOLVER_OK, parse_u64 */

#define MG_MAX_GPUS 64

/* The command line. */
typedef struct mg_opts {
    int64_t n, t;
    uint64_t seed;
    int g, nruns, flag; /* flag: the peer's switch (--check) given */
} mg_opts_t;

/* The matrix on the G devices and the solver's state. Every device holds
 * lcols columns: its share of the column blocks rounded up to the largest
 * share, whole tiles, as NVIDIA's samples allocate. */
typedef struct mg {
    int g, ids[MG_MAX_GPUS];
    int64_t n, t, lcols;
    uint64_t seed;
    int flag;                /* the peer's switch */
    double *h[MG_MAX_GPUS];  /* each device's columns, on the host */
    double *d[MG_MAX_GPUS];  /* the matrix factorized */
    double *d0[MG_MAX_GPUS]; /* its pristine copy; NULL: none, upload h */
    double *work[MG_MAX_GPUS];
    int64_t lwork;          /* doubles of workspace a device */
    cusolverMgHandle_t handle;
    cudaLibMgGrid_t grid;
    cudaLibMgMatrixDesc_t desc;
} mg_t;

/* What a peer does itself. */
typedef struct peer_mg_ops {
    const char *routine;       /* "cusolverMgPotrf", in the lines */
    const char *flag;          /* its switch: "--check" */
    const char *usage;         /* the options, for the usage line */
    double flops_n3;           /* flops / N^3 */
    const char *positive_info; /* what info > 0 means */
    /* Column j (< N) of the matrix into c[0..N). */
    void (*column)(const mg_t *m, int64_t j, double *c);
    /* Its own device arrays, then m->lwork. */
    int (*buffers)(mg_t *m);
    cusolverStatus_t (*call)(mg_t *m, int *info);
    /* After run r and its line; 0 or 1 (NULL: nothing). */
    int (*after_run)(mg_t *m, int r);
    /* The end of the banner line (may be empty). */
    const char *(*banner)(const mg_t *m);
} peer_mg_ops_t;

static inline double mg_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Bytes of one device's part. */
static inline size_t local_bytes(const mg_t *m)
{
    return (size_t)m->n * (size_t)m->lcols * sizeof(double);
}

/* Device p's part of the matrix into m->h[p]: local column lc is column
 * lc % T of local block lc / T, that is of global block (lc / T) G + p.
 * Columns past N (the end of the last tile, a device with one block fewer)
 * are zeros. A column a thread. */
static inline void mg_fill(const mg_t *m, const peer_mg_ops_t *ops, int p)
{
    int64_t n = m->n, t = m->t;
    double *h = m->h[p];
#pragma omp parallel for schedule(dynamic, 16)
    for (int64_t lc = 0; lc < m->lcols; lc++) {
        int64_t j = ((lc / t) * m->g + p) * t + lc % t; /* its global column */
        double *c = h + lc * n;
        if (j < n)
            ops->column(m, j, c);
        else
            memset(c, 0, sizeof(double) * (size_t)n);
    }
}

/* The host copies of all G parts; 1 after a message when memory is short. */
static inline int mg_host(mg_t *m, const peer_mg_ops_t *ops)
{
    for (int p = 0; p < m->g; p++) {
        m->h[p] = malloc(local_bytes(m));
        if (m->h[p] == NULL) {
            fprintf(stderr, PEER_NAME ": cannot allocate %zu bytes of host memory\n",
                    local_bytes(m));
            return 1;
        }
        mg_fill(m, ops, p);
    }
    return 0;
}

/* Peer access between every pair of the G devices, so that cusolverMg's
 * transfers go device to device; a pair without it is reported, and left
 * to whatever path the library takes then. */
static inline int mg_peer(const mg_t *m)
{
    for (int p = 0; p < m->g; p++) {
        CUDA_OK(cudaSetDevice(m->ids[p]));
        for (int q = 0; q < m->g; q++) {
            int ok = 0;
            if (q == p) continue;
            CUDA_OK(cudaDeviceCanAccessPeer(&ok, m->ids[p], m->ids[q]));
            if (!ok) {
                fprintf(stderr, PEER_NAME ": GPU %d has no peer access to GPU %d\n", m->ids[p],
                        m->ids[q]);
                continue;
            }
            cudaError_t e = cudaDeviceEnablePeerAccess(m->ids[q], 0);
            if (e == cudaErrorPeerAccessAlreadyEnabled)
                (void)cudaGetLastError(); /* enabled before us: fine, clear it */
            else
                CUDA_OK(e);
        }
    }
    return 0;
}

/* The pristine copies, allocated last so that they only take what the run
 * leaves; a device without room gets none (d0[p] = NULL), and a line says
 * how many devices will have the matrix uploaded from the host. */
static inline int mg_pristine(mg_t *m)
{
    int missing = 0;
    for (int p = 0; p < m->g; p++) {
        CUDA_OK(cudaSetDevice(m->ids[p]));
        cudaError_t e = cudaMalloc((void **)&m->d0[p], local_bytes(m));
        if (e == cudaSuccess) continue;
        if (e != cudaErrorMemoryAllocation) CUDA_OK(e);
        (void)cudaGetLastError(); /* clear the failed allocation's error */
        m->d0[p] = NULL;
        missing++;
    }
    if (missing > 0)
        printf(PEER_NAME ": no room for a pristine copy (%.1f GB) on %d of %d GPUs: their "
                         "part is uploaded from the host before each run (untimed)\n",
               (double)local_bytes(m) * 1e-9, missing, m->g);
    return 0;
}

/* Handle, grid, descriptor, matrix, the peer's buffers and workspace,
 * pristine copies. */
static inline int mg_setup(mg_t *m, const peer_mg_ops_t *ops)
{
    SOLVER_OK(cusolverMgCreate(&m->handle));
    SOLVER_OK(cusolverMgDeviceSelect(m->handle, m->g, m->ids));
    if (mg_peer(m) != 0) return 1;
    SOLVER_OK(
        cusolverMgCreateDeviceGrid(&m->grid, 1, m->g, m->ids, CUDALIBMG_GRID_MAPPING_COL_MAJOR));
    SOLVER_OK(cusolverMgCreateMatrixDesc(&m->desc, m->n, m->n, m->n, m->t, CUDA_R_64F, m->grid));
    for (int p = 0; p < m->g; p++) {
        CUDA_OK(cudaSetDevice(m->ids[p]));
        CUDA_OK(cudaMalloc((void **)&m->d[p], local_bytes(m)));
    }
    if (ops->buffers(m) != 0) return 1;
    for (int p = 0; p < m->g; p++) {
        CUDA_OK(cudaSetDevice(m->ids[p]));
        CUDA_OK(cudaMalloc((void **)&m->work[p], (size_t)m->lwork * sizeof(double)));
    }
    if (mg_pristine(m) != 0) return 1;
    for (int p = 0; p < m->g; p++) {
        if (m->d0[p] == NULL) continue;
        CUDA_OK(cudaSetDevice(m->ids[p]));
        CUDA_OK(cudaMemcpy(m->d0[p], m->h[p], local_bytes(m), cudaMemcpyHostToDevice));
    }
    return 0;
}

/* What mg_setup and mg_host made, also when they stopped half way (m was
 * zeroed first). */
static inline void mg_free(mg_t *m)
{
    for (int p = 0; p < m->g; p++) {
        cudaSetDevice(m->ids[p]);
        cudaFree(m->d[p]);
        cudaFree(m->d0[p]);
        cudaFree(m->work[p]);
        free(m->h[p]);
    }
    if (m->desc != NULL) cusolverMgDestroyMatrixDesc(m->desc);
    if (m->grid != NULL) cusolverMgDestroyGrid(m->grid);
    if (m->handle != NULL) cusolverMgDestroy(m->handle);
}

/* All G devices idle. */
static inline int mg_sync(const mg_t *m)
{
    for (int p = 0; p < m->g; p++) {
        CUDA_OK(cudaSetDevice(m->ids[p]));
        CUDA_OK(cudaDeviceSynchronize());
    }
    return 0;
}

/* The matrix to factorize into every d[p]: from d0[p], or from the host. */
static inline int mg_restore(const mg_t *m)
{
    for (int p = 0; p < m->g; p++) {
        CUDA_OK(cudaSetDevice(m->ids[p]));
        if (m->d0[p] != NULL)
            CUDA_OK(cudaMemcpy(m->d[p], m->d0[p], local_bytes(m), cudaMemcpyDeviceToDevice));
        else
            CUDA_OK(cudaMemcpy(m->d[p], m->h[p], local_bytes(m), cudaMemcpyHostToDevice));
    }
    return 0;
}

/* One factorization, its wall time in *t: the devices are idle before the
 * clock starts, and all idle again before it stops. */
static inline int mg_run(mg_t *m, const peer_mg_ops_t *ops, double *t)
{
    int info = 0;
    if (mg_sync(m) != 0) return 1;
    double t0 = mg_now();
    SOLVER_OK(ops->call(m, &info));
    if (mg_sync(m) != 0) return 1;
    *t = mg_now() - t0;
    if (info != 0) {
        fprintf(stderr, PEER_NAME ": %s info = %d (%s)\n", ops->routine, info,
                info < 0 ? "a bad argument" : ops->positive_info);
        return 1;
    }
    return 0;
}

static inline int mg_runs(mg_t *m, const peer_mg_ops_t *ops, const mg_opts_t *o)
{
    double nn = (double)m->n, flops = ops->flops_n3 * nn * nn * nn;
    for (int r = 0; r < o->nruns; r++) {
        double t = 0.0;
        if (mg_restore(m) != 0 || mg_run(m, ops, &t) != 0) return 1;
        printf("[****] TIME(s) %.6f : %s G= %d T= %lld N= %lld : %.2f gflops\n", t, ops->routine,
               m->g, (long long)m->t, (long long)m->n, flops / t * 1e-9);
        fflush(stdout);
        if (ops->after_run != NULL && ops->after_run(m, r) != 0) return 1;
    }
    return 0;
}

/* What runs: the GPUs, the sizes, the workspace. */
static inline int mg_banner(const mg_t *m, const peer_mg_ops_t *ops)
{
    struct cudaDeviceProp prop;
    CUDA_OK(cudaGetDeviceProperties(&prop, m->ids[0]));
    printf(PEER_NAME ": %d x %s, N= %lld, T= %lld, lwork %lld doubles a GPU%s\n", m->g, prop.name,
           (long long)m->n, (long long)m->t, (long long)m->lwork,
           ops->banner != NULL ? ops->banner(m) : "");
    fflush(stdout);
    return 0;
}

static inline int mg_main_run(const mg_opts_t *o, const peer_mg_ops_t *ops)
{
    mg_t m;
    memset(&m, 0, sizeof m);
    m.g = o->g, m.n = o->n, m.t = o->t, m.seed = o->seed, m.flag = o->flag;
    int64_t nblocks = (m.n + m.t - 1) / m.t;
    m.lcols = (nblocks + m.g - 1) / m.g * m.t;
    for (int p = 0; p < m.g; p++) m.ids[p] = p;
    int rc = mg_host(&m, ops);
    if (rc == 0) rc = mg_setup(&m, ops);
    if (rc == 0) rc = mg_banner(&m, ops);
    if (rc == 0) rc = mg_runs(&m, ops, o);
    mg_free(&m);
    return rc;
}

/* The options into o; -1 after a message on an unknown option, a missing
 * or bad value. */
static inline int mg_parse(int argc, char **argv, const peer_mg_ops_t *ops, mg_opts_t *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        uint64_t v = 0;
        if (strcmp(a, ops->flag) == 0) {
            o->flag = 1;
            continue;
        }
        if (strcmp(a, "-N") && strcmp(a, "-T") && strcmp(a, "-G") && strcmp(a, "--seed") &&
            strcmp(a, "--nruns")) {
            fprintf(stderr, PEER_NAME ": unknown option '%s'\n", a);
            return -1;
        }
        if (i + 1 >= argc || parse_u64(argv[i + 1], &v) != 0 ||
            (strcmp(a, "--seed") != 0 && v > INT32_MAX)) {
            fprintf(stderr, PEER_NAME ": %s needs a whole number up to %s\n", a,
                    strcmp(a, "--seed") == 0 ? "2^64-1" : "2^31-1");
            return -1;
        }
        i++;
        if (strcmp(a, "--seed") == 0) o->seed = v;
        if (strcmp(a, "-N") == 0) o->n = (int64_t)v;
        if (strcmp(a, "-T") == 0) o->t = (int64_t)v;
        if (strcmp(a, "-G") == 0) o->g = (int)v;
        if (strcmp(a, "--nruns") == 0) o->nruns = (int)v;
    }
    return 0;
}

/* No more GPUs than present (nor than MG_MAX_GPUS); 0 after a message. */
static inline int gpus_present(int g)
{
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess) {
        fprintf(stderr, PEER_NAME ": cannot count the GPUs: %s\n", cudaGetErrorString(e));
        return 0;
    }
    if (g > ndev || g > MG_MAX_GPUS) {
        fprintf(stderr, PEER_NAME ": -G %d, but %d GPUs present (and at most %d)\n", g, ndev,
                MG_MAX_GPUS);
        return 0;
    }
    return 1;
}

/* A peer's main: 0, or 1 after a message. */
static inline int peer_mg_main(int argc, char **argv, const peer_mg_ops_t *ops)
{
    mg_opts_t o = {.n = 8192, .t = 1024, .seed = 42, .g = 2, .nruns = 1, .flag = 0};
    int ok = mg_parse(argc, argv, ops, &o) == 0;
    if (ok && (o.n < 1 || o.t < 1 || o.g < 1 || o.nruns < 1)) {
        fprintf(stderr, PEER_NAME ": N, T, G and r must be at least 1\n");
        ok = 0;
    }
    if (!ok) {
        fprintf(stderr, "usage: %s %s\n", argv[0], ops->usage);
        return 1;
    }
    return gpus_present(o.g) ? mg_main_run(&o, ops) : 1;
}

#endif
