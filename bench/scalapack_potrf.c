/* scalapack_potrf: the distributed peer of weft-potrf, ScaLAPACK's pdpotrf
 * on a P x Q BLACS grid (default 1 x ranks).
 *
 * Usage: mpiexec -n <ranks> scalapack_potrf [-N n] [-t nb] [-P p] [-Q q]
 *                                           [--seed s] [--nruns r] [--check]
 *
 * The matrix is the one weft-potrf factorizes: element (i,j) a hash of
 * (seed, max(i,j), min(i,j)) in [-0.5, 0.5), plus N on the diagonal
 * (diagonally dominant, hence SPD); the generator is apps/potrf_matrix.h,
 * shared with weft-potrf. Each rank generates its own block-cyclic part (nothing is
 * scattered). Lower Cholesky. Only pdpotrf is timed, between two barriers;
 * the matrix is regenerated for each run. Prints one line a run on rank 0,
 * in weft-potrf's format:
 *   [****] TIME(s) <t> : pdpotrf PxQ= <p> <q> NB= <nb> N= <n> : <gflops> gflops
 * with gflops = N^3/3 / t. --check solves A x = A 1 with pdpotrs after the
 * last run and prints "check: max |x - 1| = <e> : PASSED|FAILED". */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "../apps/potrf_matrix.h" /* the matrix weft-potrf factorizes */

/* BLACS and ScaLAPACK (Fortran symbols; no installed header declares them). */
void Cblacs_pinfo(int *mypnum, int *nprocs);
void Cblacs_get(int icontxt, int what, int *val);
void Cblacs_gridinit(int *icontxt, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int icontxt, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int icontxt);
void Cblacs_exit(int notdone);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrcproc, const int *nprocs);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb,
               const int *irsrc, const int *icsrc, const int *ictxt, const int *lld, int *info);
void pdpotrf_(const char *uplo, const int *n, double *a, const int *ia, const int *ja,
              const int *desca, int *info);
void pdpotrs_(const char *uplo, const int *n, const int *nrhs, const double *a, const int *ia,
              const int *ja, const int *desca, double *b, const int *ib, const int *jb,
              const int *descb, int *info);

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Global index of local index l (0-based) of a block-cyclic dimension. */
static int64_t global_index(int l, int nb, int me, int nprocs)
{
    return ((int64_t)(l / nb) * nprocs + me) * nb + l % nb;
}

typedef struct grid {
    int ctx, nprow, npcol, myrow, mycol;
} grid_t;

/* Fills the local part (mloc x nloc, leading dimension lld) of A. */
static void fill(const grid_t *g, uint64_t seed, int n, int nb, int mloc, int nloc, int lld,
                 double *a)
{
    for (int jl = 0; jl < nloc; jl++) {
        int64_t j = global_index(jl, nb, g->mycol, g->npcol);
        for (int il = 0; il < mloc; il++)
            a[il + (int64_t)jl * lld] =
                potrf_elem(seed, n, global_index(il, nb, g->myrow, g->nprow), j);
    }
}

/* Solves A x = A 1 with the factor in a; the largest |x_i - 1| over ranks. */
static double check(const grid_t *g, uint64_t seed, int n, int nb, int mloc, const int *desca,
                    const double *a)
{
    int zero = 0, one = 1, info = 0, lld = mloc > 1 ? mloc : 1, descb[9];
    descinit_(descb, &n, &one, &nb, &nb, &zero, &zero, &g->ctx, &lld, &info);
    double *b = calloc((size_t)lld, sizeof *b);
    if (info != 0 || b == NULL) {
        fprintf(stderr, "scalapack_potrf: cannot set up the check (info %d)\n", info);
        free(b);
        return INFINITY;
    }
    /* b lives on process column 0: b_i = sum_j A(i,j). */
    if (g->mycol == 0)
        for (int il = 0; il < mloc; il++) {
            int64_t i = global_index(il, nb, g->myrow, g->nprow);
            double s = 0.0;
            for (int64_t j = 0; j < n; j++) s += potrf_elem(seed, n, i, j);
            b[il] = s;
        }
    pdpotrs_("L", &n, &one, a, &one, &one, desca, b, &one, &one, descb, &info);
    double err = 0.0;
    if (info != 0)
        err = INFINITY;
    else if (g->mycol == 0)
        for (int il = 0; il < mloc; il++) {
            double e = fabs(b[il] - 1.0);
            if (!(e <= err)) err = e;
        }
    free(b);
    double all = 0.0;
    MPI_Allreduce(&err, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return all;
}

typedef struct opts {
    long long n, nb, p, q, nruns;
    uint64_t seed;
    int check;
} opts_t;

/* The flags; 0, or -1 for a malformed command line. */
static int parse(int argc, char **argv, opts_t *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--check") == 0) {
            o->check = 1;
            continue;
        }
        if (v == NULL) return -1;
        char *end = NULL;
        long long x = strtoll(v, &end, 10);
        if (end == v || *end != '\0' || x < 0)
            return -1;
        else if (strcmp(a, "-N") == 0)
            o->n = x;
        else if (strcmp(a, "-t") == 0)
            o->nb = x;
        else if (strcmp(a, "-P") == 0)
            o->p = x;
        else if (strcmp(a, "-Q") == 0)
            o->q = x;
        else if (strcmp(a, "--nruns") == 0)
            o->nruns = x;
        else if (strcmp(a, "--seed") == 0)
            o->seed = (uint64_t)x;
        else
            return -1;
        i++;
    }
    return 0;
}

/* nruns factorizations of a freshly generated matrix, each timed between
 * two barriers and printed by rank 0; 0, or 1 when pdpotrf failed. */
static int timed_runs(grid_t *g, uint64_t seed, int ni, int nbi, int mloc, int nloc, int lld,
                      int *desca, double *a, long long nruns)
{
    int rank = 0, one = 1, info = 0, rc = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (long long r = 0; r < nruns && rc == 0; r++) {
        fill(g, seed, ni, nbi, mloc, nloc, lld, a);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = now_s();
        pdpotrf_("L", &ni, a, &one, &one, desca, &info);
        MPI_Barrier(MPI_COMM_WORLD);
        double t = now_s() - t0;
        if (info != 0) {
            if (rank == 0) fprintf(stderr, "scalapack_potrf: pdpotrf info = %d\n", info);
            rc = 1;
            break;
        }
        double nn = (double)ni;
        if (rank == 0)
            printf("[****] TIME(s) %.6f : pdpotrf PxQ= %d %d NB= %d N= %d : %.2f gflops\n", t,
                   g->nprow, g->npcol, nbi, ni, nn * nn * nn / 3.0 / t * 1e-9);
        fflush(stdout);
    }
    return rc;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, nranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    opts_t o = {.n = 8192, .nb = 128, .p = 1, .q = -1, .nruns = 1, .seed = 42};
    int bad = parse(argc, argv, &o) != 0;
    long long n = o.n, nb = o.nb, p = o.p, q = o.q, nruns = o.nruns;
    uint64_t seed = o.seed;
    int do_check = o.check;
    if (q < 0 && p > 0) q = nranks / p;
    if (bad || n < 1 || n > INT32_MAX / 2 || nb < 1 || nb > n || nruns < 1 || p < 1 ||
        p * q != nranks) {
        if (rank == 0)
            fprintf(stderr,
                    "usage: mpiexec -n <ranks> %s [-N n] [-t nb <= n] [-P p] [-Q q] "
                    "[--seed s] [--nruns r] [--check]  (P*Q = ranks = %d)\n",
                    argv[0], nranks);
        MPI_Finalize();
        return 2;
    }

    grid_t g;
    int ni = (int)n, nbi = (int)nb, zero = 0, info = 0;
    Cblacs_get(0, 0, &g.ctx);
    Cblacs_gridinit(&g.ctx, "Row", (int)p, (int)q);
    Cblacs_gridinfo(g.ctx, &g.nprow, &g.npcol, &g.myrow, &g.mycol);
    int mloc = numroc_(&ni, &nbi, &g.myrow, &zero, &g.nprow);
    int nloc = numroc_(&ni, &nbi, &g.mycol, &zero, &g.npcol);
    int lld = mloc > 1 ? mloc : 1, desca[9];
    descinit_(desca, &ni, &ni, &nbi, &nbi, &zero, &zero, &g.ctx, &lld, &info);
    double *a = malloc(sizeof(double) * (size_t)lld * (size_t)(nloc > 0 ? nloc : 1));
    if (info != 0 || a == NULL) {
        fprintf(stderr, "scalapack_potrf: rank %d: descinit info %d or no memory\n", rank, info);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int rc = timed_runs(&g, seed, ni, nbi, mloc, nloc, lld, desca, a, nruns);
    if (rc == 0 && do_check) {
        double err = check(&g, seed, ni, nbi, mloc, desca, a);
        int passed = err < 1e-8;
        if (rank == 0)
            printf("check: max |x - 1| = %.3e : %s\n", err, passed ? "PASSED" : "FAILED");
        rc = !passed;
    }
    free(a);
    Cblacs_gridexit(g.ctx);
    Cblacs_exit(1);
    MPI_Finalize();
    return rc;
}
