/* weft-potrf --ptg: the tiled Cholesky factorization (lower) of
 * potrf_dag.h as a parameterized task graph (include/weft/ptg.h,
 * docs/PTG.md): the same tasks, bodies, priorities and placement (the
 * owner of the written tile runs each task), described by index spaces
 * and the dataflow between them instead of insertion in a loop.
 *
 *   POTRF(k)       RW A[k][k]                    0 <= k < nt
 *   TRSM(k, m)     R A[k][k], RW A[m][k]         k < m < nt
 *   SYRK(k, m)     R A[m][k], RW A[m][m]         k < m < nt
 *   GEMM(k, m, n)  R A[m][k], R A[n][k], RW A[m][n]   k < n < m < nt
 *
 * A[m][n] (m > n) is written by GEMM(0..n-1, m, n) in turn, then by
 * TRSM(n, m); A[m][m] by SYRK(0..m-1, m), then POTRF(m). Header-only. */
#ifndef WEFT_APPS_POTRF_PTG_H
#define WEFT_APPS_POTRF_PTG_H

#include <weft/ptg.h>
#include <weft/weft.h>

#include "potrf_dag.h"

enum { PP_POTRF = 0, PP_TRSM = 1, PP_SYRK = 2, PP_GEMM = 3 };

typedef struct potrf_ptg {
    weft_matrix_t *A;
    int nt;
    int p, q; /* the P x Q block-cyclic grid of A (weft_matrix_new) */
} potrf_ptg_t;

static int pp_nt(const void *arg) { return ((const potrf_ptg_t *)arg)->nt; }

/* weft_dist_block_cyclic_rank's rule, without a call per index point
 * (weft checks it against the tiles' owners for every task it keeps). */
static int pp_rank_at(const void *arg, int m, int n)
{
    const potrf_ptg_t *a = arg;
    return (m % a->p) * a->q + n % a->q;
}

static weft_ptg_ref_t pp_ref(int cls, int flow, int a, int b, int c)
{
    weft_ptg_ref_t r = {.cls = cls, .flow = flow, .idx = {a, b, c, 0}};
    return r;
}

/* ---- index spaces: k first, then m in (k, nt), then n in (k, m) ---- */

static void pp_range(const int *idx, int dim, int *lo, int *hi, const void *arg)
{
    *lo = dim == 0 ? 0 : idx[0] + 1;
    *hi = dim == 2 ? idx[1] - 1 : pp_nt(arg) - 1;
}

/* Where a rank's tasks can be: rows m = its grid row mod P, columns its
 * grid column mod Q (the written tile's). `rowdim`/`coldim`: the
 * dimensions that index the written tile's row and column (-1: none). */
static void pp_local(int dim, int rank, int rowdim, int coldim, int *lo, int *hi, int *step,
                     const void *arg)
{
    const potrf_ptg_t *a = arg;
    *lo = 0;
    *hi = a->nt - 1;
    *step = 1;
    if (dim == rowdim) *lo = rank / a->q, *step = a->p;
    if (dim == coldim) *lo = rank % a->q, *step = a->q;
}

static void pp_local_potrf(const int *i, int dim, int rank, int *lo, int *hi, int *step,
                           const void *arg)
{
    (void)i;
    pp_local(dim, rank, 0, -1, lo, hi, step, arg);
}

static void pp_local_trsm(const int *i, int dim, int rank, int *lo, int *hi, int *step,
                          const void *arg)
{
    (void)i;
    pp_local(dim, rank, 1, 0, lo, hi, step, arg);
}

static void pp_local_syrk(const int *i, int dim, int rank, int *lo, int *hi, int *step,
                          const void *arg)
{
    (void)i;
    pp_local(dim, rank, 1, -1, lo, hi, step, arg);
}

static void pp_local_gemm(const int *i, int dim, int rank, int *lo, int *hi, int *step,
                          const void *arg)
{
    (void)i;
    pp_local(dim, rank, 1, 2, lo, hi, step, arg);
}

/* ---- ranks: the owner of the written tile ---- */

static int pp_rank_potrf(const int *i, const void *arg) { return pp_rank_at(arg, i[0], i[0]); }
static int pp_rank_trsm(const int *i, const void *arg) { return pp_rank_at(arg, i[1], i[0]); }
static int pp_rank_syrk(const int *i, const void *arg) { return pp_rank_at(arg, i[1], i[1]); }
static int pp_rank_gemm(const int *i, const void *arg) { return pp_rank_at(arg, i[1], i[2]); }

/* ---- arguments: as potrf_insert_step passes them ---- */

static weft_data_t *pp_tile(const void *arg, int m, int n)
{
    return weft_tile(((const potrf_ptg_t *)arg)->A, m, n);
}

static int pp_args_potrf(const int *i, weft_arg_t *a, int max, const void *arg)
{
    (void)max;
    a[0] = weft_arg_data(WEFT_RW | WEFT_AFFINITY, pp_tile(arg, i[0], i[0]));
    a[1] = weft_arg_int(WEFT_PRIORITY, potrf_prio_chain(pp_nt(arg), i[0]));
    return 2;
}

static int pp_args_trsm(const int *i, weft_arg_t *a, int max, const void *arg)
{
    (void)max;
    a[0] = weft_arg_data(WEFT_R, pp_tile(arg, i[0], i[0]));
    a[1] = weft_arg_data(WEFT_RW | WEFT_AFFINITY, pp_tile(arg, i[1], i[0]));
    a[2] = weft_arg_int(WEFT_PRIORITY, potrf_prio_panel(pp_nt(arg), i[0], i[1]));
    return 3;
}

static int pp_args_syrk(const int *i, weft_arg_t *a, int max, const void *arg)
{
    (void)max;
    a[0] = weft_arg_data(WEFT_R, pp_tile(arg, i[1], i[0]));
    a[1] = weft_arg_data(WEFT_RW | WEFT_AFFINITY, pp_tile(arg, i[1], i[1]));
    a[2] = weft_arg_int(WEFT_PRIORITY, potrf_prio_syrk(pp_nt(arg), i[0], i[1]));
    return 3;
}

static int pp_args_gemm(const int *i, weft_arg_t *a, int max, const void *arg)
{
    (void)max;
    a[0] = weft_arg_data(WEFT_R, pp_tile(arg, i[1], i[0]));
    a[1] = weft_arg_data(WEFT_R, pp_tile(arg, i[2], i[0]));
    a[2] = weft_arg_data(WEFT_RW | WEFT_AFFINITY, pp_tile(arg, i[1], i[2]));
    a[3] = weft_arg_int(WEFT_PRIORITY, potrf_prio(pp_nt(arg), i[2], 1));
    return 4;
}

/* ---- producers: who wrote the version each flow reads ---- */

/* A[m][n], m > n, before step k: GEMM(k-1, m, n), none at k = 0. */
static int pp_prev_offdiag(int k, int m, int n, weft_ptg_ref_t *p)
{
    if (k == 0) return 0;
    *p = pp_ref(PP_GEMM, 2, k - 1, m, n);
    return 1;
}

/* A[m][m] before step k: SYRK(k-1, m), none at k = 0. */
static int pp_prev_diag(int k, int m, weft_ptg_ref_t *p)
{
    if (k == 0) return 0;
    *p = pp_ref(PP_SYRK, 1, k - 1, m, 0);
    return 1;
}

static int pp_prod_potrf(const int *i, int flow, weft_ptg_ref_t *p, const void *arg)
{
    (void)flow, (void)arg;
    return pp_prev_diag(i[0], i[0], p);
}

static int pp_prod_trsm(const int *i, int flow, weft_ptg_ref_t *p, const void *arg)
{
    (void)arg;
    if (flow == 1) return pp_prev_offdiag(i[0], i[1], i[0], p);
    *p = pp_ref(PP_POTRF, 0, i[0], 0, 0);
    return 1;
}

static int pp_prod_syrk(const int *i, int flow, weft_ptg_ref_t *p, const void *arg)
{
    (void)arg;
    if (flow == 1) return pp_prev_diag(i[0], i[1], p);
    *p = pp_ref(PP_TRSM, 1, i[0], i[1], 0);
    return 1;
}

static int pp_prod_gemm(const int *i, int flow, weft_ptg_ref_t *p, const void *arg)
{
    (void)arg;
    if (flow == 2) return pp_prev_offdiag(i[0], i[1], i[2], p);
    *p = pp_ref(PP_TRSM, 1, i[0], flow == 0 ? i[1] : i[2], 0);
    return 1;
}

/* ---- consumers: who reads or replaces the version each write makes (the
 * read flows pass nothing on) ---- */

static int pp_put(weft_ptg_ref_t *to, int max, int n, weft_ptg_ref_t r)
{
    if (n < max) to[n] = r;
    return n + 1;
}

/* L[k][k]: the panel's TRSMs. */
static int pp_cons_potrf(const int *i, int flow, weft_ptg_ref_t *to, int max, const void *arg)
{
    (void)flow;
    int k = i[0], n = 0;
    for (int m = k + 1; m < pp_nt(arg); m++) n = pp_put(to, max, n, pp_ref(PP_TRSM, 0, k, m, 0));
    return n;
}

/* L[m][k]: SYRK(k, m), the GEMMs of row m and those of column m. */
static int pp_cons_trsm(const int *i, int flow, weft_ptg_ref_t *to, int max, const void *arg)
{
    if (flow != 1) return 0; /* it reads L[k][k] and passes nothing on */
    int k = i[0], m = i[1], n = 0;
    n = pp_put(to, max, n, pp_ref(PP_SYRK, 0, k, m, 0));
    for (int c = k + 1; c < m; c++) n = pp_put(to, max, n, pp_ref(PP_GEMM, 0, k, m, c));
    for (int r = m + 1; r < pp_nt(arg); r++) n = pp_put(to, max, n, pp_ref(PP_GEMM, 1, k, r, m));
    return n;
}

static int pp_cons_syrk(const int *i, int flow, weft_ptg_ref_t *to, int max, const void *arg)
{
    (void)arg;
    if (flow != 1) return 0;
    int k = i[0], m = i[1];
    return pp_put(to, max, 0,
                  k + 1 == m ? pp_ref(PP_POTRF, 0, m, 0, 0) : pp_ref(PP_SYRK, 1, k + 1, m, 0));
}

static int pp_cons_gemm(const int *i, int flow, weft_ptg_ref_t *to, int max, const void *arg)
{
    (void)arg;
    if (flow != 2) return 0;
    int k = i[0], m = i[1], c = i[2];
    return pp_put(to, max, 0,
                  k + 1 == c ? pp_ref(PP_TRSM, 1, c, m, 0) : pp_ref(PP_GEMM, 2, k + 1, m, c));
}

static const weft_ptg_class_t potrf_ptg_classes[] = {
    [PP_POTRF] = {&potrf_class_potrf, 1, pp_range, pp_rank_potrf, pp_args_potrf, pp_prod_potrf,
                  pp_cons_potrf, pp_local_potrf},
    [PP_TRSM] = {&potrf_class_trsm, 2, pp_range, pp_rank_trsm, pp_args_trsm, pp_prod_trsm,
                 pp_cons_trsm, pp_local_trsm},
    [PP_SYRK] = {&potrf_class_syrk, 2, pp_range, pp_rank_syrk, pp_args_syrk, pp_prod_syrk,
                 pp_cons_syrk, pp_local_syrk},
    [PP_GEMM] = {&potrf_class_gemm, 3, pp_range, pp_rank_gemm, pp_args_gemm, pp_prod_gemm,
                 pp_cons_gemm, pp_local_gemm},
};

/* The factorization of A through the graph (potrf_insert_factorization
 * with --trsm-inv 0). */
static int potrf_ptg_factorization(weft_taskpool_t *tp, weft_matrix_t *A, int p, int q)
{
    potrf_ptg_t arg = {.A = A, .nt = weft_matrix_nt(A), .p = p, .q = q};
    weft_ptg_t g = {.classes = potrf_ptg_classes, .nclasses = 4, .arg = &arg};
    return weft_ptg_insert(tp, &g);
}

#endif /* WEFT_APPS_POTRF_PTG_H */
