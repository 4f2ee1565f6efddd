/* weft-geqrf: tile QR factorization of an M x N matrix (M >= N) on a 2D
 * block-cyclic P x Q grid of ranks, by the flat-tree tile algorithm with
 * inner blocking (qr_kernels.h): GEQRT, GEMQRT, TSQRT, TSMQR.
 *
 * The matrix is generated from a seed by one task per tile. The T factors
 * (ib x nb) and the copies of the factored diagonal tiles that the row
 * updates read are NEW tiles (weft_data_new): created where the task that
 * writes them runs, moved by weft to the ranks and devices that read them.
 * With --check, Q is applied, through the stored V and T tiles and the same
 * update classes, to the original matrix and to a random block
 * (qr_check.h): ||A - Q R|| / (||A|| M eps) and ||X - Q^T Q X|| / (||X||
 * M eps) must both stay under QR_CHECK_MAX. Everything is computed tile by
 * tile where the tiles live, and reduced over the ranks by tasks.
 *
 * -g N: the update classes run on N accelerators a rank (CUDA: cuBLAS,
 * qr_cuda.h; emu: the CPU kernels), GEQRT and TSQRT on the host (emu
 * devices run them too: they run CPU bodies). Public API only. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
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
#include "qr_check.h"
#include "qr_kernels.h"

#define QR_CHECK_MAX 60.0
#define QR_NT_MAX (1 << 16)

typedef struct qr_opts {
    int64_t m, n, nb, ib, p, q, g, cores, nruns, seed;
    int check;
} qr_opts_t;

static const qr_opts_t qr_defaults = {.m = -1, /* -1: M = N */
                                      .n = 4096,
                                      .nb = 192,
                                      .ib = 32,
                                      .p = 1,
                                      .q = 1,
                                      .g = 0,
                                      .cores = -1,
                                      .nruns = 1,
                                      .seed = 42,
                                      .check = 0};

/* ---- command line ---------------------------------------------------- */

static void qr_usage(FILE *out)
{
    fprintf(out,
            "usage: weft-geqrf [options] [--weft-<param>=<value> ...]\n"
            "  -M <m>        rows of the matrix, >= N (default N)\n"
            "  -N <n>        columns of the matrix (default %lld)\n"
            "  -t <nb>       tile size (default %lld)\n"
            "  -b <ib>       inner block size of the T factors, <= nb (default %lld)\n"
            "  -P <p>, -Q <q> process grid, P*Q = ranks (default 1 x 1)\n"
            "  -g <n>        accelerators a rank uses, of the type --weft-device_type names\n"
            "                (cuda by default, or emu) (default 0: CPU only)\n"
            "  -c <cores>    worker cores a rank (sets WEFT_CORES before weft_init)\n"
            "  --seed <s>    seed of the generated matrix (default %lld)\n"
            "  --nruns <r>   generate and factorize r times, one line each (default 1)\n"
            "  --check       check ||A - Q R|| / (||A|| M eps) and ||X - Q^T Q X|| /\n"
            "                (||X|| M eps) < %g after each run\n"
            "  --probe-gpus  print 'cuda_devices= <n>', the CUDA devices weft finds, and exit\n"
            "  -h, --help    this help; weft-info lists the --weft-* parameters\n",
            (long long)qr_defaults.n, (long long)qr_defaults.nb, (long long)qr_defaults.ib,
            (long long)qr_defaults.seed, QR_CHECK_MAX);
}

static const app_flag_t qr_flags[] = {
    {"-M", offsetof(qr_opts_t, m), 1, INT32_MAX},
    {"-N", offsetof(qr_opts_t, n), 1, INT32_MAX},
    {"-t", offsetof(qr_opts_t, nb), 1, 1 << 15},
    {"-b", offsetof(qr_opts_t, ib), 1, 1 << 15},
    {"-P", offsetof(qr_opts_t, p), 1, 1 << 20},
    {"-Q", offsetof(qr_opts_t, q), 1, 1 << 20},
    {"-g", offsetof(qr_opts_t, g), 0, 1024},
    {"-c", offsetof(qr_opts_t, cores), 1, 4096},
    {"--seed", offsetof(qr_opts_t, seed), 0, INT64_MAX},
    {"--nruns", offsetof(qr_opts_t, nruns), 1, 1000000},
};
#define QR_NFLAGS (sizeof qr_flags / sizeof qr_flags[0])

/* Before weft_init: -h (returns 1), --probe-gpus (2), -c, which must reach
 * weft_init as WEFT_CORES, and -g, which sets the device count of its type
 * (app_devices.h). Malformed values of other flags are reported after. */
static int qr_prescan(int argc, char **argv, appdev_t *dev)
{
    dev->prog = "weft-geqrf";
    dev->g = -1;
    if (appdev_probe_asked(argc, argv)) return 2;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *value;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            qr_usage(stdout);
            return 1;
        }
        if (strncmp(a, "--weft-", 7) == 0) {
            if (strchr(a, '=') == NULL) i++; /* "--weft-<name> <value>" */
            continue;
        }
        const app_flag_t *f = app_flag_at(qr_flags, QR_NFLAGS, argc, argv, &i, &value);
        if (f != NULL && strcmp(f->name, "-g") == 0) {
            if (app_parse_int(dev->prog, "-g", value, f->min, f->max, &dev->g, 0) != 0) dev->g = -1;
            continue;
        }
        if (f == NULL || strcmp(f->name, "-c") != 0) continue;
        int64_t cores;
        if (app_parse_int(dev->prog, "-c", value, f->min, f->max, &cores, 1) != 0) return -1;
        char text[32];
        snprintf(text, sizeof text, "%lld", (long long)cores);
        if (appdev_setenv(dev->prog, "WEFT_CORES", text) != 0) return -1;
    }
    return appdev_prepare(dev, argc, argv);
}

/* After weft_init (its --weft-* options are gone from argv). */
static int qr_parse(int argc, char **argv, qr_opts_t *o, int verbose)
{
    *o = qr_defaults;
    for (int i = 1; i < argc; i++) {
        const char *value;
        if (strcmp(argv[i], "--check") == 0) {
            o->check = 1;
            continue;
        }
        const app_flag_t *f = app_flag_at(qr_flags, QR_NFLAGS, argc, argv, &i, &value);
        if (f == NULL) {
            if (verbose && value != NULL)
                fprintf(stderr, "weft-geqrf: %s needs a value (see --help)\n", argv[i]);
            else if (verbose)
                fprintf(stderr, "weft-geqrf: unknown option '%s' (see --help)\n", argv[i]);
            return -1;
        }
        int64_t *dst = (int64_t *)((char *)o + f->offset);
        if (app_parse_int("weft-geqrf", f->name, value, f->min, f->max, dst, verbose) != 0)
            return -1;
    }
    if (o->m < 0) o->m = o->n;
    return 0;
}

static int qr_validate(weft_context_t *ctx, const qr_opts_t *o, appdev_t *dev, int verbose)
{
    const char *why = NULL;
    if (o->p * o->q != weft_nranks(ctx))
        why = "P*Q must equal the number of ranks";
    else if (o->m < o->n)
        why = "-M must be >= -N (this is the QR of a tall or square matrix)";
    else if (o->ib > o->nb)
        why = "-b (inner block size) must be <= -t (tile size)";
    else if ((o->m + o->nb - 1) / o->nb > QR_NT_MAX)
        why = "too many tile rows: use a larger -t";
    if (why != NULL) {
        if (verbose)
            fprintf(stderr,
                    "weft-geqrf: -M %lld -N %lld -t %lld -b %lld -P %lld -Q %lld on %d ranks: %s\n",
                    (long long)o->m, (long long)o->n, (long long)o->nb, (long long)o->ib,
                    (long long)o->p, (long long)o->q, weft_nranks(ctx), why);
        return -1;
    }
    dev->g = o->g;
    return appdev_check(ctx, dev);
}

/* ---- the factors: V in A, T(m,k) and D(k) NEW tiles -------------------- */

typedef struct qr_factors {
    weft_matrix_t *A;
    int mt, nt;
    weft_data_t **t; /* T(m,k) at m + k * mt, m >= k */
    weft_data_t **d; /* D(k): the factored A(k,k), read by gemqrt */
} qr_factors_t;

static weft_data_t *qr_t(const qr_factors_t *f, int m, int k)
{
    return f->t[m + (size_t)k * f->mt];
}

static void qr_factors_free(qr_factors_t *f)
{
    for (size_t i = 0; f->t != NULL && i < (size_t)f->mt * f->nt; i++)
        if (f->t[i] != NULL) weft_data_release(f->t[i]);
    for (int k = 0; f->d != NULL && k < f->nt; k++)
        if (f->d[k] != NULL) weft_data_release(f->d[k]);
    free(f->t);
    free(f->d);
    f->t = f->d = NULL;
}

/* Every rank creates the same NEW tiles in the same order. T(m,k) has
 * min(ib, cols of column k) rows: LAPACK's inner block cannot exceed the
 * reflectors of the step. Each is held at the end by the rank of the tile
 * of A it belongs to. */
static int qr_factors_new(weft_context_t *ctx, qr_factors_t *f, weft_matrix_t *A, int ib)
{
    f->A = A;
    f->mt = weft_matrix_mt(A);
    f->nt = weft_matrix_nt(A);
    f->t = calloc((size_t)f->mt * f->nt, sizeof *f->t);
    f->d = calloc((size_t)f->nt, sizeof *f->d);
    if (f->t == NULL || f->d == NULL) goto fail;
    for (int k = 0; k < f->nt; k++) {
        int nk = weft_matrix_tile_cols(A, k), ibk = ib < nk ? ib : nk;
        f->d[k] = weft_data_new(ctx, WEFT_DOUBLE, weft_matrix_tile_rows(A, k), nk,
                                weft_matrix_tile_rank(A, k, k));
        if (f->d[k] == NULL) goto fail;
        for (int m = k; m < f->mt; m++) {
            weft_data_t **slot = &f->t[m + (size_t)k * f->mt];
            *slot = weft_data_new(ctx, WEFT_DOUBLE, ibk, nk, weft_matrix_tile_rank(A, m, k));
            if (*slot == NULL) goto fail;
        }
    }
    return 0;
fail:
    if (weft_rank(ctx) == 0) fprintf(stderr, "weft-geqrf: cannot create the T tiles\n");
    qr_factors_free(f);
    return -1;
}

/* ---- task insertion -------------------------------------------------- */

/* Priority of a task writing column col: earlier columns first, so the
 * panel of step k+1 overtakes the trailing update of step k; within a
 * column the factorizations (bonus 3) before the updates. */
static int qr_prio(int nt, int col, int bonus) { return 4 * (nt - col) + bonus; }

/* C(k,j) := op(Q_kk) C(k,j) for the columns j >= j0 of C. */
static int qr_insert_gemqrt(weft_taskpool_t *tp, const qr_factors_t *f, weft_matrix_t *C, int k,
                            int j0, char trans)
{
    int rc = 0, nt = weft_matrix_nt(C);
    for (int j = j0; j < nt && rc >= 0; j++)
        rc = weft_insert_task(tp, &qr_class_gemqrt, WEFT_R, f->d[k], WEFT_R, qr_t(f, k, k),
                              WEFT_RW | WEFT_AFFINITY, weft_tile(C, k, j), WEFT_VALUE, &trans,
                              sizeof trans, WEFT_PRIORITY, qr_prio(f->nt, j < f->nt ? j : 0, 2), 0);
    return rc;
}

/* (C(k,j), C(m,j)) := op(Q_mk) (C(k,j), C(m,j)) for the columns j >= j0. */
static int qr_insert_tsmqr(weft_taskpool_t *tp, const qr_factors_t *f, weft_matrix_t *C, int k,
                           int m, int j0, char trans)
{
    int rc = 0, nt = weft_matrix_nt(C);
    for (int j = j0; j < nt && rc >= 0; j++)
        rc = weft_insert_task(tp, &qr_class_tsmqr, WEFT_R, weft_tile(f->A, m, k), WEFT_R,
                              qr_t(f, m, k), WEFT_RW, weft_tile(C, k, j), WEFT_RW | WEFT_AFFINITY,
                              weft_tile(C, m, j), WEFT_VALUE, &trans, sizeof trans, WEFT_PRIORITY,
                              qr_prio(f->nt, j < f->nt ? j : 0, 1), 0);
    return rc;
}

static int qr_insert_step(weft_taskpool_t *tp, const qr_factors_t *f, int k)
{
    weft_matrix_t *A = f->A;
    weft_data_t *akk = weft_tile(A, k, k);
    int rc =
        weft_insert_task(tp, &qr_class_geqrt, WEFT_RW | WEFT_AFFINITY, akk, WEFT_W, qr_t(f, k, k),
                         WEFT_W, f->d[k], WEFT_PRIORITY, qr_prio(f->nt, k, 3), 0);
    if (rc >= 0) rc = qr_insert_gemqrt(tp, f, A, k, k + 1, 'T');
    for (int m = k + 1; m < f->mt && rc >= 0; m++) {
        rc = weft_insert_task(tp, &qr_class_tsqrt, WEFT_RW, akk, WEFT_RW | WEFT_AFFINITY,
                              weft_tile(A, m, k), WEFT_W, qr_t(f, m, k), WEFT_PRIORITY,
                              qr_prio(f->nt, k, 3), 0);
        if (rc >= 0) rc = qr_insert_tsmqr(tp, f, A, k, m, k + 1, 'T');
    }
    return rc < 0 ? rc : 0;
}

/* C := Q^T C (trans 'T': the steps in factorization order) or C := Q C
 * ('N': every step undone in reverse order), C with A's row tiling. */
static int qr_insert_apply(weft_taskpool_t *tp, const qr_factors_t *f, weft_matrix_t *C, char trans)
{
    int rc = 0;
    for (int s = 0; s < f->nt && rc >= 0; s++) {
        int k = trans == 'T' ? s : f->nt - 1 - s;
        if (trans == 'T') rc = qr_insert_gemqrt(tp, f, C, k, 0, trans);
        for (int i = k + 1; i < f->mt && rc >= 0; i++) {
            int m = trans == 'T' ? i : f->mt + k - i;
            rc = qr_insert_tsmqr(tp, f, C, k, m, 0, trans);
        }
        if (trans == 'N' && rc >= 0) rc = qr_insert_gemqrt(tp, f, C, k, 0, trans);
    }
    return rc < 0 ? rc : 0;
}

/* One fill task a tile of C with matrix `which` of the seed; with
 * prefetch, one task a tile bringing it to its home accelerator. */
static int qr_insert_fill(weft_taskpool_t *tp, weft_matrix_t *C, const qr_opts_t *o, int which,
                          int prefetch)
{
    int rc = 0;
    for (int j = 0; j < weft_matrix_nt(C) && rc >= 0; j++) {
        for (int m = 0; m < weft_matrix_mt(C) && rc >= 0; m++) {
            qr_tile_arg_t arg = {.seed = (uint64_t)o->seed,
                                 .which = which,
                                 .row0 = (int64_t)m * o->nb,
                                 .col0 = (int64_t)j * o->nb};
            weft_data_t *c = weft_tile(C, m, j);
            rc = weft_insert_task(tp, &qr_class_fill, WEFT_W | WEFT_AFFINITY, c, WEFT_VALUE, &arg,
                                  sizeof arg, 0);
            if (rc >= 0 && prefetch)
                rc = weft_insert_task(tp, &qr_class_prefetch, WEFT_R | WEFT_AFFINITY, c, 0);
        }
    }
    return rc < 0 ? rc : 0;
}

/* Waits for tp even after a failed insertion (nothing is left running) and
 * returns the first error of the two. */
static int qr_finish(weft_taskpool_t *tp, int insert_rc, const char *what, int verbose)
{
    int rc = weft_taskpool_wait(tp);
    if (insert_rc < 0) rc = insert_rc;
    if (rc < 0 && verbose) fprintf(stderr, "weft-geqrf: %s failed: %s\n", what, weft_strerror(rc));
    return rc;
}

/* ---- check ---------------------------------------------------------- */

/* Every tile of the check: B (Q^T A0) against R, X (Q^T Q X0) against
 * X0, each into the sums tile of its rank; then the all-reduce of the sums
 * (a chain into S(0), then S(0) copied to every S(i)). */
static int qr_insert_norms(weft_taskpool_t *tp, const qr_factors_t *f, weft_matrix_t *B,
                           weft_matrix_t *X, weft_matrix_t *S, const qr_opts_t *o, int nranks)
{
    int rc = 0;
    for (int j = 0; j < f->nt && rc >= 0; j++)
        for (int m = 0; m < f->mt && rc >= 0; m++) {
            qr_tile_arg_t a = {(uint64_t)o->seed, 0, (int64_t)m * o->nb, (int64_t)j * o->nb};
            rc = weft_insert_task(tp, &qr_class_resid_norm, WEFT_R, weft_tile(f->A, m, j), WEFT_R,
                                  weft_tile(B, m, j), WEFT_RW | WEFT_AFFINITY,
                                  weft_tile(S, weft_matrix_tile_rank(B, m, j), 0), WEFT_VALUE, &a,
                                  sizeof a, 0);
        }
    for (int j = 0; j < weft_matrix_nt(X) && rc >= 0; j++)
        for (int m = 0; m < f->mt && rc >= 0; m++) {
            qr_tile_arg_t a = {(uint64_t)o->seed, 1, (int64_t)m * o->nb, (int64_t)j * o->nb};
            rc = weft_insert_task(
                tp, &qr_class_orth_norm, WEFT_R, weft_tile(X, m, j), WEFT_RW | WEFT_AFFINITY,
                weft_tile(S, weft_matrix_tile_rank(X, m, j), 0), WEFT_VALUE, &a, sizeof a, 0);
        }
    for (int pass = 1; pass >= 0; pass--)
        for (int i = 1; i < nranks && rc >= 0; i++) {
            weft_data_t *s0 = weft_tile(S, 0, 0), *si = weft_tile(S, i, 0);
            rc = weft_insert_task(tp, &qr_class_sum_merge, WEFT_R, pass ? si : s0,
                                  (pass ? WEFT_RW : WEFT_W) | WEFT_AFFINITY, pass ? s0 : si,
                                  WEFT_VALUE, &pass, sizeof pass, 0);
        }
    return rc < 0 ? rc : 0;
}

static int qr_insert_check(weft_taskpool_t *tp, const qr_factors_t *f, weft_matrix_t *B,
                           weft_matrix_t *X, weft_matrix_t *S, const qr_opts_t *o, int nranks)
{
    int rc = qr_insert_fill(tp, B, o, 0, 0);
    if (rc >= 0) rc = qr_insert_fill(tp, X, o, 1, 0);
    for (int i = 0; i < nranks && rc >= 0; i++)
        rc =
            weft_insert_task(tp, &qr_class_sum_zero, WEFT_W | WEFT_AFFINITY, weft_tile(S, i, 0), 0);
    if (rc >= 0) rc = qr_insert_apply(tp, f, B, 'T');
    if (rc >= 0) rc = qr_insert_apply(tp, f, X, 'N');
    if (rc >= 0) rc = qr_insert_apply(tp, f, X, 'T');
    if (rc >= 0) rc = qr_insert_norms(tp, f, B, X, S, o, nranks);
    return rc < 0 ? rc : 0;
}

/* The two scaled residuals of the factorization in f, in res[0..1]. X0
 * has as many columns as one tile column a process column (at most N). */
static int qr_residuals(weft_context_t *ctx, weft_taskpool_t *tp, const qr_factors_t *f,
                        const qr_opts_t *o, double res[2])
{
    int rank = weft_rank(ctx), nranks = weft_nranks(ctx), rc = WEFT_ERR_NOMEM;
    int64_t nx = o->nb * o->q < o->n ? o->nb * o->q : o->n;
    int nb = (int)o->nb, p = (int)o->p, q = (int)o->q;
    weft_matrix_t *B = weft_matrix_new(ctx, WEFT_DOUBLE, o->m, o->n, nb, nb, p, q);
    weft_matrix_t *X = weft_matrix_new(ctx, WEFT_DOUBLE, o->m, nx, nb, nb, p, q);
    weft_matrix_t *S = weft_matrix_new(ctx, WEFT_DOUBLE, nranks, QR_SUMS, 1, QR_SUMS, nranks, 1);
    if (B == NULL || X == NULL || S == NULL) {
        fprintf(stderr, "weft-geqrf: cannot create the matrices of the check\n");
        goto free_matrices;
    }
    rc = qr_insert_check(tp, f, B, X, S, o, nranks);
    rc = qr_finish(tp, rc, "the check", rank == 0);
    if (rc < 0) goto free_matrices;
    int64_t ld = 0;
    const double *s = weft_data_host_ptr(weft_tile(S, rank, 0), &ld);
    if (s == NULL) {
        fprintf(stderr, "weft-geqrf: rank %d does not hold its residual sums\n", rank);
        rc = WEFT_ERR_INTERNAL;
        goto free_matrices;
    }
    double eps = LAPACKE_dlamch_work('e'), m = (double)o->m;
    res[0] = sqrt(s[0]) / (sqrt(s[ld]) * m * eps);
    res[1] = sqrt(s[2 * ld]) / (sqrt(s[3 * ld]) * m * eps);
free_matrices:
    if (S != NULL) weft_matrix_free(S);
    if (X != NULL) weft_matrix_free(X);
    if (B != NULL) weft_matrix_free(B);
    return rc;
}

/* ---- driver ---------------------------------------------------------- */

static double qr_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int qr_factorize(weft_taskpool_t *tp, const qr_factors_t *f, int verbose)
{
    int rc = 0;
    for (int k = 0; k < f->nt && rc >= 0; k++) rc = qr_insert_step(tp, f, k);
    return qr_finish(tp, rc, "dgeqrf", verbose);
}

/* One run: generate, factorize (timed), report, check. 0, a weft error,
 * or 1 for a failed check. */
static int qr_run(weft_context_t *ctx, weft_taskpool_t *tp, const qr_factors_t *f,
                  const qr_opts_t *o)
{
    int verbose = weft_rank(ctx) == 0;
    int rc = qr_insert_fill(tp, f->A, o, 0, o->g > 0);
    rc = qr_finish(tp, rc, "generating the matrix", verbose);
    if (rc < 0) return rc;
    appdev_snap_t before;
    appdev_snapshot(ctx, &before);
    double t0 = qr_now();
    rc = qr_factorize(tp, f, verbose);
    double t = qr_now() - t0;
    if (rc < 0) return rc;
    int g = appdev_used(ctx, &before); /* accelerators of rank 0 that ran tasks */
    double m = (double)o->m, n = (double)o->n;
    if (verbose)
        printf("[****] TIME(s) %.6f : dgeqrf PxQxg= %d %d %d NB= %lld N= %lld : %.2f gflops\n", t,
               (int)o->p, (int)o->q, g, (long long)o->nb, (long long)o->n,
               (2.0 * m * n * n - 2.0 * n * n * n / 3.0) / t / 1e9);
    if (!o->check) return 0;
    double res[2] = {0.0, 0.0};
    rc = qr_residuals(ctx, tp, f, o, res);
    if (rc < 0) return rc;
    int passed = res[0] < QR_CHECK_MAX && res[1] < QR_CHECK_MAX;
    if (verbose)
        printf("residual = %.6e orthogonality = %.6e (M= %lld IB= %lld) : %s\n", res[0], res[1],
               (long long)o->m, (long long)o->ib, passed ? "PASSED" : "FAILED");
    return passed ? 0 : 1;
}

static int qr_main(weft_context_t *ctx, const qr_opts_t *o)
{
    int verbose = weft_rank(ctx) == 0, rc = 0;
    weft_matrix_t *A =
        weft_matrix_new(ctx, WEFT_DOUBLE, o->m, o->n, (int)o->nb, (int)o->nb, (int)o->p, (int)o->q);
    if (A == NULL) {
        if (verbose) fprintf(stderr, "weft-geqrf: cannot create the matrix\n");
        return 1;
    }
    qr_factors_t f = {0};
    weft_taskpool_t *tp = NULL;
    if (qr_factors_new(ctx, &f, A, (int)o->ib) != 0) {
        rc = 1;
        goto free_matrix;
    }
    if ((tp = weft_taskpool_new(ctx, "geqrf")) == NULL) {
        if (verbose) fprintf(stderr, "weft-geqrf: cannot create the taskpool\n");
        rc = 1;
        goto free_factors;
    }
    for (int64_t r = 0; r < o->nruns && rc == 0; r++) {
        rc = qr_run(ctx, tp, &f, o);
        fflush(stdout);
    }
    weft_taskpool_free(tp);
free_factors:
    qr_factors_free(&f);
free_matrix:
    weft_matrix_free(A);
    return rc == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    appdev_t dev;
    int rc = qr_prescan(argc, argv, &dev);
    if (rc == 2) return appdev_probe(dev.prog, argc, argv);
    if (rc != 0) return rc > 0 ? 0 : 1;
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (ctx == NULL) {
        fprintf(stderr, "weft-geqrf: weft_init failed (see the message above)\n");
        appdev_init_failed(&dev);
        return 1;
    }
    int verbose = weft_rank(ctx) == 0;
    qr_opts_t o;
    if (qr_parse(argc, argv, &o, verbose) != 0 || qr_validate(ctx, &o, &dev, verbose) != 0)
        rc = 1;
    else
        rc = qr_main(ctx, &o);
    int frc = weft_fini(ctx);
    if (frc < 0) {
        fprintf(stderr, "weft-geqrf: weft_fini: %s\n", weft_strerror(frc));
        rc = 1;
    }
    return rc;
}
