/* Graphs of a few one-task classes on one number d (owned by rank 0,
 * starting at 1) whose versions go from rank to rank: each rank must put
 * d's versions in the graph's order, whatever versions other ranks made in
 * between, and refuse what it cannot order (argv[1] names the case):
 *
 *   replace  A(0) d+=1 slowly; B(1) d*=10; C(0) d=100 replacing B's version
 *            without reading it: C waits for A's send. Final 100.
 *   skip     A(0) d+=1; R(0) reads it slowly; B(1) d*=10; C(2) d+=5; D(0)
 *            d*=2: D's receive of C's version waits for R. R sees 2, final 50.
 *   dup      P(0) lists its consumer W(1) twice (instead of W and the reader
 *            Q(1)): refused on every rank, no hang.
 *   twowr    W1(1) and W2(2) both replace d's first version; F1(0), F2(0)
 *            read their results: refused (two next writers), no hang.
 *   mixed    a graph, then weft_insert_task before the wait: the insertion
 *            is refused (a graph takes a wave of its own), then a second
 *            graph in the same wave is refused too.
 *   refused  a refused graph, then weft_taskpool_free without a wait:
 *            nothing is left to wait for, weft_fini returns 0.
 * Each rank prints "test_ptg_order rank R: <case> ok" or what went wrong. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <weft/ptg.h>
#include <weft/weft.h>

#define MAX_TASKS 6

enum { ADD, MUL, SET, READ };

typedef struct one {
    const char *name;
    int rank, mode;
    int from, how;      /* producer: task index and 1 (wrote) or 0 (none) */
    int to[4], nto;     /* consumers (task indices, flow 0) */
    int op, ms;         /* what the body does, and how long it sleeps first */
    double k;
} one_t;

static const one_t *T;
static int NT;
static weft_data_t *D;
static double seen = -1;
static weft_task_class_t cls[MAX_TASKS];

static int body(weft_task_t *t)
{
    int i;
    if (weft_task_value_get(t, 0, &i, sizeof i) != WEFT_SUCCESS) return -1;
    if (T[i].ms) nanosleep(&(struct timespec){0, T[i].ms * 1000000L}, NULL);
    double *x = weft_task_ptr(t, 0);
    if (T[i].op == ADD) x[0] += T[i].k;
    if (T[i].op == MUL) x[0] *= T[i].k;
    if (T[i].op == SET) x[0] = T[i].k;
    if (T[i].op == READ) seen = x[0];
    return 0;
}

/* Class i is task T[i]; the graph's argument is unused. */
static void range(const int *idx, int dim, int *lo, int *hi, const void *arg)
{
    (void)idx, (void)dim, (void)arg;
    *lo = *hi = 0;
}

#define CLASS(I)                                                                               \
    static int rank##I(const int *idx, const void *arg)                                        \
    {                                                                                          \
        (void)idx, (void)arg;                                                                  \
        return T[I].rank;                                                                      \
    }                                                                                          \
    static int args##I(const int *idx, weft_arg_t *a, int max, const void *arg)                \
    {                                                                                          \
        static const int me = I;                                                               \
        (void)idx, (void)max, (void)arg;                                                       \
        a[0] = weft_arg_data(T[I].mode, D);                                                    \
        a[1] = weft_arg_value(&me, sizeof me);                                                 \
        a[2] = weft_arg_int(WEFT_ON_RANK, T[I].rank);                                          \
        return 3;                                                                              \
    }                                                                                          \
    static int prod##I(const int *idx, int flow, weft_ptg_ref_t *p, const void *arg)           \
    {                                                                                          \
        (void)idx, (void)flow, (void)arg;                                                      \
        *p = (weft_ptg_ref_t){.cls = T[I].from};                                               \
        return T[I].how;                                                                       \
    }                                                                                          \
    static int cons##I(const int *idx, int flow, weft_ptg_ref_t *to, int max, const void *arg) \
    {                                                                                          \
        (void)idx, (void)flow, (void)arg;                                                      \
        for (int k = 0; k < T[I].nto && k < max; k++)                                         \
            to[k] = (weft_ptg_ref_t){.cls = T[I].to[k]};                                       \
        return T[I].nto;                                                                       \
    }
CLASS(0)
CLASS(1)
CLASS(2)
CLASS(3)
CLASS(4)
CLASS(5)
#define ENTRY(I) {&cls[I], 1, range, rank##I, args##I, prod##I, cons##I, NULL}
static const weft_ptg_class_t classes[MAX_TASKS] = {ENTRY(0), ENTRY(1), ENTRY(2),
                                                    ENTRY(3), ENTRY(4), ENTRY(5)};

static const one_t replace_case[] = {
    {"C", 0, WEFT_W, 2, 1, {0}, 0, SET, 0, 100},
    {"A", 0, WEFT_RW, 0, 0, {2}, 1, ADD, 300, 1},
    {"B", 1, WEFT_RW, 1, 1, {0}, 1, MUL, 0, 10},
};
static const one_t skip_case[] = {
    {"A", 0, WEFT_RW, 0, 0, {1, 2}, 2, ADD, 0, 1},
    {"R", 0, WEFT_R, 0, 1, {0}, 0, READ, 500, 0},
    {"B", 1, WEFT_RW, 0, 1, {3}, 1, MUL, 0, 10},
    {"C", 2, WEFT_RW, 2, 1, {4}, 1, ADD, 0, 5},
    {"D", 0, WEFT_RW, 3, 1, {0}, 0, MUL, 0, 2},
};
static const one_t dup_case[] = {
    {"P", 0, WEFT_RW, 0, 0, {1, 1}, 2, ADD, 0, 1},
    {"W", 1, WEFT_W, 0, 1, {3}, 1, SET, 0, 5},
    {"Q", 1, WEFT_R, 0, 1, {0}, 0, READ, 0, 0},
    {"E", 0, WEFT_RW, 1, 1, {0}, 0, ADD, 0, 1},
};
static const one_t twowr_case[] = {
    {"W1", 1, WEFT_W, 0, 0, {2}, 1, SET, 0, 7},
    {"W2", 2, WEFT_W, 0, 0, {3}, 1, SET, 0, 9},
    {"F1", 0, WEFT_RW, 0, 1, {0}, 0, ADD, 0, 1},
    {"F2", 0, WEFT_RW, 1, 1, {0}, 0, ADD, 0, 1},
};
static const one_t slow_case[] = {{"S", 0, WEFT_RW, 0, 0, {0}, 0, ADD, 200, 1}};

static int run_graph(weft_taskpool_t *tp, const one_t *t, int n)
{
    /* The classes are made once a case: "mixed" inserts its graph again
     * while the first one's task runs, which reads its class. */
    if (T != t || NT != n)
        for (int i = 0; i < n; i++)
            cls[i] = (weft_task_class_t){.name = t[i].name, .body = {[WEFT_DEV_CPU] = body}};
    T = t;
    NT = n;
    weft_ptg_t g = {.classes = classes, .nclasses = n, .arg = NULL};
    return weft_ptg_insert(tp, &g);
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    const char *c = argc > 1 ? argv[1] : "replace";
    int me = weft_rank(ctx), fini_ok = 1;
    double mem = 1;
    D = weft_data_register(ctx, WEFT_DOUBLE, me == 0 ? &mem : NULL, 1, 1, 1, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "order");
    char why[160] = "";
    if (strcmp(c, "replace") == 0 || strcmp(c, "skip") == 0) {
        int sk = strcmp(c, "skip") == 0;
        int rc = sk ? run_graph(tp, skip_case, 5) : run_graph(tp, replace_case, 3);
        int w = weft_taskpool_wait(tp);
        double want = sk ? 50 : 100;
        if (rc || w || (me == 0 && (mem != want || (sk && seen != 2))))
            snprintf(why, sizeof why, "insert %d wait %d final %g (want %g) seen %g", rc, w, mem,
                     want, seen);
    } else if (strcmp(c, "dup") == 0 || strcmp(c, "twowr") == 0) {
        int dup = strcmp(c, "dup") == 0;
        int rc = dup ? run_graph(tp, dup_case, 4) : run_graph(tp, twowr_case, 4);
        int w = weft_taskpool_wait(tp);
        if (rc != WEFT_ERR_INVALID || w || mem != 1 || weft_taskpool_ntasks_run(tp) != 0)
            snprintf(why, sizeof why, "not refused: insert %d wait %d final %g", rc, w, mem);
    } else if (strcmp(c, "mixed") == 0) {
        int rc = run_graph(tp, slow_case, 1), one = 0;
        int rc2 = weft_insert_task(tp, &cls[0], WEFT_R, D, WEFT_VALUE, &one, sizeof one, 0);
        int rc3 = run_graph(tp, slow_case, 1);
        int w = weft_taskpool_wait(tp);
        if (rc || rc2 != WEFT_ERR_INVALID || rc3 != WEFT_ERR_INVALID || w || (me == 0 && mem != 2))
            snprintf(why, sizeof why, "graph %d, insertion %d, second graph %d, wait %d, final %g",
                     rc, rc2, rc3, w, mem);
    } else if (strcmp(c, "refused") == 0) {
        weft_ptg_t g = {.classes = classes, .nclasses = 0};
        if (weft_ptg_insert(tp, &g) != WEFT_ERR_INVALID) snprintf(why, sizeof why, "accepted");
    }
    weft_taskpool_free(tp);
    weft_data_release(D);
    if (weft_fini(ctx) != WEFT_SUCCESS) fini_ok = 0;
    if (!fini_ok && !why[0]) snprintf(why, sizeof why, "weft_fini failed");
    printf("test_ptg_order rank %d: %s %s%s\n", me, c, why[0] ? "FAILED: " : "ok", why);
    return why[0] != 0;
}
