/* Example: a reduction (mode WEFT_REDUX): the sum and the sum of squares
 * of a matrix spread over the ranks, accumulated into one 1 x 2 data.
 *
 * Each task adds one tile's sums into a partial result of its rank, so the
 * tasks of a rank run at once over redux_lanes partials instead of one
 * after the other; weft combines the partials (with combine below) into
 * the data on its owner, rank 0, before the next task that reads it. Here
 * that reader copies the result to every rank; then a second round adds
 * the same sums again, combined at the wait. Checked against a sequential
 * sum, and each rank's task count against the tasks the rewriting adds.
 *
 * mpiexec -n 4 ./example_reduction -N 400 -t 50 [--weft-redux_lanes=4] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <weft/weft.h>

#include "example_args.h"

static int zero(weft_task_t *t) /* init: flow 0 (W) := the identity, 0 */
{
    double *s = weft_task_ptr(t, 0);
    s[0] = s[1] = 0.0;
    return 0;
}

static int combine(weft_task_t *t) /* flow 0 (RW) += flow 1 (R) */
{
    double *dst = weft_task_ptr(t, 0);
    const double *src = weft_task_ptr(t, 1);
    dst[0] += src[0], dst[1] += src[1];
    return 0;
}

static int tile_sums(weft_task_t *t) /* flow 0 a tile (R), flow 1 the partial */
{
    const double *x = weft_task_ptr(t, 0);
    double *s = weft_task_ptr(t, 1);
    /* Read once: each accessor is a call that checks t. */
    int rows = weft_task_rows(t, 0), cols = weft_task_cols(t, 0);
    int64_t ld = weft_task_ld(t, 0);
    for (int j = 0; j < cols; j++)
        for (int i = 0; i < rows; i++) {
            double v = x[i + j * ld];
            s[0] += v, s[1] += v * v;
        }
    return 0;
}

static int copy(weft_task_t *t) /* flow 1 (W) := flow 0 (R) */
{
    memcpy(weft_task_ptr(t, 1), weft_task_ptr(t, 0), 2 * sizeof(double));
    return 0;
}

static const weft_task_class_t zero_class = {.name = "zero", .body = {[WEFT_DEV_CPU] = zero}};
static const weft_task_class_t combine_class = {.name = "combine",
                                                .body = {[WEFT_DEV_CPU] = combine}};
static const weft_task_class_t sums_class = {.name = "sums", .body = {[WEFT_DEV_CPU] = tile_sums}};
static const weft_task_class_t copy_class = {.name = "copy", .body = {[WEFT_DEV_CPU] = copy}};

static int sum_round(weft_taskpool_t *tp, weft_matrix_t *X, weft_data_t *sum)
{
    int rc = 0;
    for (int i = 0; i < weft_matrix_mt(X); i++)
        for (int j = 0; j < weft_matrix_nt(X) && rc == 0; j++)
            rc = weft_insert_task(tp, &sums_class, WEFT_R | WEFT_AFFINITY, weft_tile(X, i, j),
                                  WEFT_REDUX, sum, 0);
    return rc;
}

/* Tasks rank r runs: its tiles' sums and one copy, and per round one init
 * a lane used and one combine a lane but the first; rank 0 also combines
 * each rank's result and first sets the NEW data to 0. */
static long expected_tasks(weft_matrix_t *X, int r, int nranks, int lanes)
{
    long owned[64] = {0}, tasks = 1;
    for (int i = 0; i < weft_matrix_mt(X); i++)
        for (int j = 0; j < weft_matrix_nt(X); j++) owned[weft_matrix_tile_rank(X, i, j)]++;
    long used = owned[r] < lanes ? owned[r] : lanes;
    tasks += 2 * (owned[r] + used + (used > 0 ? used - 1 : 0));
    for (int q = 0; r == 0 && q < nranks; q++) tasks += 2 * (owned[q] > 0);
    return tasks + (r == 0);
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (ctx == NULL) return 1;
    int N = 400, nb = 50, rc = 0, rank = weft_rank(ctx), nranks = weft_nranks(ctx);
    int bad =
        example_args("example_reduction", rank, argc, argv, 2, (const char *const[]){"-N", "-t"},
                     (const char *const[]){"matrix order", "tile size"}, (int *const[]){&N, &nb});
    if (bad == 1) return weft_fini(ctx) != 0;
    if (bad) {
        weft_fini(ctx);
        return 1;
    }
    /* A refusal still ends weft on every rank (weft_fini), as a failure. */
    double *x = N >= 1 && nb >= 1 && nranks <= 64 ? malloc((size_t)N * N * sizeof *x) : NULL;
    double ref[2] = {0, 0};
    if (x == NULL) {
        fprintf(stderr, "example_reduction: -N and -t must be >= 1, 64 ranks at most%s\n",
                N >= 1 && nb >= 1 && nranks <= 64 ? " (out of memory)" : "");
        weft_fini(ctx);
        return 1;
    }
    for (size_t k = 0; k < (size_t)N * N; k++) {
        x[k] = (double)(k * 7 % 13) - 6.0;
        ref[0] += x[k], ref[1] += x[k] * x[k];
    }
    weft_matrix_t *X = weft_matrix_wrap(ctx, WEFT_DOUBLE, x, N, N, N, nb, nb, nranks, 1);
    weft_data_t *sum = weft_data_new(ctx, WEFT_DOUBLE, 1, 2, 0), *mine = NULL, *out[64];
    for (int r = 0; r < nranks; r++) out[r] = weft_data_new(ctx, WEFT_DOUBLE, 1, 2, r);
    if (!X || !sum || weft_data_set_reduction(sum, &zero_class, &combine_class) != 0) {
        if (X) weft_matrix_free(X); /* weft said why */
        if (sum) weft_data_release(sum);
        for (int r = 0; r < nranks; r++)
            if (out[r]) weft_data_release(out[r]);
        weft_fini(ctx);
        return 1;
    }
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "reduction");
    rc = sum_round(tp, X, sum);
    for (int r = 0; r < nranks && rc == 0; r++) /* readers: the partials are combined first */
        rc = weft_insert_task(tp, &copy_class, WEFT_R, sum, WEFT_W | WEFT_AFFINITY, out[r], 0);
    if (rc == 0) rc = sum_round(tp, X, sum); /* adds into the combined value */
    if (rc == 0) rc = weft_taskpool_wait(tp);
    mine = out[rank];
    const double *got = rc == 0 ? weft_data_host_ptr(mine, NULL) : NULL;
    const double *twice = rc == 0 && rank == 0 ? weft_data_host_ptr(sum, NULL) : NULL;
    double err = got ? fmax(fabs(got[0] - ref[0]), fabs(got[1] - ref[1]) / ref[1]) : INFINITY;
    if (twice) err = fmax(err, fmax(fabs(twice[0] - 2 * ref[0]), fabs(twice[1] / ref[1] - 2)));
    int64_t lanes = 0;
    if (weft_param_get_int(ctx, "redux_lanes", &lanes) != 0) return 1;
    long ran = (long)weft_taskpool_ntasks_run(tp), want = expected_tasks(X, rank, nranks, lanes);
    int ok = rc == 0 && err < 1e-12 && ran == want;
    printf("reduction rank %d: %ld tasks (expected %ld), sum %.17g (reference %.17g), error "
           "%.2e: %s\n",
           rank, ran, want, got ? got[0] : NAN, ref[0], err, example_verdict(ctx, rc, &ok));
    weft_taskpool_free(tp);
    weft_matrix_free(X);
    weft_data_release(sum);
    for (int r = 0; r < nranks; r++) weft_data_release(out[r]);
    int fini = weft_fini(ctx);
    free(x);
    return !ok || fini != 0;
}
