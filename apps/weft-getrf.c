/* weft-getrf: tiled LU factorization without pivoting, A = L U (L unit
 * lower, U upper), of a diagonally dominant matrix on a 2D block-cyclic
 * P x Q grid of ranks.
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

#include <errno.h>
#include <lapacke.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <weft/weft.h>

#include "app_devices.h"
#include "app_flags.h"
#include "getrf_kernels.h"

#define GETRF_RESIDUAL_MAX 60.0
#define GETRF_NT_MAX (1 << 20)

typedef struct getrf_opts {
    int64_t n, nb, p, q, g, cores, nruns, seed;
    int check; /* 1: every run, 2: the first run only (--check-first) */
} getrf_opts_t;

static const getrf_opts_t getrf_defaults = {
    .n = 4096, .nb = 256, .p = 1, .q = 1, .g = 0, .cores = -1, .nruns = 1, .seed = 42, .check = 0};

/* ---- command line ----------------------------------------------------- */

static void getrf_usage(FILE *out)
{
    fprintf(out,
            "usage: weft-getrf [options] [--weft-<param>=<value> ...]\n"
            "  -N <n>        matrix order (default %lld)\n"
            "  -t <nb>       tile size (default %lld)\n"
            "  -P <p>        rows of the process grid (default 1)\n"
            "  -Q <q>        columns of the process grid (default 1); P*Q = ranks\n"
            "  -g <n>        accelerators a rank uses, of the type --weft-device_type names\n"
            "                (cuda by default, or emu); sets device_cuda_enabled or\n"
            "                device_emu_enabled to n unless already set (default 0: CPU only)\n"
            "  -c <cores>    worker cores a rank (sets WEFT_CORES before weft_init)\n"
            "  --seed <s>    seed of the generated matrix (default %lld)\n"
            "  --nruns <r>   generate and factorize r times, one line each (default 1)\n"
            "  --check       check ||A - L U||_F / (||A||_F N eps) < %g against the original\n"
            "  --check-first the same check, after the first run only (timing series)\n"
            "  --probe-gpus  print 'cuda_devices= <n>', the CUDA devices weft finds, and exit\n"
            "  -h, --help    this help; weft-info lists the --weft-* parameters\n",
            (long long)getrf_defaults.n, (long long)getrf_defaults.nb,
            (long long)getrf_defaults.seed, GETRF_RESIDUAL_MAX);
}

static const app_flag_t getrf_flags[] = {
    {"-N", offsetof(getrf_opts_t, n), 1, INT32_MAX},
    {"-t", offsetof(getrf_opts_t, nb), 1, INT32_MAX / 2},
    {"-P", offsetof(getrf_opts_t, p), 1, 1 << 20},
    {"-Q", offsetof(getrf_opts_t, q), 1, 1 << 20},
    {"-g", offsetof(getrf_opts_t, g), 0, 1024},
    {"-c", offsetof(getrf_opts_t, cores), 1, 4096},
    {"--seed", offsetof(getrf_opts_t, seed), 0, INT64_MAX},
    {"--nruns", offsetof(getrf_opts_t, nruns), 1, 1000000},
};
#define GETRF_NFLAGS (sizeof getrf_flags / sizeof getrf_flags[0])

/* With accelerators, a stream's scratch memory must hold cuSOLVER's getrf
 * work array for a tile and, for the check on the GPU, a tile and a packed
 * triangle: 2.5 tiles and 1 MiB cover both. Unless the user set
 * device_workspace, it is raised to that before weft_init. */
static int getrf_size_workspace(int argc, char **argv, const appdev_t *dev, int64_t nb)
{
    const char *var = "WEFT_DEVICE_WORKSPACE";
    if (dev->g <= 0 || appdev_weft_opt(argc, argv, "device_workspace") != NULL || getenv(var))
        return 0;
    int64_t need = 5 * nb * nb * (int64_t)sizeof(double) / 2 + (1 << 20);
    if (need <= 16 << 20) return 0;
    char text[32];
    snprintf(text, sizeof text, "%lld", (long long)need);
    return appdev_setenv(dev->prog, var, text);
}

/* -c reaches weft_init as WEFT_CORES. */
static int getrf_set_cores(const app_flag_t *f, const char *value)
{
    int64_t cores;
    if (app_parse_int("weft-getrf", "-c", value, f->min, f->max, &cores, 1) != 0) return -1;
    char text[32];
    snprintf(text, sizeof text, "%lld", (long long)cores);
    return appdev_setenv("weft-getrf", "WEFT_CORES", text);
}

/* Before weft_init: -h/--help (returns 1), --probe-gpus (2), -c, -g (the
 * device count of its type, app_devices.h) and -t (the devices'
 * workspace). Malformed -t and -g values are reported after weft_init,
 * with the other options. */
static int getrf_prescan(int argc, char **argv, appdev_t *dev)
{
    dev->prog = "weft-getrf";
    dev->g = -1;
    int64_t nb = getrf_defaults.nb;
    if (appdev_probe_asked(argc, argv)) return 2;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *value;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            getrf_usage(stdout);
            return 1;
        }
        if (strncmp(a, "--weft-", 7) == 0) {
            if (strchr(a, '=') == NULL) i++; /* "--weft-<name> <value>" */
            continue;
        }
        const app_flag_t *f = app_flag_at(getrf_flags, GETRF_NFLAGS, argc, argv, &i, &value);
        if (f == NULL) continue;
        if (strcmp(f->name, "-t") == 0 &&
            app_parse_int("weft-getrf", "-t", value, f->min, f->max, &nb, 0) != 0)
            nb = getrf_defaults.nb;
        if (strcmp(f->name, "-g") == 0 &&
            app_parse_int("weft-getrf", "-g", value, f->min, f->max, &dev->g, 0) != 0)
            dev->g = -1;
        if (strcmp(f->name, "-c") == 0 && getrf_set_cores(f, value) != 0) return -1;
    }
    if (appdev_prepare(dev, argc, argv) != 0) return -1;
    return getrf_size_workspace(argc, argv, dev, nb);
}

/* After weft_init (its --weft-* options are gone from argv). */
static int getrf_parse(int argc, char **argv, getrf_opts_t *o, int verbose)
{
    *o = getrf_defaults;
    for (int i = 1; i < argc; i++) {
        const char *value;
        if (strcmp(argv[i], "--check") == 0 || strcmp(argv[i], "--check-first") == 0) {
            o->check = strcmp(argv[i], "--check") == 0 ? 1 : 2;
            continue;
        }
        const app_flag_t *f = app_flag_at(getrf_flags, GETRF_NFLAGS, argc, argv, &i, &value);
        if (f == NULL) {
            if (verbose && value != NULL)
                fprintf(stderr, "weft-getrf: %s needs a value (see --help)\n", argv[i]);
            else if (verbose)
                fprintf(stderr, "weft-getrf: unknown option '%s' (see --help)\n", argv[i]);
            return -1;
        }
        int64_t *dst = (int64_t *)((char *)o + f->offset);
        if (app_parse_int("weft-getrf", f->name, value, f->min, f->max, dst, verbose) != 0)
            return -1;
    }
    return 0;
}

/* The options against the context: grid, tile count, accelerators. */
static int getrf_validate(weft_context_t *ctx, const getrf_opts_t *o, appdev_t *dev, int verbose)
{
    int nranks = weft_nranks(ctx);
    if (o->p * o->q != nranks) {
        if (verbose)
            fprintf(stderr,
                    "weft-getrf: -P %lld x -Q %lld = %lld ranks, but running on %d "
                    "(P*Q must equal the number of ranks)\n",
                    (long long)o->p, (long long)o->q, (long long)(o->p * o->q), nranks);
        return -1;
    }
    if ((o->n + o->nb - 1) / o->nb > GETRF_NT_MAX) {
        if (verbose)
            fprintf(stderr,
                    "weft-getrf: -N %lld / -t %lld makes more than %d tile rows; "
                    "use a larger -t\n",
                    (long long)o->n, (long long)o->nb, GETRF_NT_MAX);
        return -1;
    }
    dev->g = o->g;
    return appdev_check(ctx, dev);
}

/* ---- task insertion --------------------------------------------------- */

static getrf_tile_arg_t getrf_tile_arg(const getrf_opts_t *o, int m, int n)
{
    return (getrf_tile_arg_t){.seed = (uint64_t)o->seed,
                              .n = o->n,
                              .row0 = (int64_t)m * o->nb,
                              .col0 = (int64_t)n * o->nb};
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
            if (rc >= 0 && o->g > 0)
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

/* Step k: the diagonal tile's LU (its info into info[k]), both panels and
 * the trailing update. */
static int getrf_insert_step(weft_taskpool_t *tp, weft_matrix_t *A, weft_data_t *info, int k)
{
    int nt = weft_matrix_nt(A);
    weft_data_t *akk = weft_tile(A, k, k);
    int rc = weft_insert_task(tp, &getrf_class_getrf, WEFT_RW | WEFT_AFFINITY, akk, WEFT_W, info,
                              WEFT_PRIORITY, getrf_prio(nt, k, k, 3), 0);
    for (int j = k + 1; j < nt && rc >= 0; j++) {
        rc = weft_insert_task(tp, &getrf_class_trsm_row, WEFT_R, akk, WEFT_RW | WEFT_AFFINITY,
                              weft_tile(A, k, j), WEFT_PRIORITY, getrf_prio(nt, k, j, 2), 0);
        if (rc >= 0)
            rc = weft_insert_task(tp, &getrf_class_trsm_col, WEFT_R, akk, WEFT_RW | WEFT_AFFINITY,
                                  weft_tile(A, j, k), WEFT_PRIORITY, getrf_prio(nt, j, k, 2), 0);
    }
    for (int n = k + 1; n < nt && rc >= 0; n++) {
        weft_data_t *ukn = weft_tile(A, k, n);
        for (int m = k + 1; m < nt && rc >= 0; m++)
            rc = weft_insert_task(tp, &getrf_class_gemm, WEFT_R, weft_tile(A, m, k), WEFT_R, ukn,
                                  WEFT_RW | WEFT_AFFINITY, weft_tile(A, m, n), WEFT_PRIORITY,
                                  getrf_prio(nt, m, n, m == n ? 2 : 1), 0);
    }
    return rc < 0 ? rc : 0;
}

/* Waits for tp even after a failed insertion (nothing is left running)
 * and returns the first error of the two. */
static int getrf_finish(weft_taskpool_t *tp, int insert_rc, const char *what, int verbose)
{
    int rc = weft_taskpool_wait(tp);
    if (insert_rc < 0) rc = insert_rc;
    if (rc < 0 && verbose) fprintf(stderr, "weft-getrf: %s failed: %s\n", what, weft_strerror(rc));
    return rc;
}

/* After the timing: a host task per diagonal tile fails on a zero pivot. */
static int getrf_check_info(weft_taskpool_t *tp, weft_data_t **info, int nt, int verbose)
{
    int rc = 0;
    for (int k = 0; k < nt && rc >= 0; k++)
        rc = weft_insert_task(tp, &getrf_class_info, WEFT_R, info[k], WEFT_VALUE, &k, sizeof k, 0);
    return getrf_finish(tp, rc, "the pivots' check", verbose);
}

/* ---- residual check --------------------------------------------------- */

/* R[m][n] = A0[m][n] - sum_{k <= min(m,n)} L[m][k] U[k][n], then the
 * squared norms of R[m][n] and A0[m][n] into S[rank of the tile]. */
static int getrf_insert_residual(weft_taskpool_t *tp, weft_matrix_t *A, weft_matrix_t *R,
                                 weft_matrix_t *S, const getrf_opts_t *o)
{
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
                                      WEFT_RW | WEFT_AFFINITY,
                                      weft_tile(S, weft_matrix_tile_rank(R, m, n), 0), WEFT_VALUE,
                                      &arg, sizeof arg, 0);
        }
    }
    return rc < 0 ? rc : 0;
}

/* The sums tiles S[i] (on rank i) zeroed, the residual, then an
 * all-reduce: a chain into S[0] and S[0] copied back to every S[i]. */
static int getrf_insert_check(weft_taskpool_t *tp, weft_matrix_t *A, weft_matrix_t *R,
                              weft_matrix_t *S, const getrf_opts_t *o, int nranks)
{
    int rc = 0, add = 1, copy = 0;
    for (int i = 0; i < nranks && rc >= 0; i++)
        rc = weft_insert_task(tp, &getrf_class_sum_zero, WEFT_W | WEFT_AFFINITY, weft_tile(S, i, 0),
                              0);
    if (rc >= 0) rc = getrf_insert_residual(tp, A, R, S, o);
    for (int i = 1; i < nranks && rc >= 0; i++)
        rc = weft_insert_task(tp, &getrf_class_sum_merge, WEFT_R, weft_tile(S, i, 0),
                              WEFT_RW | WEFT_AFFINITY, weft_tile(S, 0, 0), WEFT_VALUE, &add,
                              sizeof add, 0);
    for (int i = 1; i < nranks && rc >= 0; i++)
        rc = weft_insert_task(tp, &getrf_class_sum_merge, WEFT_R, weft_tile(S, 0, 0),
                              WEFT_W | WEFT_AFFINITY, weft_tile(S, i, 0), WEFT_VALUE, &copy,
                              sizeof copy, 0);
    return rc < 0 ? rc : 0;
}

/* The scaled residual of the factors held in A, in *resid. */
static int getrf_residual(weft_context_t *ctx, weft_taskpool_t *tp, weft_matrix_t *A,
                          const getrf_opts_t *o, double *resid)
{
    int rank = weft_rank(ctx), nranks = weft_nranks(ctx), rc = WEFT_ERR_NOMEM;
    weft_matrix_t *R =
        weft_matrix_new(ctx, WEFT_DOUBLE, o->n, o->n, (int)o->nb, (int)o->nb, (int)o->p, (int)o->q);
    weft_matrix_t *S = weft_matrix_new(ctx, WEFT_DOUBLE, nranks, 2, 1, 2, nranks, 1);
    if (R == NULL || S == NULL) {
        fprintf(stderr, "weft-getrf: cannot create the matrices of the check\n");
        goto free_matrices;
    }
    rc = getrf_insert_check(tp, A, R, S, o, nranks);
    rc = getrf_finish(tp, rc, "the residual check", rank == 0);
    if (rc < 0) goto free_matrices;
    void *p = NULL;
    int64_t ld = 0;
    rc = weft_data_host_acquire(weft_tile(S, rank, 0), WEFT_R, &p, &ld);
    if (rc < 0) {
        fprintf(stderr, "weft-getrf: rank %d cannot read its residual sums: %s\n", rank,
                weft_strerror(rc));
        goto free_matrices;
    }
    const double *s = p;
    double eps = LAPACKE_dlamch_work('e');
    *resid = sqrt(s[0]) / (sqrt(s[ld]) * (double)o->n * eps);
    rc = weft_data_host_release(weft_tile(S, rank, 0));
free_matrices:
    if (S != NULL) weft_matrix_free(S);
    if (R != NULL) weft_matrix_free(R);
    return rc;
}

/* ---- driver ----------------------------------------------------------- */

static double getrf_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The timed part: every step inserted, then the wait. */
static int getrf_factorize(weft_context_t *ctx, weft_taskpool_t *tp, weft_matrix_t *A,
                           weft_data_t **info, const getrf_opts_t *o, double *t)
{
    int verbose = weft_rank(ctx) == 0, nt = weft_matrix_nt(A), rc = 0;
    appdev_snap_t before;
    appdev_snapshot(ctx, &before);
    double t0 = getrf_now();
    for (int k = 0; k < nt && rc >= 0; k++) rc = getrf_insert_step(tp, A, info[k], k);
    rc = getrf_finish(tp, rc, "dgetrf", verbose);
    *t = getrf_now() - t0;
    if (rc < 0) return rc;
    /* g: the accelerators of this rank that ran factorization tasks. */
    int g = appdev_used(ctx, &before);
    double n = (double)o->n;
    if (verbose)
        printf("[****] TIME(s) %.6f : dgetrf PxQxg= %d %d %d NB= %lld N= %lld : %.2f gflops\n", *t,
               (int)o->p, (int)o->q, g, (long long)o->nb, (long long)o->n,
               2.0 * n * n * n / 3.0 / *t / 1e9);
    return getrf_check_info(tp, info, nt, verbose);
}

/* Run number r: generate, factorize (timed), report, check. 0, a weft
 * error, or 1 for a failed check. */
static int getrf_run(weft_context_t *ctx, weft_taskpool_t *tp, weft_matrix_t *A, weft_data_t **info,
                     const getrf_opts_t *o, int64_t r)
{
    int verbose = weft_rank(ctx) == 0;
    int rc = getrf_insert_fill(tp, A, o);
    rc = getrf_finish(tp, rc, "generating the matrix", verbose);
    double t = 0.0;
    if (rc >= 0) rc = getrf_factorize(ctx, tp, A, info, o, &t);
    if (rc < 0) return rc;
    if (!o->check || (o->check == 2 && r > 0)) return 0;
    double resid = 0.0;
    rc = getrf_residual(ctx, tp, A, o, &resid);
    if (rc < 0) return rc;
    int passed = resid < GETRF_RESIDUAL_MAX;
    if (verbose) printf("residual = %.6e : %s\n", resid, passed ? "PASSED" : "FAILED");
    return passed ? 0 : 1;
}

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
        fprintf(stderr, "weft-getrf: cannot create the info tiles\n");
    return info;
}

static int getrf_main(weft_context_t *ctx, const getrf_opts_t *o)
{
    int verbose = weft_rank(ctx) == 0, rc = 0;
    weft_matrix_t *A =
        weft_matrix_new(ctx, WEFT_DOUBLE, o->n, o->n, (int)o->nb, (int)o->nb, (int)o->p, (int)o->q);
    if (A == NULL) {
        if (verbose)
            fprintf(stderr, "weft-getrf: cannot create the %lld x %lld matrix (tiles %lld)\n",
                    (long long)o->n, (long long)o->n, (long long)o->nb);
        return 1;
    }
    weft_data_t **info = getrf_new_info(ctx, A);
    weft_taskpool_t *tp = info != NULL ? weft_taskpool_new(ctx, "getrf") : NULL;
    if (tp == NULL) {
        if (verbose && info != NULL) fprintf(stderr, "weft-getrf: cannot create the taskpool\n");
        rc = 1;
        goto free_matrix;
    }
    for (int64_t r = 0; r < o->nruns && rc == 0; r++) {
        rc = getrf_run(ctx, tp, A, info, o, r);
        fflush(stdout);
    }
    weft_taskpool_free(tp);
free_matrix:
    getrf_free_info(info, weft_matrix_nt(A));
    weft_matrix_free(A);
    return rc == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    appdev_t dev;
    int rc = getrf_prescan(argc, argv, &dev);
    if (rc == 2) return appdev_probe(dev.prog, argc, argv);
    if (rc != 0) return rc > 0 ? 0 : 1;
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (ctx == NULL) {
        fprintf(stderr, "weft-getrf: weft_init failed (see the message above)\n");
        appdev_init_failed(&dev);
        return 1;
    }
    int verbose = weft_rank(ctx) == 0;
    getrf_opts_t o;
    if (getrf_parse(argc, argv, &o, verbose) != 0 || getrf_validate(ctx, &o, &dev, verbose) != 0)
        rc = 1;
    else
        rc = getrf_main(ctx, &o);
    int frc = weft_fini(ctx);
    if (frc < 0) {
        fprintf(stderr, "weft-getrf: weft_fini: %s\n", weft_strerror(frc));
        rc = 1;
    }
    return rc;
}
