/* scalapack_getrf: the distributed peer of weft-getrf, ScaLAPACK's pdgetrf
 * on a P x Q BLACS grid (default 1 x ranks). pdgetrf PIVOTS (partial row
 * pivoting, ScaLAPACK has no LU without it): it does the search and the row
 * swaps that weft-getrf skips, on the same diagonally dominant matrix,
 * where the pivots it picks are the diagonal ones anyway.
 *
 * Usage: mpiexec -n <ranks> scalapack_getrf [-N n] [-t nb] [-P p] [-Q q]
 *                                           [--seed s] [--nruns r] [--check]
 *
 * The matrix is weft-getrf's (apps/lu_matrix.h); each rank generates its
 * block-cyclic part, nothing is scattered, and it is regenerated before
 * each run. Only pdgetrf is timed, between two barriers. One line a run on
 * rank 0, in weft-getrf's format, with gflops = 2 N^3 / 3 / time:
 *   [****] TIME(s) <t> : pdgetrf PxQ= <p> <q> NB= <nb> N= <n> : <gflops> gflops
 * --check solves A x = A 1 with pdgetrs after the last run and prints
 * "check: max |x - 1| = <e> : PASSED|FAILED". */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "../apps/lu_matrix.h" /* the matrix weft-getrf factorizes */

/* BLACS and ScaLAPACK (Fortran symbols; no installed header declares them). */
void Cblacs_get(int icontxt, int what, int *val);
void Cblacs_gridinit(int *icontxt, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int icontxt, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int icontxt);
void Cblacs_exit(int notdone);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrcproc, const int *nprocs);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb,
               const int *irsrc, const int *icsrc, const int *ictxt, const int *lld, int *info);
void pdgetrf_(const int *m, const int *n, double *a, const int *ia, const int *ja, const int *desca,
              int *ipiv, int *info);
void pdgetrs_(const char *trans, const int *n, const int *nrhs, const double *a, const int *ia,
              const int *ja, const int *desca, const int *ipiv, double *b, const int *ib,
              const int *jb, const int *descb, int *info);

typedef struct grid {
    int ctx, nprow, npcol, myrow, mycol;
} grid_t;

/* The local layout of the N x N matrix on this process. */
typedef struct local {
    int n, nb, mloc, nloc, lld, desca[9];
    uint64_t seed;
    double *a;
    int *ipiv;
} local_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Global index of local index l (0-based) of a block-cyclic dimension. */
static int64_t global_of(int l, int nb, int me, int nprocs)
{
    return ((int64_t)(l / nb) * nprocs + me) * nb + l % nb;
}

static void fill(const grid_t *g, const local_t *x)
{
    for (int jl = 0; jl < x->nloc; jl++) {
        int64_t j = global_of(jl, x->nb, g->mycol, g->npcol);
        for (int il = 0; il < x->mloc; il++)
            x->a[il + (int64_t)jl * x->lld] =
                lu_elem(x->seed, x->n, global_of(il, x->nb, g->myrow, g->nprow), j);
    }
}

/* Solves A x = A 1 with the factors; the largest |x_i - 1| over ranks. */
static double check(const grid_t *g, const local_t *x)
{
    int zero = 0, one = 1, info = 0, descb[9];
    descinit_(descb, &x->n, &one, &x->nb, &x->nb, &zero, &zero, &g->ctx, &x->lld, &info);
    double *b = calloc((size_t)x->lld, sizeof *b), err = 0.0, all = 0.0;
    if (info != 0 || b == NULL) {
        free(b);
        return INFINITY;
    }
    if (g->mycol == 0) /* b lives on process column 0: b_i = sum_j A(i,j) */
        for (int il = 0; il < x->mloc; il++) {
            int64_t i = global_of(il, x->nb, g->myrow, g->nprow);
            for (int64_t j = 0; j < x->n; j++) b[il] += lu_elem(x->seed, x->n, i, j);
        }
    pdgetrs_("N", &x->n, &one, x->a, &one, &one, x->desca, x->ipiv, b, &one, &one, descb, &info);
    if (info != 0) err = INFINITY;
    for (int il = 0; info == 0 && g->mycol == 0 && il < x->mloc; il++)
        if (!(fabs(b[il] - 1.0) <= err)) err = fabs(b[il] - 1.0);
    free(b);
    MPI_Allreduce(&err, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return all;
}

/* nruns factorizations of a fresh matrix, timed between barriers. */
static int timed_runs(const grid_t *g, local_t *x, long long nruns)
{
    int rank = 0, one = 1, info = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (long long r = 0; r < nruns; r++) {
        fill(g, x);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = now_s();
        pdgetrf_(&x->n, &x->n, x->a, &one, &one, x->desca, x->ipiv, &info);
        MPI_Barrier(MPI_COMM_WORLD);
        double t = now_s() - t0, nn = (double)x->n;
        if (info != 0) {
            if (rank == 0) fprintf(stderr, "scalapack_getrf: pdgetrf info = %d\n", info);
            return 1;
        }
        if (rank == 0)
            printf("[****] TIME(s) %.6f : pdgetrf PxQ= %d %d NB= %d N= %d : %.2f gflops\n", t,
                   g->nprow, g->npcol, x->nb, x->n, 2.0 * nn * nn * nn / 3.0 / t * 1e-9);
        fflush(stdout);
    }
    return 0;
}

typedef struct opts {
    long long n, nb, p, q, nruns, seed;
    int check;
} opts_t;

/* The flags into o; -1 for a malformed command line. */
static int parse(int argc, char **argv, opts_t *o)
{
    const char *names[] = {"-N", "-t", "-P", "-Q", "--nruns", "--seed"};
    long long *dst[] = {&o->n, &o->nb, &o->p, &o->q, &o->nruns, &o->seed};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--check") == 0) {
            o->check = 1;
            continue;
        }
        int f = 0;
        while (f < 6 && strcmp(argv[i], names[f]) != 0) f++;
        char *end = NULL;
        if (f == 6 || i + 1 >= argc) return -1;
        long long v = strtoll(argv[++i], &end, 10);
        if (*end != '\0' || end == argv[i] || v < 0) return -1;
        *dst[f] = v;
    }
    return 0;
}

/* Grid, descriptor, memory; 0, or 1 after a message. */
static int setup(grid_t *g, local_t *x, const opts_t *o)
{
    int zero = 0, info = 0;
    Cblacs_get(0, 0, &g->ctx);
    Cblacs_gridinit(&g->ctx, "Row", (int)o->p, (int)o->q);
    Cblacs_gridinfo(g->ctx, &g->nprow, &g->npcol, &g->myrow, &g->mycol);
    x->n = (int)o->n;
    x->nb = (int)o->nb;
    x->seed = (uint64_t)o->seed;
    x->mloc = numroc_(&x->n, &x->nb, &g->myrow, &zero, &g->nprow);
    x->nloc = numroc_(&x->n, &x->nb, &g->mycol, &zero, &g->npcol);
    x->lld = x->mloc > 1 ? x->mloc : 1;
    descinit_(x->desca, &x->n, &x->n, &x->nb, &x->nb, &zero, &zero, &g->ctx, &x->lld, &info);
    x->a = malloc(sizeof(double) * (size_t)x->lld * (size_t)(x->nloc > 0 ? x->nloc : 1));
    x->ipiv = malloc(sizeof(int) * (size_t)(x->mloc + x->nb));
    if (info == 0 && x->a != NULL && x->ipiv != NULL) return 0;
    fprintf(stderr, "scalapack_getrf: descinit info %d or no memory\n", info);
    return 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, nranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    opts_t o = {.n = 6144, .nb = 128, .p = 1, .q = -1, .nruns = 1, .seed = 42};
    int bad = parse(argc, argv, &o) != 0;
    if (o.q < 0 && o.p > 0) o.q = nranks / o.p;
    if (bad || o.n < 1 || o.n > INT32_MAX / 2 || o.nb < 1 || o.nb > o.n || o.nruns < 1 || o.p < 1 ||
        o.p * o.q != nranks) {
        if (rank == 0)
            fprintf(stderr,
                    "usage: mpiexec -n <ranks> %s [-N n] [-t nb <= n] [-P p] [-Q q] "
                    "[--seed s] [--nruns r] [--check]  (P*Q = ranks = %d)\n",
                    argv[0], nranks);
        MPI_Finalize();
        return 2;
    }
    grid_t g;
    local_t x = {0};
    int rc = setup(&g, &x, &o);
    if (rc == 0) rc = timed_runs(&g, &x, o.nruns);
    if (rc == 0 && o.check) {
        double err = check(&g, &x);
        int passed = err < 1e-8;
        if (rank == 0)
            printf("check: max |x - 1| = %.3e : %s\n", err, passed ? "PASSED" : "FAILED");
        rc = !passed;
    }
    free(x.a);
    free(x.ipiv);
    Cblacs_gridexit(g.ctx);
    Cblacs_exit(1);
    MPI_Finalize();
    return rc;
}
