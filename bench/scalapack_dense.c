/* scalapack_dense: the distributed peers of weft-gemm and weft-posv,
 * ScaLAPACK's pdgemm and pdposv on a P x Q BLACS grid.
 *
 * Usage: mpiexec -n <ranks> scalapack_dense gemm|posv [-N n] [-t nb] [-P p]
 *                                           [-Q q] [--nrhs r] [--nruns k]
 *
 * The matrices are those of the weft apps: gemm C = 0.5 A B - 0.25 C with
 * N x N matrices of apps/dense_matrix.h (seeds as weft-gemm's first run);
 * posv A of apps/potrf_matrix.h and B (N x NRHS) of dense_matrix.h. Each
 * rank generates its own block-cyclic part; only the ScaLAPACK call is
 * timed, between two barriers, and rank 0 prints a line in the apps'
 * format (gflops: 2 N^3 for gemm, N^3/3 + 2 N^2 NRHS for posv). */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "../apps/dense_matrix.h"

void Cblacs_get(int icontxt, int what, int *val);
void Cblacs_gridinit(int *icontxt, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int icontxt, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int icontxt);
void Cblacs_exit(int notdone);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrcproc, const int *nprocs);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb,
               const int *irsrc, const int *icsrc, const int *ictxt, const int *lld, int *info);
void pdgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
             const double *alpha, const double *a, const int *ia, const int *ja, const int *desca,
             const double *b, const int *ib, const int *jb, const int *descb, const double *beta,
             double *c, const int *ic, const int *jc, const int *descc);
void pdposv_(const char *uplo, const int *n, const int *nrhs, double *a, const int *ia,
             const int *ja, const int *desca, double *b, const int *ib, const int *jb,
             const int *descb, int *info);

typedef struct grid {
    int ctx, nprow, npcol, myrow, mycol, nb;
} grid_t;

/* A distributed m x n matrix: local array and descriptor. */
typedef struct dmat {
    int m, n, mloc, nloc, desc[9];
    double *a;
} dmat_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int64_t global_index(int l, int nb, int me, int nprocs)
{
    return ((int64_t)(l / nb) * nprocs + me) * nb + l % nb;
}

static int dmat_init(const grid_t *g, dmat_t *d, int m, int n)
{
    int zero = 0, info = 0;
    d->m = m;
    d->n = n;
    d->mloc = numroc_(&m, &g->nb, &g->myrow, &zero, &g->nprow);
    d->nloc = numroc_(&n, &g->nb, &g->mycol, &zero, &g->npcol);
    int lld = d->mloc > 1 ? d->mloc : 1;
    descinit_(d->desc, &m, &n, &g->nb, &g->nb, &zero, &zero, &g->ctx, &lld, &info);
    d->a = malloc(sizeof(double) * (size_t)lld * (size_t)(d->nloc > 0 ? d->nloc : 1));
    return info != 0 || d->a == NULL ? -1 : 0;
}

/* Fills the local part: spd != 0 for weft-posv's A, else dense_elem(seed). */
static void dmat_fill(const grid_t *g, dmat_t *d, int spd, uint64_t seed)
{
    int lld = d->mloc > 1 ? d->mloc : 1;
    for (int jl = 0; jl < d->nloc; jl++) {
        int64_t j = global_index(jl, g->nb, g->mycol, g->npcol);
        for (int il = 0; il < d->mloc; il++) {
            int64_t i = global_index(il, g->nb, g->myrow, g->nprow);
            d->a[il + (int64_t)jl * lld] =
                spd ? potrf_elem(seed, d->m, i, j) : dense_elem(seed, i, j);
        }
    }
}

/* One timed call of op on freshly generated matrices; seconds, or -1. */
static double run_once(const grid_t *g, int posv, dmat_t *m)
{
    int one = 1, info = 0;
    uint64_t seed = 42;
    double alpha = 0.5, beta = -0.25, t0;
    if (posv) {
        dmat_fill(g, &m[0], 1, seed);
        dmat_fill(g, &m[1], 0, dense_seed(seed, 1));
    } else {
        for (int i = 0; i < 3; i++) dmat_fill(g, &m[i], 0, dense_seed(seed, (uint64_t)i));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = now_s();
    if (posv)
        pdposv_("L", &m[0].n, &m[1].n, m[0].a, &one, &one, m[0].desc, m[1].a, &one, &one, m[1].desc,
                &info);
    else
        pdgemm_("N", "N", &m[0].m, &m[1].n, &m[0].n, &alpha, m[0].a, &one, &one, m[0].desc, m[1].a,
                &one, &one, m[1].desc, &beta, m[2].a, &one, &one, m[2].desc);
    MPI_Barrier(MPI_COMM_WORLD);
    return info != 0 ? -1.0 : now_s() - t0;
}

/* The op (argv[1]) and the flags after it; -1 for a malformed line. */
static int parse(int argc, char **argv, int *n, int *nb, int *p, int *q, int *nrhs, int *nruns)
{
    if (argc < 2 || (strcmp(argv[1], "posv") != 0 && strcmp(argv[1], "gemm") != 0)) return -1;
    for (int i = 2; i < argc; i += 2) {
        int *dst = strcmp(argv[i], "-N") == 0        ? n
                   : strcmp(argv[i], "-t") == 0      ? nb
                   : strcmp(argv[i], "-P") == 0      ? p
                   : strcmp(argv[i], "-Q") == 0      ? q
                   : strcmp(argv[i], "--nrhs") == 0  ? nrhs
                   : strcmp(argv[i], "--nruns") == 0 ? nruns
                                                     : NULL;
        if (dst == NULL || i + 1 >= argc) return -1;
        *dst = atoi(argv[i + 1]);
    }
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, nranks = 1, n = 4096, nb = 128, p = 1, q = -1, nrhs = 256, nruns = 1, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int posv = argc > 1 && strcmp(argv[1], "posv") == 0;
    bad = parse(argc, argv, &n, &nb, &p, &q, &nrhs, &nruns);
    if (q < 0 && p > 0) q = nranks / p;
    if (bad || n < 1 || nb < 1 || p < 1 || p * q != nranks || nrhs < 1 || nruns < 1) {
        if (rank == 0)
            fprintf(stderr,
                    "usage: mpiexec -n <ranks> %s gemm|posv [-N n] [-t nb] [-P p] [-Q q] "
                    "[--nrhs r] [--nruns k]  (P*Q = ranks = %d)\n",
                    argv[0], nranks);
        MPI_Finalize();
        return 2;
    }
    grid_t g = {.nb = nb};
    Cblacs_get(0, 0, &g.ctx);
    Cblacs_gridinit(&g.ctx, "Row", p, q);
    Cblacs_gridinfo(g.ctx, &g.nprow, &g.npcol, &g.myrow, &g.mycol);
    dmat_t m[3] = {{0}};
    int nm = posv ? 2 : 3, rc = 0;
    for (int i = 0; i < nm; i++)
        if (dmat_init(&g, &m[i], n, posv && i == 1 ? nrhs : n) != 0) MPI_Abort(MPI_COMM_WORLD, 1);
    for (int r = 0; r < nruns && rc == 0; r++) {
        double t = run_once(&g, posv, m), nn = n;
        double flops = posv ? nn * nn * nn / 3.0 + 2.0 * nn * nn * nrhs : 2.0 * nn * nn * nn;
        rc = t < 0;
        if (rank == 0 && t >= 0)
            printf("[****] TIME(s) %.6f : pd%s PxQ= %d %d NB= %d N= %d : %.2f gflops\n", t,
                   posv ? "posv" : "gemm", p, q, nb, n, flops / t * 1e-9);
        fflush(stdout);
    }
    for (int i = 0; i < nm; i++) free(m[i].a);
    Cblacs_gridexit(g.ctx);
    Cblacs_exit(1);
    MPI_Finalize();
    return rc;
}
