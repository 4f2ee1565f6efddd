/* weft-gemm-stress: chains of GEMMs whose C tiles are NEW tiles created on
 * the fly by tasks and handed from rank to rank.
 *
 * `width` independent chains of `depth` steps. Step s (1..depth) of chain c:
 *
 *     C[c][s] = A[c][s] * C[c][s-1] + B[c][s]
 *
 * where A[c][s] and B[c][s] are tile (c, s-1) of two width x depth tiled
 * matrices (2D block-cyclic over P x Q ranks, filled by tasks from a seed),
 * C[c][0] is generated from the seed too, and every C[c][s] is a NEW tile
 * (weft_data_new) owned by rank (c + s) % nranks: the task that makes it runs
 * there (WEFT_W | WEFT_AFFINITY), so consecutive steps run on different ranks
 * and each C travels to the next one; the A and B tiles travel from their
 * block-cyclic owners. Intermediate C tiles are released as soon as the task
 * that reads them is inserted.
 *
 * --check: the rank that owns the final C[c][depth] recomputes chain c with
 * CBLAS from the same seeds (regenerating A, B and C[c][0]; nothing is
 * gathered) inside a task, and the largest relative error is max-reduced over
 * the ranks with tasks too. Each rank also compares the activations it sent
 * during the chains with the count the sequence implies (one per tile
 * version per destination rank). Public API and CBLAS only.
 *
 * -g N: the GEMM steps run on the N accelerators a rank asks for (type
 * device_type, see app_devices.h) and on them only: their class then has no
 * CPU body, so every NEW C tile is created in device memory and travels
 * from device to device and rank to rank. CUDA: cublasDgemm on the task's
 * stream; emu: the CPU body as the emulated device's kernel. Fill and check
 * tasks keep their CPU bodies (an emu device may run them too).
 *
 * --ptg: the chains through the parameterized task graph of
 * gemm_stress_ptg.h (same steps, ranks and messages). */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <weft/weft.h>

#include "app_verdict.h"
#include "gemm_stress_cli.h"
#include "gemm_stress_kernels.h"
#include "gemm_stress_ptg.h"

/* ---- the run --------------------------------------------------------- */

typedef struct gs_run {
    weft_context_t *ctx;
    const gs_opts_t *o;
    int rank, nranks, width, depth, nb;
    weft_matrix_t *A, *B;
    weft_data_t **c;              /* C[c][s] of the newest step s, width entries (NULL: none) */
    weft_data_t **y;              /* --ptg: the two tiles each chain alternates between */
    int64_t expected_activations; /* that this rank sends during the chains */
} gs_run_t;

static int gs_owner(const gs_run_t *r, int chain, int step)
{
    return (int)(((int64_t)chain + step) % r->nranks);
}

static gs_tile_arg_t gs_arg(const gs_run_t *r, int which, int chain, int step)
{
    return (gs_tile_arg_t){.seed = (uint64_t)r->o->seed,
                           .which = which,
                           .chain = chain,
                           .step = step,
                           .nb = r->nb,
                           .depth = r->depth};
}

static int gs_wait(weft_taskpool_t *tp, int insert_rc, const char *what, int verbose)
{
    int rc = weft_taskpool_wait(tp);
    if (insert_rc < 0) rc = insert_rc;
    if (rc < 0 && verbose) fprintf(stderr, GS_NAME ": %s failed: %s\n", what, weft_strerror(rc));
    return rc;
}

/* Fill tasks of the NEW C[c][0], then (without --ptg, whose graph fills
 * them) of A and B (tile (c, s-1) of step s) step-major, as the chains use
 * them: tiles of a column are neighbours in a tiled matrix, and walking
 * them in that order keeps an insertion on every rank close to memory it
 * touched (docs/SCALE.md). */
static int gs_insert_fill(weft_taskpool_t *tp, gs_run_t *r)
{
    int rc = 0;
    for (int c = 0; c < r->width && rc >= 0; c++) {
        r->c[c] = weft_data_new(r->ctx, WEFT_DOUBLE, r->nb, r->nb, gs_owner(r, c, 0));
        if (r->c[c] == NULL) return WEFT_ERR_NOMEM;
        gs_tile_arg_t arg = gs_arg(r, GS_GEN_C0, c, 0);
        rc = weft_insert_task(tp, &gs_class_fill, WEFT_W | WEFT_AFFINITY, r->c[c], WEFT_VALUE, &arg,
                              sizeof arg, 0);
    }
    for (int s = 1; s <= r->depth && rc >= 0 && !r->o->ptg; s++)
        for (int c = 0; c < r->width && rc >= 0; c++) {
            gs_tile_arg_t arg = gs_arg(r, GS_GEN_A, c, s);
            rc = weft_insert_task(tp, &gs_class_fill, WEFT_W | WEFT_AFFINITY,
                                  weft_tile(r->A, c, s - 1), WEFT_VALUE, &arg, sizeof arg, 0);
            arg = gs_arg(r, GS_GEN_B, c, s);
            if (rc >= 0)
                rc = weft_insert_task(tp, &gs_class_fill, WEFT_W | WEFT_AFFINITY,
                                      weft_tile(r->B, c, s - 1), WEFT_VALUE, &arg, sizeof arg, 0);
        }
    return rc < 0 ? rc : 0;
}

/* The activations this rank must send during the chains: one per remote
 * reader of each tile version (A, the previous C, B of each step). */
static int64_t gs_expected_activations(const gs_run_t *r)
{
    int64_t n = 0;
    for (int s = 1; s <= r->depth; s++)
        for (int c = 0; c < r->width; c++) {
            int exec = gs_owner(r, c, s);
            int src[3] = {weft_matrix_tile_rank(r->A, c, s - 1), gs_owner(r, c, s - 1),
                          weft_matrix_tile_rank(r->B, c, s - 1)};
            for (int k = 0; k < 3; k++) n += src[k] == r->rank && exec != r->rank;
        }
    return n;
}

/* Step-major: step s of every chain, then step s+1; the C tiles of step
 * s-1 are released once their reader is inserted. */
static int gs_insert_chains(weft_taskpool_t *tp, gs_run_t *r)
{
    int rc = 0;
    for (int s = 1; s <= r->depth && rc >= 0; s++) {
        for (int c = 0; c < r->width && rc >= 0; c++) {
            int exec = gs_owner(r, c, s);
            weft_data_t *a = weft_tile(r->A, c, s - 1), *b = weft_tile(r->B, c, s - 1);
            weft_data_t *next = weft_data_new(r->ctx, WEFT_DOUBLE, r->nb, r->nb, exec);
            if (next == NULL) return WEFT_ERR_NOMEM;
            rc = weft_insert_task(tp, r->o->g > 0 ? &gs_class_step_dev : &gs_class_step, WEFT_R, a,
                                  WEFT_R, r->c[c], WEFT_R, b, WEFT_W | WEFT_AFFINITY, next, 0);
            weft_data_release(r->c[c]);
            r->c[c] = next;
        }
    }
    return rc < 0 ? rc : 0;
}

/* --ptg: the two tiles of each chain, Y[c][k] owned by the rank of the
 * last step that writes it, written once before the graph (a fill of
 * C_0's contents, replaced by the steps) so that the check after it reads
 * a written tile on every rank. */
static int gs_ptg_tiles(weft_taskpool_t *tp, gs_run_t *r)
{
    int rc = 0;
    for (int k = 0; k < 2 * r->width && rc >= 0; k++) {
        int c = k / 2, owner = gp_y_owner(c, r->depth, k % 2, r->nranks);
        r->y[k] = weft_data_new(r->ctx, WEFT_DOUBLE, r->nb, r->nb, owner);
        if (r->y[k] == NULL) return WEFT_ERR_NOMEM;
        gs_tile_arg_t arg = gs_arg(r, GS_GEN_C0, c, 0);
        rc = weft_insert_task(tp, &gs_class_fill, WEFT_W | WEFT_AFFINITY, r->y[k], WEFT_VALUE, &arg,
                              sizeof arg, 0);
    }
    return rc < 0 ? rc : 0;
}

/* The chains through the graph; each chain's result is then Y[c][depth %
 * 2], which takes C_0's place in r->c for the check. */
static gs_ptg_t gs_ptg_of(const gs_run_t *r)
{
    return (gs_ptg_t){.width = r->width,
                      .depth = r->depth,
                      .nranks = r->nranks,
                      .p = (int)r->o->p,
                      .q = (int)r->o->q,
                      .dev = r->o->g > 0,
                      .seed = (uint64_t)r->o->seed,
                      .nb = r->nb,
                      .A = r->A,
                      .B = r->B,
                      .x0 = r->c,
                      .y = r->y};
}

static int gs_ptg_run_chains(weft_taskpool_t *tp, gs_run_t *r)
{
    gs_ptg_t g = gs_ptg_of(r);
    int rc = gs_ptg_chains(tp, &g);
    if (rc < 0) return rc;
    for (int c = 0; c < r->width; c++) {
        weft_data_release(r->c[c]);
        r->c[c] = r->y[2 * c + r->depth % 2];
        r->y[2 * c + r->depth % 2] = NULL;
    }
    return 0;
}

/* Check tasks on the owner of each final C, then the max-reduction of the
 * per-rank error tiles E[i] into E[0] and back to every E[i]. */
static int gs_insert_check(weft_taskpool_t *tp, gs_run_t *r, weft_matrix_t *E)
{
    int rc = 0;
    for (int i = 0; i < r->nranks && rc >= 0; i++)
        rc =
            weft_insert_task(tp, &gs_class_err_zero, WEFT_W | WEFT_AFFINITY, weft_tile(E, i, 0), 0);
    for (int c = 0; c < r->width && rc >= 0; c++) {
        gs_tile_arg_t arg = gs_arg(r, 0, c, r->depth);
        rc = weft_insert_task(tp, &gs_class_check, WEFT_R | WEFT_AFFINITY, r->c[c], WEFT_RW,
                              weft_tile(E, gs_owner(r, c, r->depth), 0), WEFT_VALUE, &arg,
                              sizeof arg, 0);
    }
    for (int i = 1; i < r->nranks && rc >= 0; i++)
        rc = weft_insert_task(tp, &gs_class_err_max, WEFT_R, weft_tile(E, i, 0),
                              WEFT_RW | WEFT_AFFINITY, weft_tile(E, 0, 0), 0);
    for (int i = 1; i < r->nranks && rc >= 0; i++)
        rc = weft_insert_task(tp, &gs_class_err_copy, WEFT_R, weft_tile(E, 0, 0),
                              WEFT_W | WEFT_AFFINITY, weft_tile(E, i, 0), 0);
    return rc < 0 ? rc : 0;
}

static double gs_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The check after the chains: 0 passed, 1 failed (on every rank alike,
 * each rank's line saying where), or a weft error. */
static int gs_check(weft_taskpool_t *tp, gs_run_t *r, int64_t activations)
{
    int verbose = r->rank == 0, failed = 0;
    if (activations != r->expected_activations) {
        fprintf(stderr,
                GS_NAME ": rank %d sent %lld activations during the chains, the task "
                        "sequence implies %lld (one per tile version per destination)\n",
                r->rank, (long long)activations, (long long)r->expected_activations);
        failed = 1;
    }
    weft_matrix_t *E = weft_matrix_new(r->ctx, WEFT_DOUBLE, 2 * r->nranks, 1, 2, 1, r->nranks, 1);
    if (E == NULL) {
        fprintf(stderr, GS_NAME ": cannot create the error tiles\n");
        return WEFT_ERR_NOMEM;
    }
    int rc = gs_insert_check(tp, r, E);
    rc = gs_wait(tp, rc, "the check", verbose);
    if (rc < 0) goto out;
    /* From here a rank's failure is its own until the verdict, which
     * every rank takes part in (rank 0 printed PASSED while another rank's
     * check failed, and that rank exited 1 without a line, or 0). */
    const double *e = weft_data_host_ptr(weft_tile(E, r->rank, 0), NULL);
    double err = e ? e[0] : INFINITY, held = e ? e[1] : 0;
    if (e == NULL)
        fprintf(stderr, GS_NAME ": rank %d does not hold its error tile\n", r->rank);
    else if (held != (double)r->width)
        fprintf(stderr,
                GS_NAME ": rank %d: its error tile holds %.0f of the %d chains' errors: a task "
                        "of the check did not run\n",
                r->rank, held, r->width);
    failed |= e == NULL || held != (double)r->width || !(err <= GS_ERROR_MAX);
    int passed = app_agree_verdict(r->ctx, GS_NAME, !failed);
    if (verbose)
        printf(GS_NAME ": max relative error %.3e (threshold %.0e), activations %lld on "
                       "rank 0 : %s\n",
               err, GS_ERROR_MAX, (long long)activations, app_verdict_word(!failed, passed));
    rc = !passed;
out:
    weft_matrix_free(E);
    return rc;
}

static int gs_run(weft_context_t *ctx, weft_taskpool_t *tp, gs_run_t *r)
{
    int verbose = r->rank == 0, rc = 0;
    if (r->o->ptg) { /* A and B by a graph of their own, a wave before the rest */
        gs_ptg_t g = gs_ptg_of(r);
        rc = gs_wait(tp, gs_ptg_fill(tp, &g), "generating A and B", verbose);
        if (rc < 0) return rc;
    }
    rc = gs_insert_fill(tp, r);
    if (rc >= 0 && r->o->ptg) rc = gs_ptg_tiles(tp, r);
    rc = gs_wait(tp, rc, "generating the operands", verbose);
    if (rc < 0) return rc;

    weft_stats_t before, after;
    rc = weft_stats_get(ctx, &before);
    if (rc < 0) return rc;
    appdev_snap_t devs;
    appdev_snapshot(ctx, &devs);
    double t0 = gs_now();
    r->expected_activations = gs_expected_activations(r);
    rc = r->o->ptg ? gs_ptg_run_chains(tp, r) : gs_insert_chains(tp, r);
    rc = gs_wait(tp, rc, "the GEMM chains", verbose);
    double t = gs_now() - t0;
    if (rc < 0) return rc;
    rc = weft_stats_get(ctx, &after);
    if (rc < 0) return rc;
    double nb = r->nb, flops = 2.0 * nb * nb * nb * (double)r->width * (double)r->depth;
    /* g: the accelerators of this rank that ran tasks of the chains. */
    int g = appdev_used(ctx, &devs);
    char rate[48];
    app_rate_text(ctx, flops, t, rate, sizeof rate);
    if (verbose)
        printf("[****] TIME(s) %.6f : gemm-stress PxQxg= %d %d %d NB= %d depth= %d width= %d "
               ": %s\n",
               t, (int)r->o->p, (int)r->o->q, g, r->nb, r->depth, r->width, rate);
    int64_t activations = after.activations_sent - before.activations_sent;
    printf(GS_NAME ": rank %d: tasks %lld, activations sent %lld (eager %lld, gets %lld), "
                   "net bytes sent %lld received %lld\n",
           r->rank, (long long)(after.tasks_run - before.tasks_run), (long long)activations,
           (long long)(after.eager_sent - before.eager_sent),
           (long long)(after.gets_sent - before.gets_sent),
           (long long)(after.net_bytes_sent - before.net_bytes_sent),
           (long long)(after.net_bytes_received - before.net_bytes_received));
    fflush(stdout);
    if (!r->o->check) return 0;
    return gs_check(tp, r, activations);
}

static int gs_main(weft_context_t *ctx, const gs_opts_t *o)
{
    gs_run_t r = {.ctx = ctx,
                  .o = o,
                  .rank = weft_rank(ctx),
                  .nranks = weft_nranks(ctx),
                  .width = (int)o->width,
                  .depth = (int)o->depth,
                  .nb = (int)o->nb};
    int verbose = r.rank == 0, rc = 1;
    int64_t rows = o->width * o->nb, cols = o->depth * o->nb;
    r.A = weft_matrix_new(ctx, WEFT_DOUBLE, rows, cols, r.nb, r.nb, (int)o->p, (int)o->q);
    r.B = weft_matrix_new(ctx, WEFT_DOUBLE, rows, cols, r.nb, r.nb, (int)o->p, (int)o->q);
    r.c = calloc((size_t)r.width, sizeof *r.c);
    r.y = calloc(2 * (size_t)r.width, sizeof *r.y);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "gemm-stress");
    if (r.A == NULL || r.B == NULL || r.c == NULL || r.y == NULL || tp == NULL) {
        if (verbose)
            fprintf(stderr, GS_NAME ": cannot create the operands (%lld x %lld, tiles %d)\n",
                    (long long)rows, (long long)cols, r.nb);
        goto out;
    }
    rc = gs_run(ctx, tp, &r);
out:
    if (tp != NULL) weft_taskpool_free(tp);
    /* Chains whose C was never made (a failure on the way) have none to
     * give back: weft_data_release takes live handles only. */
    for (int c = 0; r.c != NULL && c < r.width; c++)
        if (r.c[c] != NULL) weft_data_release(r.c[c]);
    for (int k = 0; r.y != NULL && k < 2 * r.width; k++)
        if (r.y[k] != NULL) weft_data_release(r.y[k]);
    free(r.c);
    free(r.y);
    if (r.B != NULL) weft_matrix_free(r.B);
    if (r.A != NULL) weft_matrix_free(r.A);
    return rc == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    app_stderr_by_line();
    appdev_t dev;
    int rc = gs_prescan(argc, argv, &dev);
    if (rc == 2) return appdev_probe(dev.prog, argc, argv);
    if (rc != 0) return rc > 0 ? 0 : 1;
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (ctx == NULL) {
        appdev_init_failed(&dev);
        return 1;
    }
    if (app_same_program(GS_NAME, "", ctx) != 0) {
        (void)weft_fini(ctx);
        return 1;
    }
    /* Then, on every rank alike: -g as the prescan read it. */
    int same_g = app_same_flag(GS_NAME, ctx, "-g", dev.g, 1) == 0;
    gs_opts_t o;
    /* A refused command line is named on every rank (app_driver.h). */
    rc = gs_parse(argc, argv, &o, 1) != 0;
    if (gs_same_flags(ctx, &o, rc == 0) != 0) rc = 1;
    if (rc != 0 || !same_g || app_sim_check(GS_NAME, ctx, o.check) != 0 ||
        gs_validate(ctx, &o, &dev, 1) != 0)
        rc = 1;
    else
        rc = gs_main(ctx, &o);
    int frc = weft_fini(ctx);
    if (frc < 0) {
        fprintf(stderr, GS_NAME ": weft_fini: %s\n", weft_strerror(frc));
        rc = 1;
    }
    return rc;
}
