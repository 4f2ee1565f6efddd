/* Example: a 2D heat stencil over iterations (Jacobi, 5 points, zero
 * boundary), tiled over a P x Q grid of ranks.
 *
 * Two wrapped copies of the grid, U[0] and U[1], alternate: at step s the
 * task of tile (i,j) writes U[(s+1)%2](i,j) from U[s%2](i,j) and its
 * neighbour tiles. weft infers that a tile's next step waits for its
 * neighbours' current one, and sends the neighbours' tiles between ranks.
 * Checked against the same iterations run sequentially.
 *
 * mpiexec -n 4 ./example_stencil -N 200 -t 50 -P 2 -s 20 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <weft/weft.h>

#include "example_args.h"

enum { NORTH = 1, SOUTH = 2, WEST = 4, EAST = 8 };

/* Point (r, c) of the tile around the task's output: from the centre flow,
 * or from the neighbour flow that holds it, or 0 beyond the grid's edge.
 * Each flow's memory and shape are read from the task once (the accessors
 * are calls that check it), indexed by side (0: the centre). */
typedef struct view {
    int have, rows[16], cols[16];
    int64_t ld[16];
    const double *x[16];
} view_t;

static double at(const view_t *v, int r, int c)
{
    int side = r < 0 ? NORTH : r >= v->rows[0] ? SOUTH : c < 0 ? WEST : c >= v->cols[0] ? EAST : 0;
    if (side && !(v->have & side)) return 0.0;
    int rr = r < 0 ? v->rows[side] - 1 : r >= v->rows[0] ? 0 : r;
    int cc = c < 0 ? v->cols[side] - 1 : c >= v->cols[0] ? 0 : c;
    return v->x[side][rr + cc * v->ld[side]];
}

/* Side's flow f of t into v. */
static void view_flow(view_t *v, weft_task_t *t, int side, int f)
{
    v->x[side] = weft_task_ptr(t, f);
    v->ld[side] = weft_task_ld(t, f);
    v->rows[side] = weft_task_rows(t, f);
    v->cols[side] = weft_task_cols(t, f);
}

/* flows: 0 next(i,j) W, 1 cur(i,j) R, then the neighbours present, in the
 * order NORTH, SOUTH, WEST, EAST; value 0: the mask of those present. */
static int step(weft_task_t *t)
{
    view_t v = {0};
    if (weft_task_value_get(t, 0, &v.have, sizeof v.have) != 0) return -1;
    view_flow(&v, t, 0, 1);
    for (int side = 1, f = 2; side <= EAST; side <<= 1)
        if (v.have & side) view_flow(&v, t, side, f++);
    double *out = weft_task_ptr(t, 0);
    int64_t ld = weft_task_ld(t, 0);
    for (int c = 0; c < v.cols[0]; c++)
        for (int r = 0; r < v.rows[0]; r++)
            out[r + c * ld] = 0.5 * at(&v, r, c) + 0.125 * (at(&v, r - 1, c) + at(&v, r + 1, c) +
                                                            at(&v, r, c - 1) + at(&v, r, c + 1));
    return 0;
}

static const weft_task_class_t step_class = {.name = "step", .body = {[WEFT_DEV_CPU] = step}};

/* The neighbours of (i,j) present are packed first; the list of
 * weft_insert_task ends at the first 0 mode, so absent ones are not read. */
static int insert_step(weft_taskpool_t *tp, weft_matrix_t *cur, weft_matrix_t *next, int i, int j)
{
    int mt = weft_matrix_mt(cur), nt = weft_matrix_nt(cur), have = 0, n = 0;
    weft_data_t *nb[4] = {NULL, NULL, NULL, NULL};
    int di[4] = {-1, 1, 0, 0}, dj[4] = {0, 0, -1, 1};
    for (int s = 0; s < 4; s++) {
        int ii = i + di[s], jj = j + dj[s];
        if (ii < 0 || ii >= mt || jj < 0 || jj >= nt) continue;
        have |= 1 << s;
        nb[n++] = weft_tile(cur, ii, jj);
    }
    return weft_insert_task(tp, &step_class, WEFT_W | WEFT_AFFINITY, weft_tile(next, i, j), WEFT_R,
                            weft_tile(cur, i, j), WEFT_VALUE, &have, sizeof have,
                            nb[0] ? WEFT_R : 0, nb[0], nb[1] ? WEFT_R : 0, nb[1],
                            nb[2] ? WEFT_R : 0, nb[2], nb[3] ? WEFT_R : 0, nb[3], 0);
}

/* The same iterations on the whole grid, one point at a time. */
static double pt(const double *u, int N, int r, int c)
{
    return r < 0 || r >= N || c < 0 || c >= N ? 0.0 : u[r + (size_t)c * N];
}

static void sequential(double *u, double *v, int N, int steps)
{
    for (int s = 0; s < steps; s++, memcpy(u, v, (size_t)N * N * sizeof *u))
        for (int c = 0; c < N; c++)
            for (int r = 0; r < N; r++)
                v[r + (size_t)c * N] =
                    0.5 * pt(u, N, r, c) + 0.125 * (pt(u, N, r - 1, c) + pt(u, N, r + 1, c) +
                                                    pt(u, N, r, c - 1) + pt(u, N, r, c + 1));
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (ctx == NULL) return 1;
    int N = 200, nb = 50, P = 1, steps = 20, rc = 0;
    int bad =
        example_args("example_stencil", weft_rank(ctx), argc, argv, 4,
                     (const char *const[]){"-N", "-t", "-P", "-s"},
                     (const char *const[]){"grid order", "tile size", "grid rows", "iterations"},
                     (int *const[]){&N, &nb, &P, &steps});
    if (bad == 1) return weft_fini(ctx) != 0;
    /* A refusal still ends weft on every rank (weft_fini), as a failure. */
    if (bad) {
        weft_fini(ctx);
        return 1;
    }
    if (N < 1 || nb < 1 || P < 1 || steps < 0 || weft_nranks(ctx) % P != 0) {
        fprintf(stderr,
                "example_stencil: -N and -t must be >= 1, -s >= 0, -P must divide the %d ranks\n",
                weft_nranks(ctx));
        weft_fini(ctx);
        return 1;
    }
    int rank = weft_rank(ctx), Q = weft_nranks(ctx) / P, mine = 0;
    size_t n2 = (size_t)N * N;
    double *u[2] = {calloc(n2, sizeof(double)), calloc(n2, sizeof(double))};
    double *ref = calloc(n2, sizeof(double)), *tmp = calloc(n2, sizeof(double));
    if (!u[0] || !u[1] || !ref || !tmp) {
        fprintf(stderr, "example_stencil: out of memory\n");
        weft_fini(ctx);
        return 1;
    }
    for (size_t k = 0; k < n2; k++) u[0][k] = ref[k] = (k * 37 % 101) / 101.0; /* hot and cold */
    weft_matrix_t *U[2];
    for (int b = 0; b < 2; b++)
        U[b] = weft_matrix_wrap(ctx, WEFT_DOUBLE, u[b], N, N, N, nb, nb, P, Q);
    if (!U[0] || !U[1]) { /* weft said why */
        for (int b = 0; b < 2; b++)
            if (U[b]) weft_matrix_free(U[b]);
        weft_fini(ctx);
        return 1;
    }
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "stencil");
    for (int s = 0; s < steps; s++)
        for (int i = 0; i < weft_matrix_mt(U[0]); i++)
            for (int j = 0; j < weft_matrix_nt(U[0]) && rc == 0; j++) {
                rc = insert_step(tp, U[s % 2], U[(s + 1) % 2], i, j);
                mine += weft_matrix_tile_rank(U[0], i, j) == rank;
            }
    if (rc == 0) rc = weft_taskpool_wait(tp);
    sequential(ref, tmp, N, steps);
    double err = 0, *res = u[steps % 2];
    for (int c = 0; c < N; c++)
        for (int r = 0; r < N; r++)
            if (weft_matrix_tile_rank(U[0], r / nb, c / nb) == rank)
                err = fmax(err, fabs(res[r + (size_t)c * N] - ref[r + (size_t)c * N]));
    long long ran = (long long)weft_taskpool_ntasks_run(tp);
    int ok = rc == 0 && err < 1e-12 && ran == mine;
    printf("stencil rank %d: %lld tasks (expected %d), max error %.2e: %s\n", rank, ran, mine, err,
           example_verdict(ctx, rc, &ok));
    weft_taskpool_free(tp);
    weft_matrix_free(U[0]), weft_matrix_free(U[1]);
    int fini = weft_fini(ctx);
    free(u[0]), free(u[1]), free(ref), free(tmp);
    return !ok || fini != 0;
}
