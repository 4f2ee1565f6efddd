/* lapacke_potrf: the peer of weft-potrf on one node, LAPACKE_dpotrf of the
 * installed LAPACK (OpenBLAS, with its own threads: OPENBLAS_NUM_THREADS).
 *
 * Usage: lapacke_potrf [-N n] [--seed s] [--nruns r]
 *
 * The matrix is the one weft-potrf factorizes: element (i,j) a hash of
 * (seed, max(i,j), min(i,j)) in [-0.5, 0.5), plus N on the diagonal
 * (diagonally dominant, hence SPD); the generator is apps/potrf_matrix.h,
 * shared with weft-potrf. Lower Cholesky, column-major, lda = N.
 * Only the factorization is timed; the matrix is regenerated for each run.
 * Prints one line a run, in weft-potrf's format:
 *   [****] TIME(s) <t> : LAPACKE_dpotrf threads= <T> N= <n> : <gflops> gflops
 * with gflops = N^3/3 / t, the count weft-potrf's line is compared with. */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h> /* OpenBLAS's: declares openblas_get_num_threads */
#include <lapacke.h>

#include "../apps/potrf_matrix.h" /* the matrix weft-potrf factorizes */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    int64_t n = 8192;
    uint64_t seed = 42;
    int nruns = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-N") == 0)
            n = atoll(argv[i + 1]);
        else if (strcmp(argv[i], "--seed") == 0)
            seed = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--nruns") == 0)
            nruns = atoi(argv[i + 1]);
    }
    if (n < 1 || nruns < 1) {
        fprintf(stderr, "usage: %s [-N n] [--seed s] [--nruns r]\n", argv[0]);
        return 2;
    }
    double *a = malloc((size_t)n * (size_t)n * sizeof *a);
    if (a == NULL) {
        fprintf(stderr, "lapacke_potrf: cannot allocate %lld^2 doubles\n", (long long)n);
        return 1;
    }
    for (int r = 0; r < nruns; r++) {
        /* Lower triangle only: dpotrf('L') never reads the upper one. */
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = j; i < n; i++) a[i + j * n] = potrf_elem(seed, n, i, j);
        double t0 = now_s();
        lapack_int info = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', (lapack_int)n, a, (lapack_int)n);
        double t = now_s() - t0;
        if (info != 0) {
            fprintf(stderr, "lapacke_potrf: dpotrf info = %d\n", (int)info);
            free(a);
            return 1;
        }
        double nn = (double)n;
        printf("[****] TIME(s) %12.5f : LAPACKE_dpotrf threads= %d N= %lld : %14.6f gflops\n", t,
               openblas_get_num_threads(), (long long)n, nn * nn * nn / 3.0 / t * 1e-9);
        fflush(stdout);
    }
    free(a);
    return 0;
}
