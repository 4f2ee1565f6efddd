/* A graph's task is placed as an inserted task with the same arguments
 * is: on the owner of the first data it writes, read from the flows as
 * given (include/weft/weft.h, docs/PTG.md). PLACE has the flows (R X, W Y,
 * W X), X owned by rank 0 and Y by rank 1, no affinity: the first written
 * data is Y, so it runs on rank 1, and its rank function says so. The
 * graph: FWD on rank 0 reads X as it was and passes it on to PLACE, which
 * writes Y := X + 1 and X := 2 X (flows 0 and 2 are one copy of X); BACK
 * on rank 0 then adds 1 to X, so that X's final version is written on its
 * owner (docs/PTG.md's rules for the versions a graph starts and ends
 * with).
 *
 * Before, the graph merged the repeated flows of X first (R X became RW X
 * at flow 0) and then placed PLACE on X's owner: the rank function that
 * follows the rule was refused ("its rank function gives rank 1, but its
 * arguments place it on rank 0"), and one giving rank 0 left Y's final
 * version away from its owner: no graph of such a task was accepted.
 *
 * Each rank prints how many bodies it ran (2 on rank 0, 1 on rank 1); the
 * owners check X = 2 x + 1 and Y = x + 1. Argument "insert" inserts the
 * same three tasks (the control: the rule as insertion applies it). */
#include <stdio.h>
#include <string.h>

#include <weft/ptg.h>
#include <weft/weft.h>

#define LEN 8

enum { FWD, PLACE, BACK };

static int me, nranks, ran;
static weft_data_t *xd, *yd;

static int body_fwd(weft_task_t *t)
{
    (void)t;
    ran++;
    return 0;
}

static int body_place(weft_task_t *t)
{
    const double *x = weft_task_ptr(t, 0);
    double *y = weft_task_ptr(t, 1), *x2 = weft_task_ptr(t, 2);
    for (int k = 0; k < LEN; k++) y[k] = x[k] + 1;
    for (int k = 0; k < LEN; k++) x2[k] = 2 * x2[k];
    ran++;
    return 0;
}

static int body_back(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    for (int k = 0; k < LEN; k++) x[k] += 1;
    ran++;
    return 0;
}

static const weft_task_class_t fwd_cls = {.name = "fwd", .body = {[WEFT_DEV_CPU] = body_fwd}};
static const weft_task_class_t place_cls = {.name = "place", .body = {[WEFT_DEV_CPU] = body_place}};
static const weft_task_class_t back_cls = {.name = "back", .body = {[WEFT_DEV_CPU] = body_back}};

static int y_owner(void) { return 1 % nranks; }

static void range(const int *idx, int dim, int *lo, int *hi, const void *arg)
{
    (void)idx, (void)dim, (void)arg;
    *lo = *hi = 0;
}

static int on_x_owner(const int *idx, const void *arg)
{
    (void)idx, (void)arg;
    return 0;
}

static int on_y_owner(const int *idx, const void *arg)
{
    (void)idx, (void)arg;
    return y_owner();
}

static int args_fwd(const int *idx, weft_arg_t *a, int max, const void *arg)
{
    (void)idx, (void)max, (void)arg;
    a[0] = weft_arg_data(WEFT_R, xd);
    return 1;
}

static int args_place(const int *idx, weft_arg_t *a, int max, const void *arg)
{
    (void)idx, (void)max, (void)arg;
    a[0] = weft_arg_data(WEFT_R, xd);
    a[1] = weft_arg_data(WEFT_W, yd);
    a[2] = weft_arg_data(WEFT_W, xd);
    return 3;
}

static int args_back(const int *idx, weft_arg_t *a, int max, const void *arg)
{
    (void)idx, (void)max, (void)arg;
    a[0] = weft_arg_data(WEFT_RW, xd);
    return 1;
}

static weft_ptg_ref_t ref(int cls, int flow)
{
    weft_ptg_ref_t r = {.cls = cls, .flow = flow};
    return r;
}

/* X: FWD passes it on (2) to PLACE, which writes it (1) for BACK. */
static int producer(int cls, int flow, weft_ptg_ref_t *from)
{
    if (cls == PLACE && flow == 0) return *from = ref(FWD, 0), 2;
    if (cls == BACK) return *from = ref(PLACE, 0), 1;
    return 0;
}

static int consumers(int cls, int flow, weft_ptg_ref_t *to, int max)
{
    weft_ptg_ref_t c;
    if (cls == FWD)
        c = ref(PLACE, 0);
    else if (cls == PLACE && flow == 0)
        c = ref(BACK, 0);
    else
        return 0;
    if (max > 0) to[0] = c;
    return 1;
}

static int producer_fwd(const int *idx, int flow, weft_ptg_ref_t *from, const void *arg)
{
    (void)idx, (void)arg;
    return producer(FWD, flow, from);
}
static int producer_place(const int *idx, int flow, weft_ptg_ref_t *from, const void *arg)
{
    (void)idx, (void)arg;
    return producer(PLACE, flow, from);
}
static int producer_back(const int *idx, int flow, weft_ptg_ref_t *from, const void *arg)
{
    (void)idx, (void)arg;
    return producer(BACK, flow, from);
}
static int consumers_fwd(const int *idx, int flow, weft_ptg_ref_t *to, int max, const void *arg)
{
    (void)idx, (void)arg;
    return consumers(FWD, flow, to, max);
}
static int consumers_place(const int *idx, int flow, weft_ptg_ref_t *to, int max, const void *arg)
{
    (void)idx, (void)arg;
    return consumers(PLACE, flow, to, max);
}
static int consumers_back(const int *idx, int flow, weft_ptg_ref_t *to, int max, const void *arg)
{
    (void)idx, (void)arg;
    return consumers(BACK, flow, to, max);
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    me = weft_rank(ctx);
    nranks = weft_nranks(ctx);
    const char *how = argc > 1 ? argv[1] : "graph";
    double x[LEN], y[LEN];
    for (int k = 0; k < LEN; k++) x[k] = 10 + k, y[k] = -1;
    xd = weft_data_register(ctx, WEFT_DOUBLE, me == 0 ? x : NULL, LEN, 1, LEN, 0);
    yd = weft_data_register(ctx, WEFT_DOUBLE, me == y_owner() ? y : NULL, LEN, 1, LEN, y_owner());
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "place");
    int rc = 0;
    if (!strcmp(how, "insert")) {
        weft_arg_t a[3];
        args_fwd(NULL, a, 3, NULL);
        rc = weft_insert_task_array(tp, &fwd_cls, a, 1);
        args_place(NULL, a, 3, NULL);
        if (rc == 0) rc = weft_insert_task_array(tp, &place_cls, a, 3);
        args_back(NULL, a, 3, NULL);
        if (rc == 0) rc = weft_insert_task_array(tp, &back_cls, a, 1);
    } else {
        weft_ptg_class_t c[3] = {
            {&fwd_cls, 1, range, on_x_owner, args_fwd, producer_fwd, consumers_fwd, NULL},
            {&place_cls, 1, range, on_y_owner, args_place, producer_place, consumers_place, NULL},
            {&back_cls, 1, range, on_x_owner, args_back, producer_back, consumers_back, NULL}};
        weft_ptg_t g = {c, 3, NULL};
        rc = weft_ptg_insert(tp, &g);
    }
    int w = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    weft_data_release(xd);
    weft_data_release(yd);
    int f = weft_fini(ctx);
    int bad = 0;
    for (int k = 0; k < LEN; k++) {
        if (me == 0 && x[k] != 2 * (10 + k) + 1) bad++;
        if (me == y_owner() && y[k] != 10 + k + 1) bad++;
    }
    int want = (me == 0 ? 2 : 0) + (me == y_owner() ? 1 : 0);
    int ok = rc == 0 && w == 0 && f == 0 && bad == 0 && ran == want;
    printf("test_ptg_place rank %d: %s: insert %d wait %d fini %d, %d bodies here, %d wrong: %s\n",
           me, how, rc, w, f, ran, bad, ok ? "PASSED" : "FAILED");
    return !ok;
}
