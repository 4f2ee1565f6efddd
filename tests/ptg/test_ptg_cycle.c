/* Graphs whose tasks wait for each other through other ranks: refused on
 * every rank at weft_ptg_insert (each rank's own walk sees no cycle, and
 * the graph was accepted everywhere and hung with no line). argv[1]:
 *
 *   raw    T(0) and T(1), each writes X[i] and reads X[1-i] as the other
 *          wrote it (T(i) on rank i % nranks);
 *   ring   T(0..3), T(i) writes X[i] and reads X[i-1] as T(i-1) wrote it,
 *          T(0) X[3] as T(3) did;
 *   war    A on X's owner reads X as it was and Y as B wrote it; W there
 *          replaces X in place (so after A); B on Y's owner reads W's X and
 *          writes Y: no task reads its own output, the in-place write
 *          closes the cycle;
 *   chain  ring without T(0)'s read: no cycle, run, values checked.
 *
 * Prints "test_ptg_cycle rank R: <variant> refused" (insertion refused,
 * the taskpool then still waits) or "... ok" (ran, values right). */
#include <stdio.h>
#include <string.h>

#include <weft/ptg.h>
#include <weft/weft.h>
#include <weft/weft_body.h>

#define NT 4

static int nranks, me;
static const char *variant;
static weft_data_t *X[NT], *Y;
static double xv[NT], yv;

static int is(const char *v) { return strcmp(variant, v) == 0; }

/* x = 2 x + (the read tile, when there is one). */
static int body_t(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    const double *y = weft_task_nflows(t) > 1 ? weft_task_ptr(t, 1) : NULL;
    x[0] = 2 * x[0] + (y ? y[0] : 0);
    return 0;
}
static const weft_task_class_t t_class = {.name = "T", .body = {[WEFT_DEV_CPU] = body_t}};

static int ntasks(void) { return is("raw") ? 2 : NT; }
static int src(int i) { return is("raw") ? 1 - i : (i + ntasks() - 1) % ntasks(); }
static int reads(int i) { return !(is("chain") && i == 0); }

static void range_t(const int *idx, int d, int *lo, int *hi, const void *arg)
{
    (void)idx, (void)d, (void)arg;
    *lo = 0;
    *hi = ntasks() - 1;
}
static int rank_t(const int *idx, const void *arg)
{
    (void)arg;
    return idx[0] % nranks;
}
static int args_t(const int *idx, weft_arg_t *a, int max, const void *arg)
{
    (void)max, (void)arg;
    a[0] = weft_arg_data(WEFT_RW | WEFT_AFFINITY, X[idx[0]]);
    if (!reads(idx[0])) return 1;
    a[1] = weft_arg_data(WEFT_R, X[src(idx[0])]);
    return 2;
}
static int producer_t(const int *idx, int flow, weft_ptg_ref_t *p, const void *arg)
{
    (void)arg;
    if (flow == 0) return 0; /* X[i] as it was, on its owner */
    *p = (weft_ptg_ref_t){.cls = 0, .flow = 0, .idx = {src(idx[0])}};
    return 1;
}
static int consumers_t(const int *idx, int flow, weft_ptg_ref_t *to, int max, const void *arg)
{
    (void)arg;
    if (flow != 0) return 0;
    for (int j = 0; j < ntasks(); j++) /* the task that reads X[i] as T(i) wrote it */
        if (reads(j) && src(j) == idx[0]) {
            if (max >= 1) to[0] = (weft_ptg_ref_t){.cls = 0, .flow = 1, .idx = {j}};
            return 1;
        }
    return 0;
}

/* war: classes A, W, B, one task each (index 0). */
static int body_a(weft_task_t *t)
{
    (void)t;
    return 0;
}
static const weft_task_class_t a_class = {.name = "A", .body = {[WEFT_DEV_CPU] = body_a}};
static const weft_task_class_t w_class = {.name = "W", .body = {[WEFT_DEV_CPU] = body_t}};
static const weft_task_class_t b_class = {.name = "B", .body = {[WEFT_DEV_CPU] = body_t}};
enum { CA, CW, CB };

static void range_one(const int *idx, int d, int *lo, int *hi, const void *arg)
{
    (void)idx, (void)d, (void)arg;
    *lo = *hi = 0;
}
static int rank_x(const int *idx, const void *arg) { return (void)idx, (void)arg, 0; }
static int rank_y(const int *idx, const void *arg) { return (void)idx, (void)arg, 1 % nranks; }
static int args_a(const int *idx, weft_arg_t *a, int max, const void *arg)
{
    (void)idx, (void)max, (void)arg;
    a[0] = weft_arg_data(WEFT_R | WEFT_AFFINITY, X[0]);
    a[1] = weft_arg_data(WEFT_R, Y);
    return 2;
}
static int args_w(const int *idx, weft_arg_t *a, int max, const void *arg)
{
    (void)idx, (void)max, (void)arg;
    a[0] = weft_arg_data(WEFT_RW | WEFT_AFFINITY, X[0]);
    return 1;
}
static int args_b(const int *idx, weft_arg_t *a, int max, const void *arg)
{
    (void)idx, (void)max, (void)arg;
    a[0] = weft_arg_data(WEFT_RW | WEFT_AFFINITY, Y);
    a[1] = weft_arg_data(WEFT_R, X[0]);
    return 2;
}
static int producer_a(const int *idx, int flow, weft_ptg_ref_t *p, const void *arg)
{
    (void)idx, (void)arg;
    if (flow == 0) return 0;
    *p = (weft_ptg_ref_t){.cls = CB, .flow = 0};
    return 1;
}
static int producer_w(const int *idx, int flow, weft_ptg_ref_t *p, const void *arg)
{
    (void)idx, (void)flow, (void)p, (void)arg;
    return 0;
}
static int producer_b(const int *idx, int flow, weft_ptg_ref_t *p, const void *arg)
{
    (void)idx, (void)arg;
    if (flow == 0) return 0;
    *p = (weft_ptg_ref_t){.cls = CW, .flow = 0};
    return 1;
}
static int consumers_none(const int *idx, int flow, weft_ptg_ref_t *to, int max, const void *arg)
{
    (void)idx, (void)flow, (void)to, (void)max, (void)arg;
    return 0;
}
static int consumers_w(const int *idx, int flow, weft_ptg_ref_t *to, int max, const void *arg)
{
    (void)idx, (void)flow, (void)arg;
    if (max >= 1) to[0] = (weft_ptg_ref_t){.cls = CB, .flow = 1};
    return 1;
}
static int consumers_b(const int *idx, int flow, weft_ptg_ref_t *to, int max, const void *arg)
{
    (void)idx, (void)arg;
    if (flow != 0) return 0;
    if (max >= 1) to[0] = (weft_ptg_ref_t){.cls = CA, .flow = 1};
    return 1;
}

static int insert(weft_taskpool_t *tp)
{
    if (is("war")) {
        weft_ptg_class_t c[3] = {
            {&a_class, 1, range_one, rank_x, args_a, producer_a, consumers_none, NULL},
            {&w_class, 1, range_one, rank_x, args_w, producer_w, consumers_w, NULL},
            {&b_class, 1, range_one, rank_y, args_b, producer_b, consumers_b, NULL}};
        weft_ptg_t g = {c, 3, NULL};
        return weft_ptg_insert(tp, &g);
    }
    weft_ptg_class_t c = {&t_class, 1, range_t, rank_t, args_t, producer_t, consumers_t, NULL};
    weft_ptg_t g = {&c, 1, NULL};
    return weft_ptg_insert(tp, &g);
}

/* chain: X[0] = 2 x0, X[i] = 2 x_i + X[i-1], on each tile's owner. */
static int check_chain(void)
{
    double prev = 0;
    for (int i = 0; i < NT; i++) {
        double want = 2 * (i + 1) + prev;
        prev = want;
        if (i % nranks == me && xv[i] != want) {
            printf("test_ptg_cycle rank %d: X[%d] = %g, expected %g\n", me, i, xv[i], want);
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    variant = argc > 1 ? argv[1] : "raw";
    me = weft_rank(ctx);
    nranks = weft_nranks(ctx);
    for (int i = 0; i < NT; i++) {
        xv[i] = i + 1;
        X[i] = weft_data_register(ctx, WEFT_DOUBLE, i % nranks == me ? &xv[i] : NULL, 1, 1, 1,
                                  i % nranks);
    }
    yv = 10;
    Y = weft_data_register(ctx, WEFT_DOUBLE, 1 % nranks == me ? &yv : NULL, 1, 1, 1, 1 % nranks);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "cycle");
    int irc = insert(tp), wrc = weft_taskpool_wait(tp);
    int bad = wrc != 0;
    if (irc == WEFT_ERR_INVALID)
        printf("test_ptg_cycle rank %d: %s refused\n", me, variant);
    else if (irc == 0 && !bad && !(is("chain") && check_chain()))
        printf("test_ptg_cycle rank %d: %s ok\n", me, variant);
    else
        printf("test_ptg_cycle rank %d: %s: insert %d wait %d\n", me, variant, irc, wrc);
    fflush(stdout);
    weft_taskpool_free(tp);
    for (int i = 0; i < NT; i++) weft_data_release(X[i]);
    weft_data_release(Y);
    return weft_fini(ctx) != 0;
}
