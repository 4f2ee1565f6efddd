/* Forwarders on one rank that pass the same version to readers on
 * another: S (one double, 3, on rank 0, from before the graph) goes down
 * a chain FWD(k), k = 0 .. K-1, FWD(k) on rank k % nranks, each passing
 * it to FWD(k+1) and to USE(i) for every i = k mod K; USE(i) runs on
 * V(i)'s owner and adds S (i + 1) to V(i). On 2 ranks rank 1 takes S from
 * FWD(0) and again from FWD(2), both on rank 0: each made a SEND and a
 * RECV of the same (data, version, peer), and the run hung without a line
 * (the second rendezvous never matched). Now one transfer carries it to
 * both. argv: N K. Each rank checks its tiles of V: "test_ptg_fwd_twice
 * rank R: ok" or what differs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <weft/ptg.h>
#include <weft/weft.h>
#include <weft/weft_matrix.h>

enum { C_FWD, C_USE };

typedef struct fwd_graph {
    int n, k, nranks;
    weft_data_t *s;
    weft_matrix_t *v;
} fwd_graph_t;

static int fwd_body(weft_task_t *t)
{
    (void)t;
    return 0;
}

static int use_body(weft_task_t *t)
{
    double *v = weft_task_ptr(t, 0);
    const double *s = weft_task_ptr(t, 1);
    int i;
    weft_task_value(t, 0, &i);
    v[0] += s[0] * (i + 1);
    return 0;
}

static const weft_task_class_t fwd_cls = {
    .name = "FWD", .body = {[WEFT_DEV_CPU] = fwd_body, [WEFT_DEV_EMU] = fwd_body}};
static const weft_task_class_t use_cls = {
    .name = "USE", .body = {[WEFT_DEV_CPU] = use_body, [WEFT_DEV_EMU] = use_body}};

static void ref(weft_ptg_ref_t *r, int cls, int i, int flow)
{
    memset(r, 0, sizeof *r);
    r->cls = cls;
    r->idx[0] = i;
    r->flow = flow;
}

static void fwd_range(const int *idx, int d, int *lo, int *hi, const void *arg)
{
    (void)idx, (void)d;
    *lo = 0;
    *hi = ((const fwd_graph_t *)arg)->k - 1;
}

static void use_range(const int *idx, int d, int *lo, int *hi, const void *arg)
{
    (void)idx, (void)d;
    *lo = 0;
    *hi = ((const fwd_graph_t *)arg)->n - 1;
}

static int fwd_rank(const int *idx, const void *arg)
{
    return idx[0] % ((const fwd_graph_t *)arg)->nranks;
}

static int use_rank(const int *idx, const void *arg)
{
    return weft_matrix_tile_rank(((const fwd_graph_t *)arg)->v, idx[0], 0);
}

static int fwd_args(const int *idx, weft_arg_t *a, int max, const void *arg)
{
    (void)max;
    const fwd_graph_t *g = arg;
    a[0] = weft_arg_data(WEFT_R, g->s);
    a[1] = weft_arg_int(WEFT_ON_RANK, idx[0] % g->nranks);
    return 2;
}

static int use_args(const int *idx, weft_arg_t *a, int max, const void *arg)
{
    (void)max;
    const fwd_graph_t *g = arg;
    a[0] = weft_arg_data(WEFT_RW | WEFT_AFFINITY, weft_tile(g->v, idx[0], 0));
    a[1] = weft_arg_data(WEFT_R, g->s);
    a[2] = weft_arg_value(&idx[0], sizeof idx[0]);
    return 3;
}

/* FWD(0) reads S as it was; FWD(k) takes it from FWD(k-1), passed on (2). */
static int fwd_producer(const int *idx, int flow, weft_ptg_ref_t *from, const void *arg)
{
    (void)flow, (void)arg;
    if (idx[0] == 0) return 0;
    ref(from, C_FWD, idx[0] - 1, 0);
    return 2;
}

static int fwd_consumers(const int *idx, int flow, weft_ptg_ref_t *to, int max, const void *arg)
{
    (void)flow;
    const fwd_graph_t *g = arg;
    int n = 0;
    if (idx[0] + 1 < g->k && n++ < max) ref(&to[n - 1], C_FWD, idx[0] + 1, 0);
    for (int u = idx[0]; u < g->n; u += g->k)
        if (n++ < max) ref(&to[n - 1], C_USE, u, 1);
    return n;
}

/* V(i) as it was (0); S from FWD(i mod K), passed on. */
static int use_producer(const int *idx, int flow, weft_ptg_ref_t *from, const void *arg)
{
    if (flow == 0) return 0;
    ref(from, C_FWD, idx[0] % ((const fwd_graph_t *)arg)->k, 0);
    return 2;
}

static int no_consumers(const int *idx, int flow, weft_ptg_ref_t *to, int max, const void *arg)
{
    (void)idx, (void)flow, (void)to, (void)max, (void)arg;
    return 0;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    fwd_graph_t g = {.n = argc > 1 ? atoi(argv[1]) : 6,
                     .k = argc > 2 ? atoi(argv[2]) : 3,
                     .nranks = weft_nranks(ctx)};
    int me = weft_rank(ctx);
    double s0 = 3;
    g.s = weft_data_register(ctx, WEFT_DOUBLE, &s0, 1, 1, 1, 0);
    g.v = weft_vector_new(ctx, WEFT_DOUBLE, g.n, 1);
    weft_ptg_class_t cls[2] = {{.task = &fwd_cls,
                                .ndims = 1,
                                .range = fwd_range,
                                .rank = fwd_rank,
                                .args = fwd_args,
                                .producer = fwd_producer,
                                .consumers = fwd_consumers},
                               {.task = &use_cls,
                                .ndims = 1,
                                .range = use_range,
                                .rank = use_rank,
                                .args = use_args,
                                .producer = use_producer,
                                .consumers = no_consumers}};
    weft_ptg_t graph = {.classes = cls, .nclasses = 2, .arg = &g};
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "fwd_twice");
    int rc = weft_ptg_insert(tp, &graph);
    int w = weft_taskpool_wait(tp);
    int bad = rc != 0 || w != 0;
    for (int k = 0; k < weft_matrix_local_count(g.v) && !bad; k++) {
        int i;
        const double *p = weft_data_host_ptr(weft_matrix_local_tile(g.v, k, &i, NULL), NULL);
        if (!p || p[0] != 3.0 * (i + 1)) {
            printf("test_ptg_fwd_twice rank %d: V(%d) = %g, expected %g\n", me, i, p ? p[0] : -1,
                   3.0 * (i + 1));
            bad = 1;
        }
    }
    if (!bad)
        printf("test_ptg_fwd_twice rank %d: ok\n", me);
    else
        printf("test_ptg_fwd_twice rank %d: insert %d wait %d\n", me, rc, w);
    weft_taskpool_free(tp);
    weft_matrix_free(g.v);
    weft_data_release(g.s);
    return (weft_fini(ctx) != 0) || bad;
}
