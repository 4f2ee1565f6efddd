/* A cheap check of a Cholesky factor L of the test matrix A0 of
 * apps/potrf_matrix.h, for the peers of weft-potrf in bench/.
 *
 * weft-potrf's check, ||A0 - L L^T||_F / (||A0||_F N eps), costs as much as
 * the factorization itself: too slow on one host at N = 98304. This one
 * applies both sides to one pseudo-random vector x instead:
 *
 *   r = sqrt(N) ||A0 x - L (L^T x)||_2 / (||A0||_F ||x||_2 N eps),  eps = 2^-53
 *
 * which is O(N^2): A0 x with A0 regenerated element by element (nothing of
 * N^2 size is stored besides L), and two triangular products with L.
 *
 * Why it is a valid test. With E = A0 - L L^T and x of independent entries,
 * the expected ||E x||^2 is ||E||_F^2 ||x||^2 / N: the sqrt(N) makes r an
 * estimate of the matrix residual, so the same threshold keeps its meaning,
 * r < 60 (POTRF_VCHECK_MAX, weft-potrf's POTRF_RESIDUAL_MAX); without it a
 * fixed threshold would be sqrt(N) times looser. A wrong factor has E != 0,
 * and E x = 0 only when x lies in the null space of E, a set of measure
 * zero: x is a hash of its index, unrelated to E, so a wrong factor shows
 * with overwhelming probability, and with a residual far above the
 * threshold (a change of 1e-6 in one element of L at N = 300 already gives
 * r in the thousands). A NaN anywhere in L makes r NaN, which fails the
 * r < 60 comparison as it should.
 *
 * L is read through a column accessor, so that one code serves both a
 * plain column-major array and the column block cyclic layout of
 * cusolverMg; only its lower triangle (i >= j) is read, since cuSOLVER
 * leaves the upper one as it found it. Header-only, plain C; OpenMP
 * pragmas (build with -fopenmp). */
#ifndef WEFT_BENCH_POTRF_VCHECK_H
#define WEFT_BENCH_POTRF_VCHECK_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../apps/potrf_matrix.h"

/* A run passes when the residual is below this (weft-potrf's threshold). */
#define POTRF_VCHECK_MAX 60.0

/* The seed of x: fixed, so that every program checks with the same x. */
#define POTRF_VCHECK_XSEED 0x5ca1ab1ec0ffee42ULL

/* Rows a task of the product L y: a strip of 2 KB of each column it reads. */
#define POTRF_VCHECK_ROWS 256

/* A pointer to element (0, j) of global column j of L. */
typedef const double *(*potrf_vcheck_col_fn)(void *arg, int64_t j);

/* L in one column-major array with leading dimension ld. */
typedef struct potrf_vcheck_dense {
    const double *a;
    int64_t ld;
} potrf_vcheck_dense_t;

static inline const double *potrf_vcheck_dense_col(void *arg, int64_t j)
{
    const potrf_vcheck_dense_t *d = arg;
    return d->a + j * d->ld;
}

/* L split in column blocks of tile columns, dealt round-robin to ndev
 * devices as cusolverMg's 1 x ndev grid does: global block b is local
 * block b / ndev of device b % ndev, whose columns local[b % ndev] holds
 * contiguously, column-major with leading dimension ld. */
typedef struct potrf_vcheck_cyclic {
    double *const *local;
    int64_t ld, tile;
    int ndev;
} potrf_vcheck_cyclic_t;

static inline const double *potrf_vcheck_cyclic_col(void *arg, int64_t j)
{
    const potrf_vcheck_cyclic_t *c = arg;
    int64_t b = j / c->tile, lcol = (b / c->ndev) * c->tile + j % c->tile;
    return c->local[b % c->ndev] + lcol * c->ld;
}

/* Entry i of x, in [-0.5, 0.5) like the elements of A0. */
static inline double potrf_vcheck_x(int64_t i)
{
    uint64_t h = potrf_mix64(potrf_mix64(POTRF_VCHECK_XSEED) + (uint64_t)i);
    return (double)(h >> 11) * 0x1.0p-53 - 0.5;
}

/* w = A0 x, a row a time (A0 is symmetric, so row i is column i: every
 * (i, j) comes from potrf_elem); returns ||A0||_F^2 from the same pass. */
static inline double potrf_vcheck_ax(uint64_t seed, int64_t n, const double *x, double *w)
{
    double fro2 = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : fro2)
    for (int64_t i = 0; i < n; i++) {
        double s = 0.0, f = 0.0;
        for (int64_t j = 0; j < n; j++) {
            double a = potrf_elem(seed, n, i, j);
            s += a * x[j];
            f += a * a;
        }
        w[i] = s;
        fro2 += f;
    }
    return fro2;
}

/* y = L^T x: y_j is the dot product of column j (from the diagonal down)
 * with x, so each thread writes its own y_j and reads contiguous memory.
 * Dynamic schedule: the columns shorten from left to right. */
static inline void potrf_vcheck_ltx(int64_t n, potrf_vcheck_col_fn col, void *arg, const double *x,
                                    double *y)
{
#pragma omp parallel for schedule(dynamic, 16)
    for (int64_t j = 0; j < n; j++) {
        const double *c = col(arg, j);
        double s = 0.0;
        for (int64_t i = j; i < n; i++) s += c[i] * x[i];
        y[j] = s;
    }
}

/* z = L y by strips of rows: a task owns rows [r0, r1) of z, so no two
 * threads write the same entry, and sweeps the columns j < r1 adding
 * L(r0:r1, j) y_j. The strips are taken bottom first, the longest first,
 * for a better balance. */
static inline void potrf_vcheck_ly(int64_t n, potrf_vcheck_col_fn col, void *arg, const double *y,
                                   double *z)
{
    int64_t nstrips = (n + POTRF_VCHECK_ROWS - 1) / POTRF_VCHECK_ROWS;
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t s = 0; s < nstrips; s++) {
        int64_t r0 = (nstrips - 1 - s) * POTRF_VCHECK_ROWS;
        int64_t r1 = r0 + POTRF_VCHECK_ROWS < n ? r0 + POTRF_VCHECK_ROWS : n;
        for (int64_t i = r0; i < r1; i++) z[i] = 0.0;
        for (int64_t j = 0; j < r1; j++) {
            const double *c = col(arg, j);
            double yj = y[j];
            for (int64_t i = j > r0 ? j : r0; i < r1; i++) z[i] += c[i] * yj;
        }
    }
}

/* The scaled residual r of the factor L of the n x n matrix of seed
 * seed, L read through col(arg, j); a run passes when
 * r < POTRF_VCHECK_MAX. Returns -1 when the 4 n doubles of work space
 * cannot be allocated. */
static inline double potrf_vcheck(uint64_t seed, int64_t n, potrf_vcheck_col_fn col, void *arg)
{
    double *v = malloc(4 * (size_t)n * sizeof *v);
    if (v == NULL) return -1.0;
    double *x = v, *w = v + n, *y = v + 2 * n, *z = v + 3 * n;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) x[i] = potrf_vcheck_x(i);
    double fro2 = potrf_vcheck_ax(seed, n, x, w);
    potrf_vcheck_ltx(n, col, arg, x, y);
    potrf_vcheck_ly(n, col, arg, y, z);
    double r2 = 0.0, x2 = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : r2, x2)
    for (int64_t i = 0; i < n; i++) {
        double d = w[i] - z[i];
        r2 += d * d;
        x2 += x[i] * x[i];
    }
    free(v);
    double eps = DBL_EPSILON / 2.0; /* 2^-53, LAPACK's dlamch('e') */
    return sqrt((double)n) * sqrt(r2) / (sqrt(fro2) * sqrt(x2) * (double)n * eps);
}

/* Prints weft-potrf's check line for resid ("residual = r : PASSED" when
 * r < POTRF_VCHECK_MAX, else FAILED) and returns 0 when it passed, 1
 * otherwise; a negative resid (no memory for the check) is reported as
 * such, for program prog. */
static inline int potrf_vcheck_report(const char *prog, double resid)
{
    if (resid < 0.0) {
        fprintf(stderr, "%s: no host memory for the check\n", prog);
        return 1;
    }
    int passed = resid < POTRF_VCHECK_MAX;
    printf("residual = %.6e : %s\n", resid, passed ? "PASSED" : "FAILED");
    fflush(stdout);
    return passed ? 0 : 1;
}

#endif
