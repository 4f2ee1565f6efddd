/* The task graph of the tiled Cholesky factorization (lower), shared by
 * weft-potrf and weft-posv: the fill of the test matrix, the prefetch to
 * the accelerators, the factorization steps with their priorities, and
 * the NEW tiles of the inverted diagonal factors (--trsm-inv).
 *
 * Header-only (apps/CMakeLists.txt builds every .c file of apps/ as its
 * own program); the kernels and task classes are in potrf_kernels.h. */
#ifndef WEFT_APPS_POTRF_DAG_H
#define WEFT_APPS_POTRF_DAG_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <weft/weft.h>

#include "app_driver.h"
#include "potrf_kernels.h"

/* The arguments of the fill or norm task of tile (m, k) of the order-n
 * test matrix cut in nb x nb tiles. */
static potrf_tile_arg_t potrf_arg_at(uint64_t seed, int64_t n, int64_t nb, int m, int k)
{
    return (potrf_tile_arg_t){
        .seed = seed, .n = n, .row0 = (int64_t)m * nb, .col0 = (int64_t)k * nb};
}

/* One fill task per tile of the lower triangle (the upper is never read). */
static int potrf_insert_fill(weft_taskpool_t *tp, weft_matrix_t *A, uint64_t seed, int64_t n,
                             int64_t nb)
{
    int nt = weft_matrix_nt(A);
    for (int k = 0; k < nt; k++) {
        for (int m = k; m < nt; m++) {
            potrf_tile_arg_t arg = potrf_arg_at(seed, n, nb, m, k);
            int rc = weft_insert_task(tp, &potrf_class_fill, WEFT_W | WEFT_AFFINITY,
                                      weft_tile(A, m, k), WEFT_VALUE, &arg, sizeof arg, 0);
            if (rc < 0) return rc;
        }
    }
    return 0;
}

/* With accelerators: one prefetch task per tile of the lower triangle
 * brings it to its home device (stage-in), so that the timed factorization
 * does not include the first host-to-device copies. */
static int potrf_insert_prefetch(weft_taskpool_t *tp, weft_matrix_t *A)
{
    int nt = weft_matrix_nt(A);
    for (int n = 0; n < nt; n++) {
        for (int m = n; m < nt; m++) {
            int rc = weft_insert_task(tp, &potrf_class_prefetch, WEFT_R | WEFT_AFFINITY,
                                      weft_tile(A, m, n), 0);
            if (rc < 0) return rc;
        }
    }
    return 0;
}

/* Priority of a task that writes a tile of column col: earlier columns
 * first, so the panel of step k+1 (potrf 3, trsm 2) outranks the trailing
 * update of step k beyond column k+1; within a column potrf > trsm = syrk
 * > gemm. */
static int potrf_prio(int nt, int col, int bonus) { return 4 * (nt - col) + bonus; }

/* The critical path of step k: POTRF(k), the inversion of its factor, the
 * panel tile under it, A[k+1][k], and that tile's SYRK into the next
 * diagonal tile, whose POTRF(k+1) opens the next step. Ranked as a column
 * earlier, they outrank the rest of step k's panel and updates, so they
 * start first and take the urgent stream (its kernels get the device's
 * SMs first): at N=16384 on one H200 that ran 4% faster (docs/RESULTS.md, "GPU
 * speed"), the chain's SYRK having waited behind the other panel tiles. */
static int potrf_prio_chain(int nt, int k) { return potrf_prio(nt, k - 1, 3); }

/* Step k's panel task on A[m][k], and its SYRK into A[m][m]: the chain's
 * for m = k + 1 (the inserted and the PTG graph rank alike). */
static int potrf_prio_panel(int nt, int k, int m)
{
    return m == k + 1 ? potrf_prio_chain(nt, k) : potrf_prio(nt, k, 2);
}

static int potrf_prio_syrk(int nt, int k, int m)
{
    return m == k + 1 ? potrf_prio_chain(nt, k) : potrf_prio(nt, m, 2);
}

/* The panel of step k: A[m][k] := A[m][k] L[k][k]^-T for m > k, by a TRSM
 * a tile, or with dinv (--trsm-inv) by one trtri task that inverts L[k][k]
 * into dinv[k] and a multiplication a tile; --trsm-inv 2 keeps the TRSM for
 * A[k+1][k], the tile on the critical path (the next diagonal tile waits for
 * it), so that the inversion overlaps that TRSM instead of preceding it. */
static int potrf_insert_panel(weft_taskpool_t *tp, weft_matrix_t *A, weft_data_t **dinv,
                              int inv_mode, int k)
{
    int nt = weft_matrix_nt(A), rc = 0;
    weft_data_t *akk = weft_tile(A, k, k);
    int first_inv = k + (inv_mode == 2 ? 2 : 1); /* the first tile multiplied */
    if (dinv != NULL && first_inv < nt)
        rc = weft_insert_task(tp, &potrf_class_trtri, WEFT_R | WEFT_AFFINITY, akk, WEFT_W, dinv[k],
                              WEFT_PRIORITY, potrf_prio_chain(nt, k), 0);
    for (int m = k + 1; m < nt && rc >= 0; m++) {
        int direct = dinv == NULL || m < first_inv;
        rc = weft_insert_task(tp, direct ? &potrf_class_trsm : &potrf_class_trsm_inv, WEFT_R,
                              direct ? akk : dinv[k], WEFT_RW | WEFT_AFFINITY, weft_tile(A, m, k),
                              WEFT_PRIORITY, potrf_prio_panel(nt, k, m), 0);
    }
    return rc;
}

static int potrf_insert_step(weft_taskpool_t *tp, weft_matrix_t *A, weft_data_t **dinv,
                             int inv_mode, int k)
{
    int nt = weft_matrix_nt(A);
    int rc = weft_insert_task(tp, &potrf_class_potrf, WEFT_RW | WEFT_AFFINITY, weft_tile(A, k, k),
                              WEFT_PRIORITY, potrf_prio_chain(nt, k), 0);
    if (rc >= 0) rc = potrf_insert_panel(tp, A, dinv, inv_mode, k);
    for (int m = k + 1; m < nt && rc >= 0; m++) {
        weft_data_t *amk = weft_tile(A, m, k);
        rc = weft_insert_task(tp, &potrf_class_syrk, WEFT_R, amk, WEFT_RW | WEFT_AFFINITY,
                              weft_tile(A, m, m), WEFT_PRIORITY, potrf_prio_syrk(nt, k, m), 0);
        for (int n = k + 1; n < m && rc >= 0; n++)
            rc = weft_insert_task(tp, &potrf_class_gemm, WEFT_R, amk, WEFT_R, weft_tile(A, n, k),
                                  WEFT_RW | WEFT_AFFINITY, weft_tile(A, m, n), WEFT_PRIORITY,
                                  potrf_prio(nt, n, 1), 0);
    }
    return rc < 0 ? rc : 0;
}

static int potrf_insert_factorization(weft_taskpool_t *tp, weft_matrix_t *A, weft_data_t **dinv,
                                      int inv_mode)
{
    for (int k = 0; k < weft_matrix_nt(A); k++) {
        int rc = potrf_insert_step(tp, A, dinv, inv_mode, k);
        if (rc < 0) return rc;
    }
    return 0;
}

/* With --trsm-inv: one NEW tile a diagonal tile for its inverted factor,
 * held at the end by the diagonal tile's rank; created where its trtri task
 * first writes it (on the diagonal tile's device). NULL without, or *rc
 * set on failure. */
static weft_data_t **potrf_new_inverses(weft_context_t *ctx, weft_matrix_t *A, int trsm_inv,
                                        const char *prog, int *rc)
{
    if (!trsm_inv) return NULL;
    weft_data_t **dinv = app_diag_tiles_new(ctx, A, prog, "the inverse tiles");
    if (dinv == NULL) *rc = 1;
    return dinv;
}

static void potrf_free_inverses(weft_data_t **dinv, int nt) { app_diag_tiles_free(dinv, nt); }

#endif /* WEFT_APPS_POTRF_DAG_H */
