/* All-reduce of a few sums (squared norms of a residual check) with tasks:
 * each rank adds into its own 1 x w tile S[rank] (tile rank of an nranks x
 * w matrix of 1 x w tiles on an nranks x 1 grid), then a chain of tasks adds
 * every S[i] into S[0] and copies S[0] back to each S[i], so that every rank
 * reads the totals from its own tile and nothing is gathered by the host.
 * Two more columns count what went in: the tasks that added into the sums
 * and the ranks' parts; a task at the end fails unless both are whole, so a
 * check task that did not run (fault_inject's task_skip of a norm or of an
 * add) fails the check instead of lowering its residual.
 * Also the loop of the residual checks' norm kernels over a tile
 * (app_sums_resid), whose element each app defines. Header-only; the dense
 * apps include it. Public API only. */
#ifndef WEFT_APPS_APP_SUMS_H
#define WEFT_APPS_APP_SUMS_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include <weft/weft.h>

/* A sums tile's columns: w sums, then the count of the tasks that added
 * into them, then the count of the ranks' parts. */
enum { APP_SUMS_COUNTS = 2 };

/* flow 0: a sums tile W: zeroes its sums and its count of adding tasks,
 * and counts its rank's part in the last column, which the all-reduce's
 * adds carry along: the totals hold every rank's part when that column
 * reads nranks. */
static int app_sums_zero(weft_task_t *t)
{
    double *s = weft_task_ptr(t, 0);
    int64_t ld = weft_task_ld(t, 0);
    int last = weft_task_cols(t, 0) - 1;
    for (int c = 0; c < last; c++) s[c * ld] = 0.0;
    s[last * ld] = 1.0;
    return 0;
}

/* For the body of a task that adds into a sums tile (flow): adds v[0..n-1]
 * to its sums from column col on, and counts the task. */
static inline void app_sums_put(weft_task_t *t, int flow, int col, const double *v, int n)
{
    double *s = weft_task_ptr(t, flow);
    int64_t ld = weft_task_ld(t, flow);
    int adds = weft_task_cols(t, flow) - APP_SUMS_COUNTS;
    for (int c = 0; c < n; c++) s[(col + c) * ld] += v[c];
    s[adds * ld] += 1.0;
}

/* flow 0: a sums tile R, flow 1: another RW: adds the first to it. */
static int app_sums_add(weft_task_t *t)
{
    const double *x = weft_task_ptr(t, 0);
    double *y = weft_task_ptr(t, 1);
    int64_t ldx = weft_task_ld(t, 0), ldy = weft_task_ld(t, 1);
    for (int c = 0; c < weft_task_cols(t, 1); c++) y[c * ldy] += x[c * ldx];
    return 0;
}

/* flow 0: a sums tile R, flow 1: another W: copies the first. */
static int app_sums_copy(weft_task_t *t)
{
    const double *x = weft_task_ptr(t, 0);
    double *y = weft_task_ptr(t, 1);
    int64_t ldx = weft_task_ld(t, 0), ldy = weft_task_ld(t, 1);
    for (int c = 0; c < weft_task_cols(t, 1); c++) y[c * ldy] = x[c * ldx];
    return 0;
}

/* flow 0: a rank's sums tile R; value 0: where its totals go (this rank's
 * memory), value 1: the number of ranks, value 2: the number of adding
 * tasks inserted (int64_t). Fails when a rank's part or a task's is
 * missing: the check's wait then fails on every rank, where a total read
 * after the wait could fail on one rank only (its copy not brought home)
 * while rank 0 printed PASSED. */
static int app_sums_out(weft_task_t *t)
{
    const double *s = weft_task_ptr(t, 0);
    int64_t ld = weft_task_ld(t, 0), adds;
    int w = weft_task_cols(t, 0) - APP_SUMS_COUNTS, nranks;
    double *out;
    if (weft_task_value_get(t, 0, &out, sizeof out) != 0 ||
        weft_task_value_get(t, 1, &nranks, sizeof nranks) != 0 ||
        weft_task_value_get(t, 2, &adds, sizeof adds) != 0)
        return -1;
    double parts = s[(w + 1) * ld];
    if (parts != (double)nranks) {
        /* Not a count at all: the zero of a rank's sums did not run. */
        char held[64];
        if (parts < 0 || parts > nranks || parts != floor(parts))
            snprintf(held, sizeof held, "no count of the %d ranks' parts (%g)", nranks, parts);
        else
            snprintf(held, sizeof held, "%g of the %d ranks' parts", parts, nranks);
        weft_task_error(t, "the check's totals hold %s: a task of the check did not run", held);
        return -2;
    }
    if (s[w * ld] != (double)adds) {
        weft_task_error(t,
                        "the check's totals hold %g of the %lld tiles' norms: a task of the "
                        "check did not run",
                        s[w * ld], (long long)adds);
        return -2;
    }
    for (int c = 0; c < w; c++) out[c] = s[c * ld];
    return 0;
}

static const weft_task_class_t app_class_sums_zero = {
    .name = "sums_zero", .body = {[WEFT_DEV_CPU] = app_sums_zero}, .flops = NULL};
static const weft_task_class_t app_class_sums_add = {
    .name = "sums_add", .body = {[WEFT_DEV_CPU] = app_sums_add}, .flops = NULL};
static const weft_task_class_t app_class_sums_copy = {
    .name = "sums_copy", .body = {[WEFT_DEV_CPU] = app_sums_copy}, .flops = NULL};
static const weft_task_class_t app_class_sums_out = {
    .name = "sums_out", .body = {[WEFT_DEV_CPU] = app_sums_out}, .flops = NULL};

/* One element of a tile of a check: x its value in the tile, z the same
 * element of a second tile (0 without one), (gi, gj) its place in the
 * matrix. Sets *d, the residual's element, and *y, the reference's; returns
 * the weight of both in the squared norms (0: left out, d and y 0). */
typedef double (*app_resid_elem_fn)(const void *arg, double x, double z, int64_t gi, int64_t gj,
                                    double *d, double *y);

typedef struct app_resid {
    app_resid_elem_fn elem;
    const void *arg;    /* the app's tile argument, for elem */
    int64_t row0, col0; /* the tile's first element in the matrix */
    int x, z;           /* flows of the tile and of the second one (-1: none) */
    int sums, col;      /* flow of the sums tile; ||d||^2 into column col, ||y||^2 col + 1 */
} app_resid_t;

/* The body of a norm task: adds the weighted squared norms of the
 * residual and of the reference over the tile of flow r->x to the sums. */
static inline int app_sums_resid(weft_task_t *t, const app_resid_t *r)
{
    const double *x = weft_task_ptr(t, r->x), *z = r->z >= 0 ? weft_task_ptr(t, r->z) : NULL;
    int64_t ldx = weft_task_ld(t, r->x), ldz = r->z >= 0 ? weft_task_ld(t, r->z) : 0;
    int rows = weft_task_rows(t, r->x), cols = weft_task_cols(t, r->x);
    double d2 = 0.0, y2 = 0.0;
    for (int j = 0; j < cols; j++) {
        for (int i = 0; i < rows; i++) {
            double d, y, zij = z != NULL ? z[i + j * ldz] : 0.0;
            double w = r->elem(r->arg, x[i + j * ldx], zij, r->row0 + i, r->col0 + j, &d, &y);
            d2 += w * d * d;
            y2 += w * y * y;
        }
    }
    double v[2] = {d2, y2};
    app_sums_put(t, r->sums, r->col, v, 2);
    return 0;
}

/* The sums of a check: a matrix of one 1 x (w + 2) tile a rank (w sums and
 * the two counts), and the number of adding tasks inserted so far, which
 * every rank counts alike (every rank inserts every task). */
typedef struct app_sums {
    weft_matrix_t *m; /* NULL: could not be created */
    int64_t adds;
    int w; /* the sums */
} app_sums_t;

static app_sums_t app_sums_new(weft_context_t *ctx, int w)
{
    int nranks = weft_nranks(ctx), cols = w + APP_SUMS_COUNTS;
    app_sums_t S = {weft_matrix_new(ctx, WEFT_DOUBLE, nranks, cols, 1, cols, nranks, 1), 0, w};
    return S;
}

static void app_sums_free(app_sums_t *S)
{
    if (S->m != NULL) weft_matrix_free(S->m);
    S->m = NULL;
}

/* The tile of S that a task on the rank holding tile (i, j) of A adds into
 * (its body calls app_sums_put); counts that task: call it once for each
 * adding task inserted. */
static weft_data_t *app_sums_of(app_sums_t *S, weft_matrix_t *A, int i, int j)
{
    S->adds++;
    return weft_tile(S->m, weft_matrix_tile_rank(A, i, j), 0);
}

static int app_sums_insert_zero(weft_taskpool_t *tp, const app_sums_t *S)
{
    int rc = 0;
    for (int i = 0; i < weft_matrix_mt(S->m) && rc >= 0; i++)
        rc = weft_insert_task(tp, &app_class_sums_zero, WEFT_W | WEFT_AFFINITY,
                              weft_tile(S->m, i, 0), 0);
    return rc < 0 ? rc : 0;
}

static int app_sums_insert_allreduce(weft_taskpool_t *tp, const app_sums_t *S)
{
    int nranks = weft_matrix_mt(S->m), rc = 0;
    for (int i = 1; i < nranks && rc >= 0; i++)
        rc = weft_insert_task(tp, &app_class_sums_add, WEFT_R, weft_tile(S->m, i, 0),
                              WEFT_RW | WEFT_AFFINITY, weft_tile(S->m, 0, 0), 0);
    for (int i = 1; i < nranks && rc >= 0; i++)
        rc = weft_insert_task(tp, &app_class_sums_copy, WEFT_R, weft_tile(S->m, 0, 0),
                              WEFT_W | WEFT_AFFINITY, weft_tile(S->m, i, 0), 0);
    return rc < 0 ? rc : 0;
}

/* Each rank's totals into out (w of them, its own memory) by a task on
 * that rank, which fails when a rank's part or an adding task's is
 * missing. */
static int app_sums_insert_out(weft_taskpool_t *tp, const app_sums_t *S, double *out)
{
    int nranks = weft_matrix_mt(S->m), rc = 0;
    int64_t adds = S->adds;
    /* Totals no task wrote (its out task did not run) read as NaN: no
     * residual passes with them. */
    for (int c = 0; c < S->w; c++) out[c] = NAN;
    for (int i = 0; i < nranks && rc >= 0; i++)
        rc = weft_insert_task(tp, &app_class_sums_out, WEFT_R | WEFT_AFFINITY,
                              weft_tile(S->m, i, 0), WEFT_VALUE, &out, sizeof out, WEFT_VALUE,
                              &nranks, sizeof nranks, WEFT_VALUE, &adds, sizeof adds, 0);
    return rc < 0 ? rc : 0;
}

#endif
