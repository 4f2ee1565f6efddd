/* tile_gemm_ceiling: what a tiled GEMM can reach on these cores with no
 * runtime around it, the ceiling of weft-gemm on one node.
 *
 * Each MPI rank (one a core, OpenBLAS on one thread) computes its share of
 * the C tiles of C = 0.5 A B - 0.25 C, N x N in NB x NB tiles, each C tile
 * by the N/NB tile GEMMs (cblas_dgemm) a tiled runtime runs for it, with
 * every tile in its own buffer as weft keeps them. No tasks, no
 * dependencies, no messages: what is left of weft-gemm's time beside this
 * one is the runtime's, and a GEMM of the whole matrix in one BLAS call
 * (ScaLAPACK's pdgemm on a 1 x 1 grid) packs each panel once where tile
 * GEMMs pack every tile again.
 *
 * Usage: mpiexec -n <cores> tile_gemm_ceiling [-N n] [-t nb] [--nruns k]
 * Prints a line a run in the apps' format, the gflops of all ranks together
 * (2 N^3 over the slowest rank's time); N need not be a multiple of NB
 * (edge tiles are smaller). */
#define _POSIX_C_SOURCE 200809L
#include <cblas.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "../apps/dense_matrix.h"

static int tile_dim(int n, int nb, int i) { return i * nb + nb <= n ? nb : n - i * nb; }

/* nt x nt tiles, each its own buffer, holding the matrix of apps/
 * dense_matrix.h seeded by seed (weft-gemm's and its peers' matrices). */
static double **tiles_new(int n, int nb, int nt, uint64_t seed)
{
    double **t = calloc((size_t)nt * (size_t)nt, sizeof *t);
    if (!t) return NULL;
    for (int j = 0; j < nt; j++)
        for (int i = 0; i < nt; i++) {
            int m = tile_dim(n, nb, i), w = tile_dim(n, nb, j);
            double *p = t[(size_t)j * (size_t)nt + (size_t)i] =
                malloc((size_t)m * (size_t)w * sizeof *p);
            if (!p) return NULL;
            for (int c = 0; c < w; c++)
                for (int r = 0; r < m; r++)
                    p[(size_t)c * (size_t)m + (size_t)r] =
                        dense_elem(seed, (int64_t)i * nb + r, (int64_t)j * nb + c);
        }
    return t;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nranks, n = 6144, nb = 384, nruns = 3;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-N"))
            n = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-t"))
            nb = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--nruns"))
            nruns = atoi(argv[i + 1]);
        else {
            if (rank == 0) fprintf(stderr, "tile_gemm_ceiling: unknown option %s\n", argv[i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (n < 1 || nb < 1 || nruns < 1) {
        if (rank == 0) fprintf(stderr, "tile_gemm_ceiling: -N, -t and --nruns must be >= 1\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int nt = (n + nb - 1) / nb;
    /* weft-gemm's default seed (42) and its three matrices. */
    double **a = tiles_new(n, nb, nt, dense_seed(42, 0)),
           **b = tiles_new(n, nb, nt, dense_seed(42, 1)),
           **c = tiles_new(n, nb, nt, dense_seed(42, 2));
    if (!a || !b || !c) {
        fprintf(stderr, "tile_gemm_ceiling: rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int run = 0; run < nruns; run++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        /* This rank's C tiles: every nranks-th of the nt * nt, by columns. */
        for (int ct = rank; ct < nt * nt; ct += nranks) {
            int i = ct % nt, j = ct / nt, m = tile_dim(n, nb, i), w = tile_dim(n, nb, j);
            for (int k = 0; k < nt; k++) {
                int kd = tile_dim(n, nb, k);
                cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, w, kd, 0.5,
                            a[(size_t)k * nt + i], m, b[(size_t)j * nt + k], kd,
                            k == 0 ? -0.25 : 1.0, c[(size_t)j * nt + i], m);
            }
        }
        double t = MPI_Wtime() - t0;
        MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (rank == 0)
            printf(
                "[****] TIME(s) %12.5f : dgemm-bare-tiles ranks= %d NB= %d N= %d : %14f gflops\n",
                t, nranks, nb, n, 2.0 * (double)n * (double)n * (double)n / t / 1e9);
    }
    MPI_Finalize();
    return 0;
}
