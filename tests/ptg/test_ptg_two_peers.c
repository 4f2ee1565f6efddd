/* A version that reaches a rank twice: from two ranks, or back to the rank
 * that made it (or that owns it from before the graph), through forwarders.
 * Each case is a small graph given as a table: task i runs on rank[i];
 * its flow 0 is its own scalar S(i) (on its rank), its flows 1.. the data
 * it reads (R) or replaces in place (RW), each naming its producer (a task
 * and flow, -1: the data as it was), or only replaces it (W). A RW
 * writer adds i + 1 to every element of a tile, a W writer sets element k
 * to k + 1000 (i + 1); data d as it was holds k + 100 (d + 1) (NEW data:
 * from its initialiser). Every task stores in S(i) the sum of the tiles
 * it reads. The
 * single class enumerates the tasks in table order, which is the order a
 * rank builds them in: the cases put readers first where that made a rank
 * pick the wrong RECV.
 *
 *   peers  rank 2 gets X from rank 0 (its writer) and rank 1 (a forwarder):
 *          its RECV from rank 0 was never made when the one from rank 1
 *          came first, and rank 0's send waited for ever (a hang without a
 *          line with rendezvous tiles; an activation left over with eager).
 *   swap   the same, built in the other order.
 *   back   X comes back to rank 0, which wrote it, through a forwarder.
 *   late   back, built readers first: the RECV before the task writing X.
 *   loop   W (rank 2) -> F0 (rank 0) -> F1 (rank 1) -> R (rank 0), R
 *          built first: when R's RECV was the one readers waited for, F0
 *          waited for F1 that waited for F0 (a hang across ranks).
 *   cross  R (rank 2) takes X through F1 (rank 1), T (rank 2) from its
 *          writer and writes Y, which F1 reads too: T must not wait for
 *          R's path (F1 waits for T).
 *   chain  W (0) -> G (3) -> F0 (0) -> F1 (1) -> R (0), R built first.
 *   home   the data as it was, passed on by its owner and back.
 *   fwds   rank 1 passes X (as it was) to rank 0 through two forwarders,
 *          the first built also reading Y v1, which rank 0 writes after
 *          its reader of X through the other: the one SEND of X waited
 *          for the first forwarder, a hang (stranger's report).
 *   fwdnext  a version written away from its owner, replaced later by a
 *          task that takes it through a forwarder: refused as a final
 *          version left away from its owner.
 *   newinit  a NEW data with initial contents, replaced (W) by a task
 *          built before the task that reads its initial contents: the
 *          reader failed, "no contents" (the initialiser never ran).
 *   bounce X written on rank 1 goes to a reader on rank 0, which passes it
 *          back to a forwarder on rank 1, which passes it to rank 0 again
 *          (one SEND there for both), built forwarder first: the SEND
 *          waited for the forwarder's RECV, which met its sender only
 *          after rank 0 had X from that very SEND (stranger's report).
 *
 * Checks: S(i) on every task's rank and each data on its owner against a
 * serial evaluation of the table, and the moves summed over the ranks:
 * bytes sent = bytes received = tiles carried x the tile's bytes (eager:
 * the skipped ones too, which came inline), and the receives skipped.
 * argv: case b. Prints "test_ptg_two_peers rank R: ok" or what differs;
 * after a failure (fault_inject) the statuses and the tasks (transfers
 * included) cancelled on the rank. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <weft/ptg.h>
#include <weft/weft.h>

#define MAXT 8
#define MAXF 3
#define MAXD 2

typedef struct flow_spec {
    int data, rw;    /* rw: 0 R, 1 RW, 2 W */
    int prod, pflow; /* producer task and its flow (1..), prod -1: the data as it was */
} flow_spec_t;

typedef struct task_spec {
    int rank, nfl;
    flow_spec_t fl[MAXF];
} task_spec_t;

typedef struct case_spec {
    const char *name;
    int nranks, ndata, owner[MAXD], ntasks;
    task_spec_t t[MAXT];
    long tiles, skipped; /* tiles carried, receives met without bytes */
    int new_data;        /* the data made by weft_data_new, with initial contents */
} case_spec_t;

/* clang-format off */
#define R_(d, p, f) {.data = d, .rw = 0, .prod = p, .pflow = f}
#define RW(d, p, f) {.data = d, .rw = 1, .prod = p, .pflow = f}
#define W_(d) {.data = d, .rw = 2, .prod = -1}

/* name, ranks, data, owners, tasks, {rank, flows, {flows}} each, tiles, skipped */
static const case_spec_t cases[] = {
    {"peers", 3, 1, {0}, 5,
     {{0, 1, {RW(0, -1, 0)}}, {1, 1, {R_(0, 0, 1)}}, {2, 1, {R_(0, 1, 1)}},
      {2, 1, {R_(0, 0, 1)}}, {2, 1, {R_(0, 0, 1)}}},
     2, 1, 0},
    {"swap", 3, 1, {0}, 5,
     {{0, 1, {RW(0, -1, 0)}}, {1, 1, {R_(0, 0, 1)}}, {2, 1, {R_(0, 0, 1)}},
      {2, 1, {R_(0, 1, 1)}}, {2, 1, {R_(0, 0, 1)}}},
     2, 1, 0},
    {"back", 2, 1, {0}, 4,
     {{0, 1, {RW(0, -1, 0)}}, {1, 1, {R_(0, 0, 1)}}, {0, 1, {R_(0, 1, 1)}},
      {0, 1, {R_(0, 0, 1)}}},
     1, 1, 0},
    {"late", 2, 1, {0}, 4,
     {{0, 1, {R_(0, 2, 1)}}, {0, 1, {R_(0, 3, 1)}}, {1, 1, {R_(0, 3, 1)}},
      {0, 1, {RW(0, -1, 0)}}},
     1, 1, 0},
    {"loop", 3, 1, {2}, 4,
     {{0, 1, {R_(0, 2, 1)}}, {0, 1, {R_(0, 3, 1)}}, {1, 1, {R_(0, 1, 1)}},
      {2, 1, {RW(0, -1, 0)}}},
     2, 1, 0},
    {"cross", 3, 2, {0, 2}, 4,
     {{2, 1, {R_(0, 3, 1)}}, {2, 2, {R_(0, 2, 1), RW(1, -1, 0)}}, {0, 1, {RW(0, -1, 0)}},
      {1, 2, {R_(0, 2, 1), R_(1, 1, 2)}}},
     3, 1, 0},
    {"chain", 4, 1, {0}, 5,
     {{0, 1, {R_(0, 4, 1)}}, {0, 1, {R_(0, 3, 1)}}, {0, 1, {RW(0, -1, 0)}},
      {3, 1, {R_(0, 2, 1)}}, {1, 1, {R_(0, 1, 1)}}},
     2, 2, 0},
    {"home", 2, 1, {0}, 3,
     {{0, 1, {R_(0, 2, 1)}}, {0, 1, {R_(0, -1, 0)}}, {1, 1, {R_(0, 1, 1)}}},
     1, 1, 0},
    {"fwds", 2, 2, {1, 0}, 5,
     {{1, 2, {R_(1, 4, 1), R_(0, -1, 0)}}, {0, 1, {R_(0, 0, 2)}}, {1, 1, {R_(0, -1, 0)}},
      {0, 2, {R_(0, 2, 1), R_(1, -1, 0)}}, {0, 1, {RW(1, -1, 0)}}},
     2, 0, 0},
    {"fwdnext", 2, 1, {0}, 4,
     {{0, 1, {R_(0, -1, 0)}}, {1, 1, {RW(0, 0, 1)}}, {1, 1, {R_(0, 1, 1)}},
      {0, 1, {RW(0, 2, 1)}}},
     2, 0, 0},
    {"newinit", 1, 1, {0}, 2, {{0, 1, {W_(0)}}, {0, 1, {R_(0, -1, 0)}}}, 0, 0, 1},
    {"bounce", 2, 1, {1}, 4,
     {{1, 1, {R_(0, 2, 1)}}, {0, 1, {R_(0, 0, 1)}}, {0, 1, {R_(0, 3, 1)}},
      {1, 1, {RW(0, -1, 0)}}},
     1, 1, 0},
};
/* clang-format on */

typedef struct run {
    const case_spec_t *c;
    int n; /* elements of a tile */
    weft_data_t *d[MAXD], *s[MAXT];
} run_t;

static double initial_c(int d) { return 100.0 * (d + 1); }

/* NEW data d as it was (weft_data_set_init). */
static void init_tile(void *ptr, int64_t ld, int rows, int cols, void *arg)
{
    int d = *(const int *)arg;
    for (int j = 0; j < cols; j++)
        for (int i = 0; i < rows; i++) ((double *)ptr)[j * ld + i] = j * rows + i + initial_c(d);
}

static double tile_sum(const double *p, int n)
{
    double s = 0;
    for (int k = 0; k < n; k++) s += p[k];
    return s;
}

static int body(weft_task_t *t)
{
    const run_t *r;
    int i;
    weft_task_value(t, 0, &r);
    weft_task_value(t, 1, &i);
    const task_spec_t *ts = &r->c->t[i];
    double *s = weft_task_ptr(t, 0);
    s[0] = 0;
    for (int f = 0; f < ts->nfl; f++) {
        double *x = weft_task_ptr(t, f + 1);
        if (ts->fl[f].rw == 2) {
            for (int k = 0; k < r->n; k++) x[k] = k + 1000.0 * (i + 1);
            continue;
        }
        s[0] += tile_sum(x, r->n);
        for (int k = 0; ts->fl[f].rw && k < r->n; k++) x[k] += i + 1;
    }
    return 0;
}

static const weft_task_class_t cls_t = {.name = "T",
                                        .body = {[WEFT_DEV_CPU] = body, [WEFT_DEV_EMU] = body}};

static void range(const int *idx, int d, int *lo, int *hi, const void *arg)
{
    (void)idx, (void)d;
    *lo = 0;
    *hi = ((const run_t *)arg)->c->ntasks - 1;
}

static int rank_of(const int *idx, const void *arg)
{
    return ((const run_t *)arg)->c->t[idx[0]].rank;
}

static int args(const int *idx, weft_arg_t *a, int max, const void *arg)
{
    (void)max;
    const run_t *r = arg;
    const task_spec_t *ts = &r->c->t[idx[0]];
    static const run_t *self;
    self = r;
    int n = 0;
    a[n++] = weft_arg_data(WEFT_RW, r->s[idx[0]]);
    static const int modes[] = {WEFT_R, WEFT_RW, WEFT_W};
    for (int f = 0; f < ts->nfl; f++)
        a[n++] = weft_arg_data(modes[ts->fl[f].rw], r->d[ts->fl[f].data]);
    a[n++] = weft_arg_value(&self, sizeof self);
    a[n++] = weft_arg_value(&idx[0], sizeof idx[0]);
    a[n++] = weft_arg_int(WEFT_ON_RANK, ts->rank);
    return n;
}

static void ref(weft_ptg_ref_t *r, int t, int flow)
{
    memset(r, 0, sizeof *r);
    r->idx[0] = t;
    r->flow = flow;
}

static int producer(const int *idx, int flow, weft_ptg_ref_t *from, const void *arg)
{
    const case_spec_t *c = ((const run_t *)arg)->c;
    if (flow == 0) return 0;
    const flow_spec_t *f = &c->t[idx[0]].fl[flow - 1];
    if (f->prod < 0) return 0;
    ref(from, f->prod, f->pflow);
    return c->t[f->prod].fl[f->pflow - 1].rw ? 1 : 2;
}

static int consumers(const int *idx, int flow, weft_ptg_ref_t *to, int max, const void *arg)
{
    const case_spec_t *c = ((const run_t *)arg)->c;
    int n = 0;
    for (int t = 0; t < c->ntasks && flow > 0; t++)
        for (int f = 0; f < c->t[t].nfl; f++)
            if (c->t[t].fl[f].prod == idx[0] && c->t[t].fl[f].pflow == flow && n++ < max)
                ref(&to[n - 1], t, f + 1);
    return n;
}

/* The constant a version's elements carry beyond their index (the file's
 * head says which). */
static double version_c(const case_spec_t *c, int t, int flow)
{
    const flow_spec_t *f = &c->t[t].fl[flow - 1];
    if (f->rw == 2) return 1000.0 * (t + 1);
    double in = f->prod < 0 ? initial_c(f->data) : version_c(c, f->prod, f->pflow);
    return in + (f->rw ? t + 1 : 0);
}

static double final_c(const case_spec_t *c, int d)
{
    double v = initial_c(d);
    for (int t = 0; t < c->ntasks; t++)
        for (int f = 0; f < c->t[t].nfl; f++)
            if (c->t[t].fl[f].data == d && c->t[t].fl[f].rw) v = version_c(c, t, f + 1);
    return v;
}

static int check_values(const run_t *r, int me, double *s, double **user)
{
    double *x[MAXD];
    for (int d = 0; d < r->c->ndata; d++)
        x[d] = r->c->new_data ? weft_data_host_ptr(r->d[d], NULL) : user[d];
    const case_spec_t *c = r->c;
    double n = r->n, base = n * (n - 1) / 2;
    for (int t = 0; t < c->ntasks; t++) {
        if (c->t[t].rank != me) continue;
        double want = 0;
        for (int f = 0; f < c->t[t].nfl; f++) {
            const flow_spec_t *fs = &c->t[t].fl[f];
            if (fs->rw == 2) continue;
            want +=
                base + n * (fs->prod < 0 ? initial_c(fs->data) : version_c(c, fs->prod, fs->pflow));
        }
        if (s[t] != want) {
            printf("test_ptg_two_peers rank %d: %s: S(%d) = %g, expected %g\n", me, c->name, t,
                   s[t], want);
            return 1;
        }
    }
    for (int d = 0; d < c->ndata; d++)
        for (int k = 0; c->owner[d] == me && k < r->n; k++)
            if (!x[d] || x[d][k] != k + final_c(c, d)) {
                printf("test_ptg_two_peers rank %d: %s: X%d[%d] = %g, expected %g\n", me, c->name,
                       d, k, x[d] ? x[d][k] : -1.0, k + final_c(c, d));
                return 1;
            }
    return 0;
}

/* The moves, summed over the ranks, against the case's count. */
static int check_moves(const run_t *r, int me, const weft_stats_t *s0, const weft_stats_t *s1)
{
    long mine[5] = {(long)(s1->net_bytes_sent - s0->net_bytes_sent),
                    (long)(s1->net_bytes_received - s0->net_bytes_received),
                    (long)(s1->recv_skipped - s0->recv_skipped),
                    (long)(s1->activations_sent - s0->activations_sent),
                    (long)(s1->eager_sent - s0->eager_sent)},
         all[5];
    MPI_Allreduce(mine, all, 5, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (all[4] != 0 && all[4] != all[3]) {
        printf("test_ptg_two_peers rank %d: %ld of %ld activations eager: all or none expected\n",
               me, all[4], all[3]);
        return 1;
    }
    long tiles = r->c->tiles + (all[4] ? r->c->skipped : 0);
    long bytes = tiles * (long)sizeof(double) * r->n;
    if (all[0] == bytes && all[1] == bytes && all[2] == r->c->skipped) return 0;
    printf("test_ptg_two_peers rank %d: %s: %ld bytes sent, %ld received, %ld receives skipped; "
           "expected %ld, %ld, %ld\n",
           me, r->c->name, all[0], all[1], all[2], bytes, bytes, r->c->skipped);
    return 1;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    const char *name = argc > 1 ? argv[1] : "peers";
    int b = argc > 2 ? atoi(argv[2]) : 8, me = weft_rank(ctx);
    run_t r = {.n = b * b};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        if (!strcmp(cases[k].name, name)) r.c = &cases[k];
    if (!r.c || weft_nranks(ctx) < r.c->nranks) {
        printf("test_ptg_two_peers: no case %s on %d ranks\n", name, weft_nranks(ctx));
        weft_fini(ctx);
        return 2;
    }
    double *x[MAXD], s[MAXT] = {0};
    int dids[MAXD];
    for (int d = 0; d < r.c->ndata; d++) {
        x[d] = malloc(sizeof(double) * (size_t)r.n);
        for (int k = 0; k < r.n; k++) x[d][k] = k + initial_c(d);
        dids[d] = d;
        if (!r.c->new_data) {
            r.d[d] = weft_data_register(ctx, WEFT_DOUBLE, x[d], b, b, b, r.c->owner[d]);
        } else {
            r.d[d] = weft_data_new(ctx, WEFT_DOUBLE, b, b, r.c->owner[d]);
            if (weft_data_set_init(r.d[d], init_tile, &dids[d]) != 0) return 1;
        }
    }
    for (int t = 0; t < r.c->ntasks; t++)
        r.s[t] = weft_data_register(ctx, WEFT_DOUBLE, &s[t], 1, 1, 1, r.c->t[t].rank);
    weft_ptg_class_t cls = {.task = &cls_t,
                            .ndims = 1,
                            .range = range,
                            .rank = rank_of,
                            .args = args,
                            .producer = producer,
                            .consumers = consumers};
    weft_ptg_t graph = {.classes = &cls, .nclasses = 1, .arg = &r};
    weft_stats_t s0, s1;
    weft_stats_get(ctx, &s0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "two_peers");
    int rc = weft_ptg_insert(tp, &graph);
    int w = weft_taskpool_wait(tp);
    weft_stats_get(ctx, &s1);
    int bad = rc != 0 || w != 0;
    if (!bad) bad = check_values(&r, me, s, x);
    int moves = check_moves(&r, me, &s0, &s1);
    if (!bad && !moves)
        printf("test_ptg_two_peers rank %d: ok\n", me);
    else if (rc || w)
        printf("test_ptg_two_peers rank %d: insert %d wait %d, %lld cancelled here\n", me, rc, w,
               (long long)(s1.tasks_cancelled - s0.tasks_cancelled));
    weft_taskpool_free(tp);
    for (int t = 0; t < r.c->ntasks; t++) weft_data_release(r.s[t]);
    for (int d = 0; d < r.c->ndata; d++) weft_data_release(r.d[d]);
    int f = weft_fini(ctx);
    for (int d = 0; d < r.c->ndata; d++) free(x[d]);
    return f != 0 || bad || moves;
}
