/* A graph's task that names one tile in two flows (include/weft/ptg.h,
 * docs/PTG.md): the flows are one copy of the tile, the task reads it when
 * any of them reads and writes it when any writes, as an inserted task
 * does (tests/stf/test_repeated_flows.c).
 *
 * n tiles X[i] of B doubles, owned round-robin, start at 100 i + k. NEXT(s,
 * i) for s < S does flow 0 := flow 1 + 1 on X[i], its flows (W X[i], R
 * X[i]) when s + i is even, (R X[i], W X[i]) when odd, so each chain
 * alternates both orders; it runs on X[i]'s owner for the first and last
 * step and on the next ranks in between (its version goes to another rank
 * and back). Its producer and consumers name flow 0, the first flow of the
 * tile. Each owner checks X[i] = 100 i + k + S and prints "test_ptg_repeated
 * rank R: <variant> ok". Variants "wr" and "rw" give every task the one
 * order.
 *
 * Before: a task with R first was refused (its producer flow "does not
 * write"), and on a device a W flow first skipped the stage-in (the task
 * read an uninitialised device copy; "wr" gave wrong values with success).
 *
 * Variant "second": NEXT(2, 1)'s producer names flow 1 of NEXT(1, 1), the
 * second flow of the tile; "consumer": NEXT(1, 1)'s consumers list flow 1
 * of NEXT(2, 1). Each refused on every rank, naming the flow ("<variant>
 * refused"), nothing run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <weft/ptg.h>
#include <weft/weft.h>

#define B 16
#define S 5

typedef struct graph {
    int n, nranks;
    int second; /* "second": a producer names the tile's flow 1; "consumer": a consumer */
    int order;  /* 0: both orders alternate ("chain", "second"); 1: "wr"; 2: "rw" */
    weft_data_t **x;
} graph_t;

static int owner(const graph_t *g, int i) { return i % g->nranks; }

static int body_next(weft_task_t *t)
{
    double *d = weft_task_ptr(t, 0);
    const double *s = weft_task_ptr(t, 1);
    for (int k = 0; k < B; k++) d[k] = s[k] + 1;
    return 0;
}

static const weft_task_class_t next_class = {
    .name = "next", .body = {[WEFT_DEV_CPU] = body_next, [WEFT_DEV_EMU] = body_next}};

static void range_next(const int *idx, int dim, int *lo, int *hi, const void *arg)
{
    (void)idx;
    const graph_t *g = arg;
    *lo = 0;
    *hi = dim == 0 ? S - 1 : g->n - 1;
}

static int rank_next(const int *idx, const void *arg)
{
    const graph_t *g = arg;
    int s = idx[0], o = owner(g, idx[1]);
    return s == 0 || s == S - 1 ? o : (o + s) % g->nranks;
}

static int args_next(const int *idx, weft_arg_t *a, int max, const void *arg)
{
    const graph_t *g = arg;
    if (max < 3) return -1;
    weft_data_t *x = g->x[idx[1]];
    int wr = g->order ? g->order == 1 : (idx[0] + idx[1]) % 2 == 0;
    a[0] = weft_arg_data(wr ? WEFT_W : WEFT_R, x);
    a[1] = weft_arg_data(wr ? WEFT_R : WEFT_W, x);
    a[2] = weft_arg_int(WEFT_ON_RANK, rank_next(idx, arg));
    return 3;
}

static weft_ptg_ref_t ref(int flow, int s, int i)
{
    weft_ptg_ref_t r = {.cls = 0, .flow = flow, .idx = {s, i, 0, 0}};
    return r;
}

static int producer_next(const int *idx, int flow, weft_ptg_ref_t *from, const void *arg)
{
    const graph_t *g = arg;
    (void)flow;
    if (idx[0] == 0) return 0;
    *from = ref(g->second == 1 && idx[0] == 2 && idx[1] == 1 ? 1 : 0, idx[0] - 1, idx[1]);
    return 1;
}

static int consumers_next(const int *idx, int flow, weft_ptg_ref_t *to, int max, const void *arg)
{
    const graph_t *g = arg;
    if (flow != 0 || idx[0] == S - 1) return 0;
    int f = g->second == 2 && idx[0] == 1 && idx[1] == 1 ? 1 : 0;
    if (max >= 1) to[0] = ref(f, idx[0] + 1, idx[1]);
    return 1;
}

static const weft_ptg_class_t classes[1] = {{.task = &next_class,
                                             .ndims = 2,
                                             .range = range_next,
                                             .rank = rank_next,
                                             .args = args_next,
                                             .producer = producer_next,
                                             .consumers = consumers_next}};

/* Wrong values among the tiles this rank owns. */
static int check(const graph_t *g, double **mem, int me)
{
    int bad = 0;
    for (int i = 0; i < g->n; i++) {
        if (owner(g, i) != me) continue;
        void *p;
        int64_t ld;
        if (weft_data_host_acquire(g->x[i], WEFT_R, &p, &ld) != WEFT_SUCCESS) return -1;
        for (int k = 0; k < B; k++) {
            double want = i * 100 + k + S;
            if (mem[i][k] == want) continue;
            if (!bad++)
                printf("test_ptg_repeated rank %d: X[%d][%d] = %g, want %g\n", me, i, k, mem[i][k],
                       want);
        }
        if (weft_data_host_release(g->x[i]) != WEFT_SUCCESS) return -1;
    }
    return bad;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    int me = weft_rank(ctx);
    graph_t g = {.nranks = weft_nranks(ctx)};
    const char *variant = argc > 1 ? argv[1] : "chain";
    g.second = strcmp(variant, "second") == 0 ? 1 : strcmp(variant, "consumer") == 0 ? 2 : 0;
    g.order = strcmp(variant, "wr") == 0 ? 1 : strcmp(variant, "rw") == 0 ? 2 : 0;
    g.n = 2 * g.nranks + 1;
    g.x = calloc((size_t)g.n, sizeof *g.x);
    double **mem = calloc((size_t)g.n, sizeof *mem);
    for (int i = 0; i < g.n; i++) {
        mem[i] = owner(&g, i) == me ? calloc(B, sizeof(double)) : NULL;
        for (int k = 0; mem[i] && k < B; k++) mem[i][k] = i * 100 + k;
        g.x[i] = weft_data_register(ctx, WEFT_DOUBLE, mem[i], B, 1, B, owner(&g, i));
    }
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "repeated");
    weft_ptg_t graph = {.classes = classes, .nclasses = 1, .arg = &g};
    int rc = weft_ptg_insert(tp, &graph);
    int wrc = weft_taskpool_wait(tp);
    int64_t ran = weft_taskpool_ntasks_run(tp);
    int status = 1;
    if (g.second) {
        if (rc == WEFT_ERR_INVALID && wrc == WEFT_SUCCESS && ran == 0) status = 0;
        printf("test_ptg_repeated rank %d: %s %s: insert %d, wait %d, %lld tasks run\n", me,
               variant, status ? "NOT refused" : "refused", rc, wrc, (long long)ran);
    } else {
        int bad = rc == WEFT_SUCCESS && wrc == WEFT_SUCCESS ? check(&g, mem, me) : 0;
        if (rc == WEFT_SUCCESS && wrc == WEFT_SUCCESS && bad == 0) status = 0;
        printf("test_ptg_repeated rank %d: %s %s: insert %d, wait %d, %d wrong values, "
               "%lld tasks run\n",
               me, variant, status ? "FAILED" : "ok", rc, wrc, bad, (long long)ran);
    }
    fflush(stdout);
    weft_taskpool_free(tp);
    for (int i = 0; i < g.n; i++) weft_data_release(g.x[i]);
    if (weft_fini(ctx) != WEFT_SUCCESS) status = 1;
    for (int i = 0; i < g.n; i++) free(mem[i]);
    free(mem);
    free(g.x);
    return status;
}
