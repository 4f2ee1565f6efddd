/* weft-getrf: tiled LU factorization without pivoting, A = L U (L unit
 * lower, U upper), of a diagonally dominant matrix on a P x Q grid
 * of ranks (tiles dealt as --dist says, app_cli.h).
 *
 * The matrix (apps/lu_matrix.h) is generated from a seed by one task per
 * tile and factorized by the right-looking tile algorithm: at step k the
 * LU of the diagonal tile (GETRF), the row panel A[k][n] := L[k][k]^-1
 * A[k][n] and the column panel A[m][k] := A[m][k] U[k][k]^-1 (TRSM), and
 * the trailing update A[m][n] -= A[m][k] A[k][n] (GEMM). Diagonal dominance
 * makes pivoting unnecessary; a zero pivot still fails the run (each
 * diagonal tile's info is checked after the timing).
 *
 * --check computes ||A - L U||_F / (||A||_F N eps) with tasks where the
 * tiles live: each residual tile is regenerated, loses its sum of L U tile
 * products and adds its squared norms to a sums tile of its rank; the sums
 * are then reduced over the ranks by tasks too. Nothing is gathered.
 *
 * -g N runs the factorization on N accelerators a rank (CUDA: cuSOLVER
 * and cuBLAS; emu: the CPU kernels as emulated device kernels), each tile
 * on its home device, brought there before the timing starts; the line
 * printed gives g = the accelerators of rank 0 that ran factorization
 * tasks. Public API only. */
#define _POSIX_C_SOURCE 200809L

#include <lapacke.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <weft/weft.h>

#include "app_driver.h"
#include "getrf_kernels.h"

#define GETRF_NAME "weft-getrf"
#define GETRF_RESIDUAL_MAX 60.0
#define GETRF_NT_MAX (1 << 20)

typedef struct getrf_opts {
    app_opts_t c;
    int64_t trsm_inv; /* 1, 2: panels by inverted diagonal factors; -1: 1 with -g > 0 */
    int64_t preload;  /* 1: a small factorization beside the first generation; -1: on CUDA */
} getrf_opts_t;

static const getrf_opts_t getrf_defaults = {
    .c = {.n = 4096, .nb = 256, .p = 1, .q = 1, .cores = -1, .nruns = 1, .seed = 42, .dist = -1},
    .trsm_inv = -1,
    .preload = -1};

/* ---- command line ----------------------------------------------------- */

static void getrf_usage(FILE *out)
{
    fprintf(out,
            "usage: weft-getrf [options] [--weft-<param>=<value> ...]\n"
            "  -N <n>        matrix order (default %lld)\n"
            "  -t <nb>       tile size (default %lld; on GPUs from N, as weft-potrf)\n"
            "%s"
            "  -g <n>        accelerators a rank uses, of the type --weft-device_type names\n"
            "                (cuda by default, or emu); sets device_cuda_enabled or\n"
            "                device_emu_enabled to n (already set to another count: refused;\n"
            "                default 0: CPU only)\n"
            "  -c <cores>    worker cores a rank (sets WEFT_CORES before weft_init)\n"
            "  --seed <s>    seed of the generated matrix (default %lld)\n"
            "  --nruns <r>   generate and factorize r times, one line each (default 1)\n"
            "  --trsm-inv <m> 0: a TRSM a panel tile; 1: both factors of each diagonal tile\n"
            "                inverted once (inv_l, inv_u tasks) and applied to the panels by\n"
            "                multiplication; 2: the same but the first tile of each panel\n"
            "                by TRSM (default 1 with -g > 0, 0 without)\n"
            "  --preload <0|1> 1: while the first matrix is generated, the devices factorize\n"
            "                a small one of the same tiles, so the first timed run does not\n"
            "                pay the libraries' first calls (default 1 with CUDA devices)\n"
            "  --check       check ||A - L U||_F / (||A||_F N eps) < %g against the original\n"
            "  --check-first the same check, after the first run only (timing series)\n"
            "  --probe-gpus  print 'cuda_devices= <n>', the CUDA devices weft finds, and exit\n"
            "  -h, --help    this help; weft-info lists the --weft-* parameters\n",
            (long long)getrf_defaults.c.n, (long long)getrf_defaults.c.nb, app_cli_usage_grid,
            (long long)getrf_defaults.c.seed, GETRF_RESIDUAL_MAX);
}

static const app_flag_t getrf_flags[] = {
    {"--trsm-inv", offsetof(getrf_opts_t, trsm_inv), 0, 2, 0},
    {"--preload", offsetof(getrf_opts_t, preload), 0, 1, 0},
};

/* The options against the context: grid size and tile count. cuBLAS's
 * TRSM of a tile runs at a fraction of its GEMM rate, hence the inverted
 * factors by default on accelerators; mode 1 measured faster than 2 on an
 * H200 (N=32768 NB=2048: 48.1 against 47.5 TFLOP/s; N=16384 NB=1024: 42.0
 * against 39.6; docs/RESULTS.md), as for weft-potrf on one rank. Several ranks were
 * not measured with it. */
static int getrf_validate(weft_context_t *ctx, void *opts, int verbose)
{
    getrf_opts_t *o = opts;
    if (o->trsm_inv < 0) o->trsm_inv = o->c.g > 0 ? 1 : 0;
    if (o->preload < 0) o->preload = app_preload_default(ctx, &o->c);
    if (app_cli_grid(GETRF_NAME, o->c.p, o->c.q, weft_nranks(ctx), verbose) != 0) return -1;
    return app_cli_tile_rows(GETRF_NAME, &o->c, GETRF_NT_MAX, verbose);
}

/* ---- task insertion --------------------------------------------------- */

static getrf_tile_arg_t getrf_tile_arg(const getrf_opts_t *o, int m, int n)
{
    return (getrf_tile_arg_t){.seed = (uint64_t)o->c.seed,
                              .n = o->c.n,
                              .row0 = (int64_t)m * o->c.nb,
                              .col0 = (int64_t)n * o->c.nb};
}

/* One fill task per tile and, with accelerators, one prefetch task per
 * tile that brings it to its home device before the timing. */
static int getrf_insert_fill(weft_taskpool_t *tp, weft_matrix_t *A, const getrf_opts_t *o)
{
    int nt = weft_matrix_nt(A), rc = 0;
    for (int n = 0; n < nt && rc >= 0; n++) {
        for (int m = 0; m < nt && rc >= 0; m++) {
            getrf_tile_arg_t arg = getrf_tile_arg(o, m, n);
            rc = weft_insert_task(tp, &getrf_class_fill, WEFT_W | WEFT_AFFINITY, weft_tile(A, m, n),
                                  WEFT_VALUE, &arg, sizeof arg, 0);
            if (rc >= 0 && o->c.g > 0)
                rc = weft_insert_task(tp, &getrf_class_prefetch, WEFT_R | WEFT_AFFINITY,
                                      weft_tile(A, m, n), 0);
        }
    }
    return rc < 0 ? rc : 0;
}

/* Priority of a task writing tile (m, n): the tile is final after step
 * min(m, n), so earlier such steps go first: the panels of step k+1 and
 * the updates they wait for outrank the rest of step k's trailing update.
 * Within a step getrf (3) > trsm and the diagonal tile's update (2) > the
 * other updates (1). */
static int getrf_prio(int nt, int m, int n, int bonus)
{
    return 4 * (nt - (m < n ? m : n)) + bonus;
}

/* The matrix a run factorizes, in place. */
typedef struct getrf_data {
    weft_matrix_t *a;
    weft_data_t **info;       /* of each diagonal tile's LU */
    weft_data_t **linv, **uinv; /* --trsm-inv: L[k][k]^-1 and U[k][k]^-1 */
    int inv_mode;               /* --trsm-inv */
    struct getrf_data *w;       /* --preload: the small matrix, until the first generation ends */
    getrf_opts_t *wo;           /* its options */
    weft_matrix_t *r;           /* --check: the residual */
} getrf_data_t;

/* Panel tile (k, j) and (j, k), j > k: by TRSM with the diagonal tile, or
 * by the inverted factors; mode 2 keeps the TRSM for j = k + 1, the tiles
 * the next diagonal tile waits for, so the inversions overlap them instead
 * of preceding them. */
static int getrf_insert_panel(weft_taskpool_t *tp, const getrf_data_t *d, int k, int j)
{
    int nt = weft_matrix_nt(d->a), direct = d->linv == NULL || j < k + d->inv_mode;
    weft_data_t *akk = weft_tile(d->a, k, k);
    int rc = weft_insert_task(tp, direct ? &getrf_class_trsm_row : &getrf_class_row_inv, WEFT_R,
                              direct ? akk : d->linv[k], WEFT_RW | WEFT_AFFINITY,
                              weft_tile(d->a, k, j), WEFT_PRIORITY, getrf_prio(nt, k, j, 2), 0);
    if (rc >= 0)
        rc = weft_insert_task(tp, direct ? &getrf_class_trsm_col : &getrf_class_col_inv, WEFT_R,
                              direct ? akk : d->uinv[k], WEFT_RW | WEFT_AFFINITY,
                              weft_tile(d->a, j, k), WEFT_PRIORITY, getrf_prio(nt, j, k, 2), 0);
    return rc;
}

/* Step k: the diagonal tile's LU (its info into info[k]), the inversions
 * of its factors when a panel tile uses them, both panels and the trailing
 * update. */
static int getrf_insert_step(weft_taskpool_t *tp, const getrf_data_t *d, int k)
{
    weft_matrix_t *A = d->a;
    int nt = weft_matrix_nt(A);
    weft_data_t *akk = weft_tile(A, k, k);
    int rc = weft_insert_task(tp, &getrf_class_getrf, WEFT_RW | WEFT_AFFINITY, akk, WEFT_W,
                              d->info[k], WEFT_PRIORITY, getrf_prio(nt, k, k, 3), 0);
    if (rc >= 0 && d->linv != NULL && k + d->inv_mode < nt) {
        rc = weft_insert_task(tp, &getrf_class_inv_l, WEFT_R | WEFT_AFFINITY, akk, WEFT_W,
                              d->linv[k], WEFT_PRIORITY, getrf_prio(nt, k, k, 3), 0);
        if (rc >= 0)
            rc = weft_insert_task(tp, &getrf_class_inv_u, WEFT_R | WEFT_AFFINITY, akk, WEFT_W,
                                  d->uinv[k], WEFT_PRIORITY, getrf_prio(nt, k, k, 3), 0);
    }
    for (int j = k + 1; j < nt && rc >= 0; j++) rc = getrf_insert_panel(tp, d, k, j);
    for (int n = k + 1; n < nt && rc >= 0; n++) {
        weft_data_t *ukn = weft_tile(A, k, n);
        for (int m = k + 1; m < nt && rc >= 0; m++)
            rc = weft_insert_task(tp, &getrf_class_gemm, WEFT_R, weft_tile(A, m, k), WEFT_R, ukn,
                                  WEFT_RW | WEFT_AFFINITY, weft_tile(A, m, n), WEFT_PRIORITY,
                                  getrf_prio(nt, m, n, m == n ? 2 : 1), 0);
    }
    return rc < 0 ? rc : 0;
}

/* After the timing: a host task per diagonal tile fails on a zero pivot. */
static int getrf_check_info(weft_taskpool_t *tp, weft_data_t **info, int nt, int verbose)
{
    int rc = 0;
    for (int k = 0; k < nt && rc >= 0; k++)
        rc = weft_insert_task(tp, &getrf_class_info, WEFT_R, info[k], WEFT_VALUE, &k, sizeof k, 0);
    return app_wait(GETRF_NAME, tp, rc, "the pivots' check", verbose);
}

/* ---- residual check --------------------------------------------------- */

/* R[m][n] = A0[m][n] - sum_{k <= min(m,n)} L[m][k] U[k][n], then the
 * squared norms of R[m][n] and A0[m][n] into S[rank of the tile]. */
static int getrf_insert_residual(weft_taskpool_t *tp, weft_matrix_t *R, app_sums_t *S,
                                 const void *opts, const void *data)
{
    const getrf_opts_t *o = opts;
    weft_matrix_t *A = ((const getrf_data_t *)data)->a;
    int nt = weft_matrix_nt(A), rc = 0;
    for (int n = 0; n < nt && rc >= 0; n++) {
        for (int m = 0; m < nt && rc >= 0; m++) {
            getrf_tile_arg_t arg = getrf_tile_arg(o, m, n);
            weft_data_t *r = weft_tile(R, m, n);
            rc = weft_insert_task(tp, &getrf_class_fill, WEFT_W | WEFT_AFFINITY, r, WEFT_VALUE,
                                  &arg, sizeof arg, 0);
            int last = m < n ? m : n;
            for (int k = 0; k <= last && rc >= 0; k++) {
                int diag = (k == m ? GETRF_DIAG_L : 0) | (k == n ? GETRF_DIAG_U : 0);
                rc = weft_insert_task(tp, &getrf_class_resid, WEFT_R, weft_tile(A, m, k), WEFT_R,
                                      weft_tile(A, k, n), WEFT_RW | WEFT_AFFINITY, r, WEFT_VALUE,
                                      &diag, sizeof diag, 0);
            }
            if (rc >= 0)
                rc = weft_insert_task(tp, &getrf_class_resid_norm, WEFT_R, r,
                                      WEFT_RW | WEFT_AFFINITY, app_sums_of(S, R, m, n), WEFT_VALUE,
                                      &arg, sizeof arg, 0);
        }
    }
    return rc < 0 ? rc : 0;
}

/* ---- driver ---------------------------------------------------------- */

static void getrf_free_info(weft_data_t **info, int nt)
{
    for (int k = 0; info != NULL && k < nt; k++) weft_data_release(info[k]);
    free(info);
}

/* One NEW 4-byte tile a diagonal tile for the int info of its LU, held at
 * the end by the diagonal tile's rank; created where its getrf task first
 * writes it (on the tile's device). NULL on failure. */
static weft_data_t **getrf_new_info(weft_context_t *ctx, weft_matrix_t *A)
{
    int nt = weft_matrix_nt(A);
    weft_data_t **info = calloc((size_t)nt, sizeof *info);
    for (int k = 0; info != NULL && k < nt; k++) {
        info[k] =
            weft_data_new(ctx, WEFT_BYTE, (int)sizeof(int), 1, weft_matrix_tile_rank(A, k, k));
        if (info[k] == NULL) {
            getrf_free_info(info, k);
            info = NULL;
        }
    }
    if (info == NULL && weft_rank(ctx) == 0)
        fprintf(stderr, GETRF_NAME ": cannot create the info tiles\n");
    return info;
}

/* The matrix of o and its info and inverse tiles. */
static int getrf_setup_one(weft_context_t *ctx, const getrf_opts_t *o, getrf_data_t *d)
{
    d->a = app_matrix(ctx, &o->c, o->c.n, o->c.n);
    if (d->a == NULL) {
        if (weft_rank(ctx) == 0)
            fprintf(stderr, GETRF_NAME ": cannot create the %lld x %lld matrix (tiles %lld)\n",
                    (long long)o->c.n, (long long)o->c.n, (long long)o->c.nb);
        return -1;
    }
    d->info = getrf_new_info(ctx, d->a);
    if (d->info == NULL) return -1;
    d->inv_mode = (int)o->trsm_inv;
    if (d->inv_mode == 0) return 0;
    d->linv = app_diag_tiles_new(ctx, d->a, GETRF_NAME, "the inverted L factors");
    d->uinv = app_diag_tiles_new(ctx, d->a, GETRF_NAME, "the inverted U factors");
    return d->linv != NULL && d->uinv != NULL ? 0 : -1;
}

static void getrf_free_one(getrf_data_t *d)
{
    if (d->a == NULL) return;
    getrf_free_info(d->info, weft_matrix_nt(d->a));
    app_diag_tiles_free(d->linv, weft_matrix_nt(d->a));
    app_diag_tiles_free(d->uinv, weft_matrix_nt(d->a));
    weft_matrix_free(d->a);
    d->a = NULL;
}

static void getrf_free_preload(getrf_data_t *d)
{
    if (d->w) getrf_free_one(d->w);
    free(d->w);
    free(d->wo);
    d->w = NULL;
    d->wo = NULL;
}

/* The matrix and, with --preload, the small one (app_driver.h). */
static int getrf_setup(weft_context_t *ctx, const void *opts, void *data)
{
    const getrf_opts_t *o = opts;
    getrf_data_t *d = data;
    if (getrf_setup_one(ctx, o, d) != 0) return -1;
    if (o->c.check && (d->r = app_check_matrix(ctx, GETRF_NAME, &o->c, o->c.n, o->c.n)) == NULL)
        return -1;
    if (!o->preload) return 0;
    d->w = calloc(1, sizeof *d->w);
    d->wo = malloc(sizeof *d->wo);
    if (d->w == NULL || d->wo == NULL) return -1;
    *d->wo = *o;
    d->wo->c.n = app_preload_order(&o->c);
    return getrf_setup_one(ctx, d->wo, d->w);
}

static void getrf_free(void *data)
{
    getrf_data_t *d = data;
    getrf_free_preload(d);
    if (d->r != NULL) weft_matrix_free(d->r);
    getrf_free_one(d);
}

/* The timed part, every step inserted then the wait, and its line; the
 * pivots' check after. */
static int getrf_factorize(weft_context_t *ctx, weft_taskpool_t *tp, const getrf_data_t *d,
                           const getrf_opts_t *o)
{
    int verbose = weft_rank(ctx) == 0, nt = weft_matrix_nt(d->a), rc = 0;
    app_timer_t tm;
    app_timer_start(ctx, &tm);
    for (int k = 0; k < nt && rc >= 0; k++) rc = getrf_insert_step(tp, d, k);
    rc = app_wait(GETRF_NAME, tp, rc, "dgetrf", verbose);
    app_timer_stop(&tm);
    if (rc < 0) return rc;
    double n = (double)o->c.n;
    app_report(ctx, &tm, "dgetrf", &o->c, "", 2.0 * n * n * n / 3.0);
    return getrf_check_info(tp, d->info, nt, verbose);
}

/* Run number r: generate, factorize (timed), report, check. 0, a weft
 * error, or 1 for a failed check. */
static int getrf_run(weft_context_t *ctx, weft_taskpool_t *tp, const void *opts, void *data,
                     int64_t r)
{
    const getrf_opts_t *o = opts;
    getrf_data_t *d = data;
    int rc = 0;
    if (d->w) { /* --preload: the small factorization, beside the generation */
        rc = getrf_insert_fill(tp, d->w->a, d->wo);
        for (int k = 0; k < weft_matrix_nt(d->w->a) && rc >= 0; k++)
            rc = getrf_insert_step(tp, d->w, k);
    }
    if (rc >= 0) rc = getrf_insert_fill(tp, d->a, o);
    rc = app_wait(GETRF_NAME, tp, rc, "generating the matrix", weft_rank(ctx) == 0);
    getrf_free_preload(d); /* its device memory goes back before the timing */
    if (rc >= 0) rc = getrf_factorize(ctx, tp, d, o);
    if (rc < 0 || !app_check_due(&o->c, r)) return rc;
    double resid = 0.0;
    rc = app_resid_check(ctx, tp, GETRF_NAME, &o->c, d->r, getrf_insert_residual, d, &resid);
    return rc < 0 ? rc : app_verdict(ctx, GETRF_NAME, resid, GETRF_RESIDUAL_MAX);
}

static const app_driver_t getrf_app = {
    .cli = {.prog = GETRF_NAME,
            .flags = getrf_flags,
            .nflags = sizeof getrf_flags / sizeof getrf_flags[0],
            .check_first = 1,
            .usage = getrf_usage,
            .nb = 256,
            .gpu_nb_auto = 1, /* the best NB measured: 1024 at N=16384, 2048 at 32768 */
            /* cuSOLVER's getrf work array for a tile and, for the check on
             * the GPU, a tile and a packed triangle */
            .workspace_tiles = 2.5},
    .pool = "getrf",
    .validate = getrf_validate,
    .setup = getrf_setup,
    .free = getrf_free,
    .run = getrf_run};

int main(int argc, char **argv)
{
    getrf_opts_t o = getrf_defaults;
    getrf_data_t d = {0};
    return app_main(&getrf_app, &o, &d, argc, argv);
}
