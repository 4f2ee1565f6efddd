/* cusolvermg_potrf: the peer of weft-potrf -g G on one node, cusolverMgPotrf
 * (CUDA's multi-GPU dense solver, one process) on G GPUs.
 *
 * Usage: cusolvermg_potrf [-N n] [-T tile] [-G gpus] [--seed s] [--nruns r]
 *                         [--check]
 * (defaults N = 8192, T = 1024, G = 2, seed 42, 1 run).
 *
 * The matrix is the one weft-potrf factorizes (apps/potrf_matrix.h), lower
 * Cholesky. cusolverMg takes it in a 1 x G grid of devices, 1-D column
 * block cyclic: global column block b (T columns) lives on device b % G as
 * its local block b / G, each device holding an N x (its columns) array,
 * column-major, lda = N. Each device's part is generated on the host (by
 * OpenMP threads; lower triangle, zeros above) and copied to the device
 * once, into a pristine copy there when the device has room for the matrix
 * twice (restored device to device before each run), else uploaded from the
 * host again before each run; neither copy is timed.
 * Each run is timed with a wall clock around cusolverMgPotrf, which is
 * synchronous, from all devices idle to all devices idle. One line a run in
 * weft-potrf's format:
 *   [****] TIME(s) <t> : cusolverMgPotrf G= <g> T= <tile> N= <n> : <gflops> gflops
 * with gflops = N^3/3 / t. Exit 1 on a CUDA or cuSOLVER error, info != 0 or
 * bad arguments.
 *
 * --check: after the first run, the factor is copied to the host and
 * checked with bench/potrf_vcheck.h, an O(N^2) test against a random
 * vector; prints "residual = <r> : PASSED" (r < 60) or ": FAILED" (exit 1).
 *
 * Build: gcc -std=c11 -O2 -fopenmp -I<cuda>/include cusolvermg_potrf.c
 *        -L<cuda>/lib64 -lcusolverMg -lcusolver -lcublas -lcudart -lm
 * All but the routine and its matrix is bench/peer_mg.h's. */
#define _POSIX_C_SOURCE 200809L

/* CUDA 13 marks all of cusolverMg deprecated (in favour of cusolverMp, a
 * multi-process library); it still ships, and it is the vendor's
 * one-process multi-GPU Cholesky, the peer this program measures. Without
 * this, every call is a deprecation warning, an error under -Werror. */
#define DISABLE_CUSOLVERMG_DEPRECATED

#include <stdint.h>

#include "../apps/potrf_matrix.h" /* the matrix weft-potrf factorizes */
#include "potrf_vcheck.h"         /* the O(N^2) check of --check */
#define PEER_NAME "cusolvermg_potrf"
#include "peer_mg.h" /* the matrix on the devices, runs, command line */

/* Lower triangle, zeros above (potrf('L') never reads them). */
static void column(const mg_t *m, int64_t j, double *c)
{
    for (int64_t i = 0; i < j; i++) c[i] = 0.0;
    for (int64_t i = j; i < m->n; i++) c[i] = potrf_elem(m->seed, m->n, i, j);
}

static int buffers(mg_t *m)
{
    SOLVER_OK(cusolverMgPotrf_bufferSize(m->handle, CUBLAS_FILL_MODE_LOWER, (int)m->n,
                                         (void **)m->d, 1, 1, m->desc, CUDA_R_64F, &m->lwork));
    return 0;
}

static cusolverStatus_t call(mg_t *m, int *info)
{
    return cusolverMgPotrf(m->handle, CUBLAS_FILL_MODE_LOWER, (int)m->n, (void **)m->d, 1, 1,
                           m->desc, CUDA_R_64F, (void **)m->work, m->lwork, info);
}

/* --check after the first run: the factor, copied over the host parts,
 * against the matrix; the parts of devices without a pristine copy are
 * generated again, since the next runs upload them. */
static int check(mg_t *m, int r);

static const peer_mg_ops_t potrf_ops = {
    .routine = "cusolverMgPotrf",
    .flag = "--check",
    .usage = "[-N n] [-T tile] [-G gpus] [--seed s] [--nruns r] [--check]",
    .flops_n3 = 1.0 / 3.0,
    .positive_info = "not positive definite",
    .column = column,
    .buffers = buffers,
    .call = call,
    .after_run = check,
};

static int check(mg_t *m, int r)
{
    if (r > 0 || !m->flag) return 0;
    for (int p = 0; p < m->g; p++) {
        CUDA_OK(cudaSetDevice(m->ids[p]));
        CUDA_OK(cudaMemcpy(m->h[p], m->d[p], local_bytes(m), cudaMemcpyDeviceToHost));
    }
    potrf_vcheck_cyclic_t l = {m->h, m->n, m->t, m->g};
    int rc =
        potrf_vcheck_report(PEER_NAME, potrf_vcheck(m->seed, m->n, potrf_vcheck_cyclic_col, &l));
    for (int p = 0; p < m->g; p++)
        if (m->d0[p] == NULL) mg_fill(m, &potrf_ops, p);
    return rc;
}

int main(int argc, char **argv) { return peer_mg_main(argc, argv, &potrf_ops); }
