/* A version that reaches a rank twice: from two ranks, or back to the rank
 * that made it. W on rank 0 writes X (a b x b tile of rank 0); F on rank 1
 * reads X and passes it on; three readers R(0..2) on rank `at` add up X
 * into their own Z(i).
 *
 *   peers: at = 2. R(0) takes X through F, R(1) and R(2) from W: rank 2
 *          gets X from rank 1 and from rank 0. Its RECV from rank 0 was
 *          never made when the one from rank 1 came first, and rank 0's
 *          send waited for ever (a hang without a line, with rendezvous
 *          tiles; an activation left unmatched with eager ones).
 *   swap:  the same, R(1) through F and R(0) from W (the order that
 *          worked: two RECVs, both landing the tile).
 *   back:  at = 0: X comes back to rank 0, which made it, through F.
 *   late:  back, with the classes listed readers first, so that rank 0
 *          makes the RECV before the task that makes X.
 *
 * Every RECV beyond a version's first only meets its sender: the checks
 * are the values (Z(i) and X on their owners) and the moves, summed over
 * the ranks: bytes sent = bytes received = (moves that carried a tile) x
 * the tile's bytes (eager tiles: the skipped ones too, which came inline),
 * and the skipped receives. argv: case b. Prints
 * "test_ptg_two_peers rank R: ok" or what differs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <weft/ptg.h>
#include <weft/weft.h>

enum { C_W, C_F, C_R, NCLS };
#define NR 3

typedef struct two_graph {
    int at;          /* the readers' rank */
    int via[NR];     /* reader i takes X through F */
    int order[NCLS]; /* where each class sits in the graph's list */
    int b, n;        /* the tile's side and size */
    weft_data_t *x, *z[NR];
} two_graph_t;

static double tile_sum(const double *p, int n)
{
    double s = 0;
    for (int k = 0; k < n; k++) s += p[k];
    return s;
}

static int w_body(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    int n;
    weft_task_value(t, 0, &n);
    for (int k = 0; k < n; k++) x[k] += 1;
    return 0;
}

static int f_body(weft_task_t *t)
{
    (void)t;
    return 0;
}

static int r_body(weft_task_t *t)
{
    double *z = weft_task_ptr(t, 0);
    const double *x = weft_task_ptr(t, 1);
    int n;
    weft_task_value(t, 0, &n);
    z[0] = tile_sum(x, n);
    return 0;
}

static const weft_task_class_t w_cls = {.name = "W",
                                        .body = {[WEFT_DEV_CPU] = w_body, [WEFT_DEV_EMU] = w_body}};
static const weft_task_class_t f_cls = {.name = "F",
                                        .body = {[WEFT_DEV_CPU] = f_body, [WEFT_DEV_EMU] = f_body}};
static const weft_task_class_t r_cls = {.name = "R",
                                        .body = {[WEFT_DEV_CPU] = r_body, [WEFT_DEV_EMU] = r_body}};

static void ref(weft_ptg_ref_t *r, const two_graph_t *g, int cls, int i, int flow)
{
    memset(r, 0, sizeof *r);
    r->cls = g->order[cls];
    r->idx[0] = i;
    r->flow = flow;
}

static void one(const int *idx, int d, int *lo, int *hi, const void *arg)
{
    (void)idx, (void)d, (void)arg;
    *lo = *hi = 0;
}

static void readers(const int *idx, int d, int *lo, int *hi, const void *arg)
{
    (void)idx, (void)d, (void)arg;
    *lo = 0;
    *hi = NR - 1;
}

static int on0(const int *idx, const void *arg) { return (void)idx, (void)arg, 0; }
static int on1(const int *idx, const void *arg) { return (void)idx, (void)arg, 1; }
static int on_at(const int *idx, const void *arg)
{
    (void)idx;
    return ((const two_graph_t *)arg)->at;
}

static int w_args(const int *idx, weft_arg_t *a, int max, const void *arg)
{
    (void)idx, (void)max;
    const two_graph_t *g = arg;
    a[0] = weft_arg_data(WEFT_RW, g->x);
    a[1] = weft_arg_value(&g->n, sizeof g->n);
    a[2] = weft_arg_int(WEFT_ON_RANK, 0);
    return 3;
}

static int f_args(const int *idx, weft_arg_t *a, int max, const void *arg)
{
    (void)idx, (void)max;
    a[0] = weft_arg_data(WEFT_R, ((const two_graph_t *)arg)->x);
    a[1] = weft_arg_int(WEFT_ON_RANK, 1);
    return 2;
}

static int r_args(const int *idx, weft_arg_t *a, int max, const void *arg)
{
    (void)max;
    const two_graph_t *g = arg;
    a[0] = weft_arg_data(WEFT_RW, g->z[idx[0]]);
    a[1] = weft_arg_data(WEFT_R, g->x);
    a[2] = weft_arg_value(&g->n, sizeof g->n);
    a[3] = weft_arg_int(WEFT_ON_RANK, g->at);
    return 4;
}

static int from_none(const int *idx, int flow, weft_ptg_ref_t *from, const void *arg)
{
    (void)idx, (void)flow, (void)from, (void)arg;
    return 0;
}

static int w_consumers(const int *idx, int flow, weft_ptg_ref_t *to, int max, const void *arg)
{
    (void)idx, (void)flow;
    const two_graph_t *g = arg;
    int n = 0;
    if (n++ < max) ref(&to[n - 1], g, C_F, 0, 0);
    for (int i = 0; i < NR; i++)
        if (!g->via[i] && n++ < max) ref(&to[n - 1], g, C_R, i, 1);
    return n;
}

static int f_producer(const int *idx, int flow, weft_ptg_ref_t *from, const void *arg)
{
    (void)idx, (void)flow;
    ref(from, arg, C_W, 0, 0);
    return 1;
}

static int f_consumers(const int *idx, int flow, weft_ptg_ref_t *to, int max, const void *arg)
{
    (void)idx, (void)flow;
    const two_graph_t *g = arg;
    int n = 0;
    for (int i = 0; i < NR; i++)
        if (g->via[i] && n++ < max) ref(&to[n - 1], g, C_R, i, 1);
    return n;
}

static int r_producer(const int *idx, int flow, weft_ptg_ref_t *from, const void *arg)
{
    const two_graph_t *g = arg;
    if (flow == 0) return 0;
    if (g->via[idx[0]]) {
        ref(from, g, C_F, 0, 0);
        return 2;
    }
    ref(from, g, C_W, 0, 0);
    return 1;
}

static int no_consumers(const int *idx, int flow, weft_ptg_ref_t *to, int max, const void *arg)
{
    (void)idx, (void)flow, (void)to, (void)max, (void)arg;
    return 0;
}

/* The moves of X each case makes: tiles carried and receives skipped. */
static void expected(const char *c, long *tiles, long *skipped)
{
    if (!strcmp(c, "back") || !strcmp(c, "late")) {
        *tiles = 1; /* W to F; F's pass back to rank 0 is met without bytes */
        *skipped = 1;
    } else {
        *tiles = 2;   /* W to F, F (or W) to rank 2 */
        *skipped = 1; /* the second arrival at rank 2 */
    }
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    const char *c = argc > 1 ? argv[1] : "peers";
    two_graph_t g = {
        .at = 2, .via = {1, 0, 0}, .order = {0, 1, 2}, .b = argc > 2 ? atoi(argv[2]) : 8};
    if (!strcmp(c, "swap")) g.via[0] = 0, g.via[1] = 1;
    if (!strcmp(c, "back") || !strcmp(c, "late")) g.at = 0;
    if (!strcmp(c, "late")) g.order[C_R] = 0, g.order[C_F] = 1, g.order[C_W] = 2;
    int me = weft_rank(ctx), n = g.b * g.b;
    g.n = n;
    if (weft_nranks(ctx) <= g.at || weft_nranks(ctx) < 2) {
        printf("test_ptg_two_peers: case %s needs %d ranks\n", c, g.at > 1 ? g.at + 1 : 2);
        weft_fini(ctx);
        return 2;
    }
    double *x = malloc(sizeof(double) * (size_t)n), z[NR] = {0};
    for (int k = 0; k < n; k++) x[k] = k;
    g.x = weft_data_register(ctx, WEFT_DOUBLE, x, g.b, g.b, g.b, 0);
    for (int i = 0; i < NR; i++)
        g.z[i] = weft_data_register(ctx, WEFT_DOUBLE, &z[i], 1, 1, 1, g.at);
    weft_ptg_class_t made[NCLS] = {{.task = &w_cls,
                                    .ndims = 1,
                                    .range = one,
                                    .rank = on0,
                                    .args = w_args,
                                    .producer = from_none,
                                    .consumers = w_consumers},
                                   {.task = &f_cls,
                                    .ndims = 1,
                                    .range = one,
                                    .rank = on1,
                                    .args = f_args,
                                    .producer = f_producer,
                                    .consumers = f_consumers},
                                   {.task = &r_cls,
                                    .ndims = 1,
                                    .range = readers,
                                    .rank = on_at,
                                    .args = r_args,
                                    .producer = r_producer,
                                    .consumers = no_consumers}};
    weft_ptg_class_t cls[NCLS];
    for (int k = 0; k < NCLS; k++) cls[g.order[k]] = made[k];
    weft_ptg_t graph = {.classes = cls, .nclasses = NCLS, .arg = &g};
    weft_stats_t s0, s1;
    weft_stats_get(ctx, &s0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "two_peers");
    int rc = weft_ptg_insert(tp, &graph);
    int w = weft_taskpool_wait(tp);
    weft_stats_get(ctx, &s1);
    int bad = rc != 0 || w != 0;
    /* Z(i) = sum(k + 1); X = k + 1. */
    double want = (double)n * (n - 1) / 2 + n;
    for (int i = 0; i < NR && !bad && me == g.at; i++)
        if (z[i] != want) {
            printf("test_ptg_two_peers rank %d: Z(%d) = %g, expected %g\n", me, i, z[i], want);
            bad = 1;
        }
    for (int k = 0; k < n && !bad && me == 0; k++)
        if (x[k] != k + 1) {
            printf("test_ptg_two_peers rank %d: X[%d] = %g, expected %d\n", me, k, x[k], k + 1);
            bad = 1;
        }
    long mine[5] = {(long)(s1.net_bytes_sent - s0.net_bytes_sent),
                    (long)(s1.net_bytes_received - s0.net_bytes_received),
                    (long)(s1.recv_skipped - s0.recv_skipped),
                    (long)(s1.activations_sent - s0.activations_sent),
                    (long)(s1.eager_sent - s0.eager_sent)},
         all[5], tiles, skipped;
    MPI_Allreduce(mine, all, 5, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    expected(c, &tiles, &skipped);
    if (!bad && all[4] != 0 && all[4] != all[3]) {
        printf("test_ptg_two_peers rank %d: %ld of %ld activations eager: all or none expected\n",
               me, all[4], all[3]);
        bad = 1;
    }
    long bytes = (tiles + (all[4] ? skipped : 0)) * (long)sizeof(double) * n;
    if (!bad && (all[0] != bytes || all[1] != bytes || all[2] != skipped)) {
        printf("test_ptg_two_peers rank %d: %ld bytes sent, %ld received, %ld receives skipped; "
               "expected %ld, %ld, %ld\n",
               me, all[0], all[1], all[2], bytes, bytes, skipped);
        bad = 1;
    }
    if (!bad)
        printf("test_ptg_two_peers rank %d: ok\n", me);
    else if (rc || w)
        printf("test_ptg_two_peers rank %d: insert %d wait %d\n", me, rc, w);
    weft_taskpool_free(tp);
    for (int i = 0; i < NR; i++) weft_data_release(g.z[i]);
    weft_data_release(g.x);
    int f = weft_fini(ctx);
    free(x);
    return f != 0 || bad;
}
