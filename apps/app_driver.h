/* The driver of the dense linear algebra apps (weft-potrf, -getrf, -geqrf,
 * -gemm, -posv): main's skeleton (prescan, weft_init, parse, validation,
 * the runs, weft_fini and their errors), the runs loop on one taskpool, the
 * timing of a run with its "[****]" line, the residual check of a square
 * factorization (app_sums.h's all-reduce) and the verdict line.
 * An app gives its command line (app_cli.h), its own validation, the
 * setting up and freeing of its data and one run; it keeps its DAG, its
 * kernels and its check. Header-only, as the other apps/ helpers (every
 * .c file of apps/ is a program). Public API only. */
#ifndef WEFT_APPS_APP_DRIVER_H
#define WEFT_APPS_APP_DRIVER_H

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lapacke.h>
#include <mpi.h>
#include <weft/weft.h>

#include "app_agree.h"
#include "app_cli.h"
#include "app_devices.h"
#include "app_sums.h"
#include "app_verdict.h"

typedef struct app_driver {
    app_cli_t cli;
    const char *pool; /* the taskpool's name */
    /* The app's options (app_opts_t first) against the context, after the
     * parse: grid, tile counts, defaults that depend on other flags. 0, or
     * -1 after a message (when verbose). */
    int (*validate)(weft_context_t *ctx, void *opts, int verbose);
    /* Creates the app's data in data: 0, or -1 (after a message on rank
     * 0); free is called after either. */
    int (*setup)(weft_context_t *ctx, const void *opts, void *data);
    void (*free)(void *data);
    /* Run number r: 0, a weft error, or 1 for a failed check. */
    int (*run)(weft_context_t *ctx, weft_taskpool_t *tp, const void *opts, void *data, int64_t r);
} app_driver_t;

/* Waits for tp even after a failed insertion (so nothing is left running)
 * and returns the first error of the two, named (when verbose). */
static inline int app_wait(const char *prog, weft_taskpool_t *tp, int insert_rc, const char *what,
                           int verbose)
{
    int rc = weft_taskpool_wait(tp);
    if (insert_rc < 0) rc = insert_rc;
    if (rc < 0 && verbose) fprintf(stderr, "%s: %s failed: %s\n", prog, what, weft_strerror(rc));
    return rc;
}

/* --preload (weft-potrf, weft-getrf): CUDA loads each cuBLAS and cuSOLVER
 * kernel at its first launch, and a library handle sets itself up at its
 * first calls; the first factorization of a process paid that inside its
 * timing, as idle gaps between kernels (its trace had the second run's
 * kernel time and a longer span). With it, the taskpool that generates the
 * first matrix on the host also factorizes a small matrix of the same
 * tiles on the devices, so this happens while the host works. On by
 * default with CUDA devices (-g asks every rank for the same ones, so the
 * ranks agree). */
static inline int app_preload_default(weft_context_t *ctx, const app_opts_t *o)
{
    return o->g > 0 && appdev_count(ctx, WEFT_DEV_CUDA) > 0;
}

/* A rows x cols matrix of doubles in the options' tiles, grid and deal. */
static inline weft_matrix_t *app_matrix(weft_context_t *ctx, const app_opts_t *o, int64_t rows,
                                        int64_t cols)
{
    int nb = (int)o->nb;
    /* One rank, or the plain deal: the grid's own call (owners computed). */
    if (o->dist == APP_DIST_CYCLIC || o->p * o->q == 1)
        return weft_matrix_new(ctx, WEFT_DOUBLE, rows, cols, nb, nb, (int)o->p, (int)o->q);
    weft_grid_t g = {(int)o->p, (int)o->q};
    weft_dist_t d = {.rank = weft_dist_block_reflected_rank, .arg = &g};
    return weft_matrix_new_dist(ctx, WEFT_DOUBLE, rows, cols, nb, nb, &d);
}

/* One NEW tile of doubles per diagonal tile of A, of its shape, held at
 * the end by that tile's rank and created where its first writer runs (the
 * inverted diagonal factors of --trsm-inv). NULL after naming what failed
 * (on rank 0). */
static inline weft_data_t **app_diag_tiles_new(weft_context_t *ctx, weft_matrix_t *A,
                                               const char *prog, const char *what)
{
    int nt = weft_matrix_nt(A);
    weft_data_t **d = calloc((size_t)nt, sizeof *d);
    for (int k = 0; d != NULL && k < nt; k++) {
        d[k] = weft_data_new(ctx, WEFT_DOUBLE, weft_matrix_tile_rows(A, k),
                             weft_matrix_tile_cols(A, k), weft_matrix_tile_rank(A, k, k));
        if (d[k] == NULL) {
            while (k-- > 0) weft_data_release(d[k]);
            free(d);
            d = NULL;
        }
    }
    if (d == NULL && weft_rank(ctx) == 0) fprintf(stderr, "%s: cannot create %s\n", prog, what);
    return d;
}

static inline void app_diag_tiles_free(weft_data_t **d, int nt)
{
    for (int k = 0; d != NULL && k < nt; k++) weft_data_release(d[k]);
    free(d);
}

/* ---- timing of a run --------------------------------------------------- */

typedef struct app_timer {
    appdev_snap_t devs; /* to count the accelerators that ran tasks */
    double t0, t;       /* start, then seconds */
} app_timer_t;

static inline double app_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline void app_timer_start(weft_context_t *ctx, app_timer_t *tm)
{
    appdev_snapshot(ctx, &tm->devs);
    tm->t0 = app_now();
}

static inline void app_timer_stop(app_timer_t *tm) { tm->t = app_now() - tm->t0; }

/* On rank 0 the line the benchmark scripts read: op, grid, g = the
 * accelerators of this rank that ran tasks since the start, NB, N, then
 * extra (say " NRHS= 64", or "") and the rate of flops in tm->t. */
static inline void app_report(weft_context_t *ctx, const app_timer_t *tm, const char *op,
                              const app_opts_t *o, const char *extra, double flops)
{
    int g = appdev_used(ctx, &tm->devs);
    if (weft_rank(ctx) != 0) return;
    char rate[48];
    app_rate_text(ctx, flops, tm->t, rate, sizeof rate);
    printf("[****] TIME(s) %.6f : %s PxQxg= %d %d %d NB= %lld N= %lld%s : %s\n", tm->t, op,
           (int)o->p, (int)o->q, g, (long long)o->nb, (long long)o->n, extra, rate);
}

/* Whether run r checks its result (--check: all, --check-first: the first). */
static inline int app_check_due(const app_opts_t *o, int64_t r)
{
    return o->check == 1 || (o->check == 2 && r == 0);
}

/* The verdict on a scaled residual (NaN fails): its line on rank 0, 0 or
 * 1 on every rank alike. */
static inline int app_verdict(weft_context_t *ctx, const char *prog, double resid, double max)
{
    int mine = resid < max, passed = app_agree_verdict(ctx, prog, mine);
    if (weft_rank(ctx) == 0)
        printf("residual = %.6e : %s\n", resid, app_verdict_word(mine, passed));
    return passed ? 0 : 1;
}

/* Inserts the tasks that compute the residual of a square factorization
 * tile by tile into R (n x n, the options' tiles) and add its squared norm
 * and the original's into columns 0 and 1 of the rank's sums in S. */
typedef int (*app_resid_insert_fn)(weft_taskpool_t *tp, weft_matrix_t *R, app_sums_t *S,
                                   const void *opts, const void *data);

/* A rows x cols matrix of the check (--check), made when the app makes
 * its matrix: made after the factorization, one past the rank's share of
 * host memory was refused once the work was done. NULL after a message
 * on rank 0 (weft names the refusal on every rank). */
static inline weft_matrix_t *app_check_matrix(weft_context_t *ctx, const char *prog,
                                              const app_opts_t *o, int64_t rows, int64_t cols)
{
    weft_matrix_t *R = app_matrix(ctx, o, rows, cols);
    if (R == NULL && weft_rank(ctx) == 0)
        fprintf(stderr, "%s: cannot create the %lld x %lld matrix of the check (--check)\n", prog,
                (long long)rows, (long long)cols);
    return R;
}

/* The check of a square factorization into R (app_check_matrix): ||R||_F
 * / (||A||_F N eps) in *resid, the sums all-reduced by tasks. 0 or a weft
 * error. */
static inline int app_resid_check(weft_context_t *ctx, weft_taskpool_t *tp, const char *prog,
                                  const app_opts_t *o, weft_matrix_t *R, app_resid_insert_fn insert,
                                  const void *data, double *resid)
{
    int rc = WEFT_ERR_NOMEM;
    app_sums_t S = app_sums_new(ctx, 2);
    double s[2];
    if (S.m == NULL) {
        fprintf(stderr, "%s: cannot create the sums of the check\n", prog);
        goto free_matrices;
    }
    rc = app_sums_insert_zero(tp, &S);
    if (rc >= 0) rc = insert(tp, R, &S, o, data);
    if (rc >= 0) rc = app_sums_insert_allreduce(tp, &S);
    if (rc >= 0) rc = app_sums_insert_out(tp, &S, s);
    rc = app_wait(prog, tp, rc, "the residual check", weft_rank(ctx) == 0);
    if (rc >= 0) *resid = sqrt(s[0]) / (sqrt(s[1]) * (double)o->n * LAPACKE_dlamch_work('e'));
free_matrices:
    app_sums_free(&S);
    return rc;
}

/* ---- the runs and main ------------------------------------------------- */

/* Data, taskpool, the runs until one fails, then all freed: 0 or 1. */
static inline int app_runs(const app_driver_t *d, weft_context_t *ctx, const app_opts_t *o,
                           void *data)
{
    int rc = d->setup(ctx, o, data) == 0 ? 0 : 1;
    weft_taskpool_t *tp = rc == 0 ? weft_taskpool_new(ctx, d->pool) : NULL;
    if (rc == 0 && tp == NULL) {
        if (weft_rank(ctx) == 0) fprintf(stderr, "%s: cannot create the taskpool\n", d->cli.prog);
        rc = 1;
    }
    for (int64_t r = 0; r < o->nruns && rc == 0; r++) {
        rc = d->run(ctx, tp, o, data, r);
        fflush(stdout);
    }
    if (tp != NULL) weft_taskpool_free(tp);
    d->free(data);
    return rc == 0 ? 0 : 1;
}

/* An app's main: opts holds its defaults (app_opts_t first), data its
 * zeroed data. Returns main's exit status. */
static inline int app_main(const app_driver_t *d, void *opts, void *data, int argc, char **argv)
{
    app_stderr_by_line();
    appdev_t dev;
    int rc = app_cli_prescan(&d->cli, argc, argv, &dev);
    if (rc == 2) return appdev_probe(dev.prog, argc, argv);
    if (rc != 0) return rc > 0 ? 0 : 1;
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (ctx == NULL) {
        appdev_init_failed(&dev);
        return 1;
    }
    if (app_same_program(d->cli.prog, "", ctx) != 0) {
        (void)weft_fini(ctx);
        return 1;
    }
    /* Then, on every rank alike: a rank that stops below (its command
     * line) must not leave the others in this collective. */
    int same_g = app_same_flag(d->cli.prog, ctx, "-g", dev.g, 1) == 0;
    /* A refused command line is named on every rank (each exits non-zero):
     * under mpiexec a rank's stderr may be all its user reads. */
    int verbose = 1;
    app_opts_t *o = opts;
    rc = app_cli_parse(&d->cli, argc, argv, opts, verbose);
    /* Every rank, parsed or not (a rank refused above is not left out).
     * The options that shape the task sequence too: ranks given different
     * ones were told only that they "inserted different task sequences",
     * in whichever step met the difference first (a stranger's -t on one
     * rank read as a failure to generate the matrix). */
    const struct {
        const char *flag;
        int64_t value;
    } same[] = {{"--seed", o->seed}, {"-N", o->n}, {"-t", o->nb_given ? o->nb : -1},
                {"-P", o->p},        {"-Q", o->q}, {"--nruns", o->nruns},
                {"--ptg", o->ptg}};
    int known = rc == 0;
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++)
        if (app_same_flag(d->cli.prog, ctx, same[i].flag, same[i].value, known) != 0) rc = 1;
    /* Named by the flags given ("--check 2" named --check-first by its number). */
    static const char *const checks[] = {"neither", "--check", "--check-first"};
    if (app_same_flag_words(d->cli.prog, ctx, "check", o->check, known, checks) != 0) rc = 1;
    /* The deal, as the ranks resolved it (a rank given --ptg deals cyclically). */
    if (app_same_flag_words(d->cli.prog, ctx, "--dist", o->dist, known, app_cli_dist_words) != 0)
        rc = 1;
    /* The app's own flags shape its data and tasks as much (gemm's -M and
     * -K, --trsm-inv, --nrhs, -b, --tree): a difference was met as "ranks
     * made different data creations", no flag named. A common option its
     * table lists again with other bounds (weft-geqrf's -t, a field of
     * app_opts_t) was compared above. */
    if (app_same_flags(d->cli.prog, ctx, d->cli.flags, d->cli.nflags, opts, sizeof(app_opts_t),
                       NULL, d->cli.words, d->cli.nwords, known) != 0)
        rc = 1;
    if (app_all_parsed(d->cli.prog, ctx, known) != 0) rc = 1;
    if (rc == 0) app_cli_default_grid(o, weft_nranks(ctx));
    if (rc == 0 && !o->nb_given) {
        appdev_t asked = dev;
        asked.g = o->g;
        /* One tile only where the prescan made room for it (its workspace,
         * one stream) and weft confirms the one rank it guessed from the
         * launcher; -g and -N as parsed now. */
        asked.one_tile =
            dev.one_tile && weft_nranks(ctx) == 1 && app_cli_one_tile(&d->cli, o->n, &asked, 1);
        o->nb = app_cli_auto_nb(&d->cli, o->n, &asked);
    }
    if (rc == 0) rc = app_sim_check(d->cli.prog, ctx, o->check);
    if (rc != 0 || d->validate(ctx, opts, verbose) != 0) {
        rc = 1;
    } else {
        /* dev.g: -g as the prescan read it, the same value as o->g, or -1
         * when not given (the devices are then the parameters' choice). */
        rc = !same_g || appdev_check(ctx, &dev) != 0 ? 1 : app_runs(d, ctx, o, data);
    }
    int frc = weft_fini(ctx);
    if (frc < 0) {
        fprintf(stderr, "%s: weft_fini: %s\n", d->cli.prog, weft_strerror(frc));
        rc = 1;
    }
    /* Results that never reached stdout (closed, or a full disk) are no
     * success: the run exited 0 with its timing and verdict lost. */
    int werr = fflush(stdout) != 0 ? errno : 0;
    if (werr || ferror(stdout)) {
        fprintf(stderr, "%s: the results could not be written to stdout: %s\n", d->cli.prog,
                werr ? strerror(werr) : "a write failed");
        rc = 1;
    }
    return rc;
}

#endif
