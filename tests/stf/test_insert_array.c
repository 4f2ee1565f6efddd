/* The array form of insertion (issue 15 item 2): a 1D stencil over NT
 * tiles of NB doubles, ITERS sweeps between two vectors, whose tasks have
 * 2 or 3 data flows depending on the tile (the boundary cases), a value
 * and a priority, built at run time as one weft_arg_t array. The same
 * sweeps inserted with the variadic form (one call per case) must give the
 * same numbers and the same per-rank task and activation counts, and both
 * match a sequential computation. Bad input: nargs < 0, a NULL array, an
 * unknown tag and too many flows, each refused with its message. */
#include <string.h>

#include "../check.h"
#include "weft/weft.h"

#define NT 6
#define NB 4
#define ITERS 5

/* flow 0: out (W), flow 1: centre (R), flows 2..: neighbours (R); value
 * 0: the sweep. out = centre / 2 + (sum of neighbours) / 4 + sweep. */
static int sweep(weft_task_t *t)
{
    int it = 0;
    if (weft_task_value_get(t, 0, &it, sizeof it) != 0) return -1;
    double *out = weft_task_ptr(t, 0);
    const double *c = weft_task_ptr(t, 1);
    for (int e = 0; e < NB; e++) {
        double s = 0;
        for (int f = 2; f < weft_task_nflows(t); f++) s += ((const double *)weft_task_ptr(t, f))[e];
        out[e] = c[e] / 2 + s / 4 + it;
    }
    return 0;
}

static const weft_task_class_t sweep_class = {.name = "sweep", .body = {[WEFT_DEV_CPU] = sweep}};

static void reference(double u[NT][NB])
{
    double v[NT][NB];
    for (int i = 0; i < NT; i++)
        for (int e = 0; e < NB; e++) u[i][e] = i * NB + e;
    for (int it = 0; it < ITERS; it++) {
        for (int i = 0; i < NT; i++)
            for (int e = 0; e < NB; e++) {
                double s = (i > 0 ? u[i - 1][e] : 0) + (i + 1 < NT ? u[i + 1][e] : 0);
                v[i][e] = u[i][e] / 2 + s / 4 + it;
            }
        memcpy(u, v, sizeof v);
    }
}

/* One sweep task, its arguments built as an array. */
static int insert_array(weft_taskpool_t *tp, weft_matrix_t *out, weft_matrix_t *in, int i, int *it)
{
    weft_arg_t a[6];
    int n = 0;
    a[n++] = weft_arg_data(WEFT_W | WEFT_AFFINITY, weft_tile(out, i, 0));
    a[n++] = weft_arg_data(WEFT_R, weft_tile(in, i, 0));
    if (i > 0) a[n++] = weft_arg_data(WEFT_R, weft_tile(in, i - 1, 0));
    if (i + 1 < NT) a[n++] = weft_arg_data(WEFT_R, weft_tile(in, i + 1, 0));
    a[n++] = weft_arg_value(it, sizeof *it);
    a[n++] = weft_arg_int(WEFT_PRIORITY, *it);
    return weft_insert_task_array(tp, &sweep_class, a, n);
}

/* The same task with the variadic form: one call per boundary case. */
static int insert_variadic(weft_taskpool_t *tp, weft_matrix_t *out, weft_matrix_t *in, int i,
                           int *it)
{
    weft_data_t *o = weft_tile(out, i, 0), *c = weft_tile(in, i, 0);
    if (i > 0 && i + 1 < NT)
        return weft_insert_task(tp, &sweep_class, WEFT_W | WEFT_AFFINITY, o, WEFT_R, c, WEFT_R,
                                weft_tile(in, i - 1, 0), WEFT_R, weft_tile(in, i + 1, 0),
                                WEFT_VALUE, it, sizeof *it, WEFT_PRIORITY, *it, 0);
    weft_data_t *nb = weft_tile(in, i > 0 ? i - 1 : i + 1, 0);
    return weft_insert_task(tp, &sweep_class, WEFT_W | WEFT_AFFINITY, o, WEFT_R, c, WEFT_R, nb,
                            WEFT_VALUE, it, sizeof *it, WEFT_PRIORITY, *it, 0);
}

typedef int (*insert_fn)(weft_taskpool_t *, weft_matrix_t *, weft_matrix_t *, int, int *);

/* ITERS sweeps; the result in *out (U or V); tasks and activations of
 * this rank in counts. */
static void run(weft_context_t *ctx, insert_fn insert, double got[NT][NB], int64_t counts[2])
{
    int R = weft_nranks(ctx), me = weft_rank(ctx);
    weft_matrix_t *m[2];
    for (int k = 0; k < 2; k++) m[k] = weft_matrix_new(ctx, WEFT_DOUBLE, NT * NB, 1, NB, 1, R, 1);
    REQUIRE(m[0] && m[1]);
    for (int i = me; i < NT; i += R) {
        double *p = weft_data_host_ptr(weft_tile(m[0], i, 0), NULL);
        for (int e = 0; e < NB; e++) p[e] = i * NB + e;
    }
    weft_stats_t s0, s1;
    CHECK(weft_stats_get(ctx, &s0) == 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "stencil");
    int its[ITERS];
    for (int it = 0; it < ITERS; it++) {
        its[it] = it;
        for (int i = 0; i < NT; i++)
            CHECK(insert(tp, m[(it + 1) % 2], m[it % 2], i, &its[it]) == 0);
    }
    CHECK(weft_taskpool_wait(tp) == 0);
    weft_taskpool_free(tp);
    CHECK(weft_stats_get(ctx, &s1) == 0);
    counts[0] = s1.tasks_run - s0.tasks_run;
    counts[1] = s1.activations_sent - s0.activations_sent;
    for (int i = me; i < NT; i += R)
        memcpy(got[i], weft_data_host_ptr(weft_tile(m[ITERS % 2], i, 0), NULL), sizeof got[i]);
    for (int k = 0; k < 2; k++) weft_matrix_free(m[k]);
}

static void bad_input(weft_context_t *ctx)
{
    weft_matrix_t *A = weft_matrix_new(ctx, WEFT_DOUBLE, NB, 1, NB, 1, weft_nranks(ctx), 1);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "bad");
    weft_arg_t a[WEFT_MAX_FLOWS + 1];
    for (int k = 0; k <= WEFT_MAX_FLOWS; k++) a[k] = weft_arg_data(WEFT_R, weft_tile(A, 0, 0));
    capture_begin();
    CHECK(weft_insert_task_array(tp, &sweep_class, a, -1) == WEFT_ERR_INVALID);
    CHECK(weft_insert_task_array(tp, &sweep_class, NULL, 1) == WEFT_ERR_INVALID);
    CHECK(weft_insert_task_array(tp, &sweep_class, a, WEFT_MAX_FLOWS + 1) == WEFT_ERR_INVALID);
    a[1] = weft_arg_int(0x4000, 0);
    CHECK(weft_insert_task_array(tp, &sweep_class, a, 2) == WEFT_ERR_INVALID);
    CHECK(weft_insert_task_array(NULL, &sweep_class, a, 1) == WEFT_ERR_INVALID);
    /* Known bits that make no mode are named, not "unknown". */
    a[1] = weft_arg_data(WEFT_W | WEFT_REDUX, weft_tile(A, 0, 0));
    CHECK(weft_insert_task_array(tp, &sweep_class, a, 2) == WEFT_ERR_INVALID);
    a[1] = weft_arg_data(WEFT_AFFINITY, weft_tile(A, 0, 0));
    CHECK(weft_insert_task_array(tp, &sweep_class, a, 2) == WEFT_ERR_INVALID);
    /* An int given to WEFT_VALUE was taken for an empty value, the int lost. */
    a[1] = weft_arg_int(WEFT_VALUE, 3);
    CHECK(weft_insert_task_array(tp, &sweep_class, a, 2) == WEFT_ERR_INVALID);
    capture_end();
    CHECK(captured("insert sweep: -1 arguments at"));
    CHECK(captured("insert sweep: 1 arguments at (nil)"));
    CHECK(captured("insert sweep: argument 17 is its data number 17: a task takes 16 at most"));
    CHECK(captured("insert sweep: argument 2 has unknown tag 0x4000: a data comes after its mode"));
    CHECK(captured("was a data given before its mode, or the closing 0 left out?"));
    CHECK(captured("argument 1 of weft_insert_task_array"));
    CHECK(captured("argument 2 has tag 0x6: WEFT_REDUX is a mode of its own"));
    CHECK(captured("argument 2 has tag 0x10: WEFT_AFFINITY marks a data argument"));
    CHECK(captured("argument 2 is WEFT_VALUE with the int 3 and no bytes: a value is given as "
                   "weft_arg_value(&v, sizeof v)"));
    CHECK(weft_taskpool_wait(tp) == 0);
    CHECK(weft_taskpool_ntasks_run(tp) == 0);
    weft_taskpool_free(tp);
    weft_matrix_free(A);
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 2;
    int R = weft_nranks(ctx), me = weft_rank(ctx);
    double ref[NT][NB], by_array[NT][NB], by_variadic[NT][NB];
    int64_t ca[2], cv[2];
    reference(ref);
    run(ctx, insert_array, by_array, ca);
    run(ctx, insert_variadic, by_variadic, cv);
    for (int i = me; i < NT; i += R)
        for (int e = 0; e < NB; e++) {
            CHECK(by_array[i][e] == ref[i][e]);
            CHECK(by_variadic[i][e] == ref[i][e]);
        }
    /* Tasks run where their output tile lives; the forms move the same tiles. */
    int64_t mine = 0;
    for (int i = me; i < NT; i += R) mine += ITERS;
    CHECK(ca[0] == mine && cv[0] == mine);
    CHECK(ca[1] == cv[1]);
    CHECK(R == 1 ? ca[1] == 0 : ca[1] > 0);
    bad_input(ctx);
    printf("test_insert_array rank %d: tasks %lld, activations %lld (array) %lld (variadic)\n", me,
           (long long)ca[0], (long long)ca[1], (long long)cv[1]);
    CHECK(weft_fini(ctx) == 0);
    return check_report("test_insert_array");
}
