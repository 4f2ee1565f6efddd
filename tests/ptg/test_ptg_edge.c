/* Graphs at the edges of what the description allows, run as a new user
 * would write them (argv[1] names the variant; each prints
 * "test_ptg_edge rank R: <variant> ok" or what went wrong).
 *
 * intmax: FILL(j, i) over j, i in INT_MAX-1 .. INT_MAX writes tile
 * (j, i) with j - i + 0.25; the inner index has a local_range (lo the
 * rank's residue near 0, step nranks), so on 3 ranks rank 2's first index
 * inside the range is INT_MAX + 1. Before, the build stepped its loop
 * counters as int: a range that ends at INT_MAX wrapped to INT_MIN and
 * never ended, and the clipped progression wrapped the same way.
 *
 * lrskip: FILL1(i), i in 0..5, writes tile i on its owner (i % nranks)
 * and nothing reads it; its local_range gives the last rank every other
 * one of its indices only. Before, the tasks left out were made by no
 * rank and nothing said so: the graph ran, its tiles stayed unwritten.
 * Now every rank refuses the graph, naming the class and the counts.
 *
 * twoclaim: NOTE(i), i in 0..5, tasks without data placed by WEFT_ON_RANK
 * at their rank function's answer, which every rank gives as itself for
 * NOTE(0): each rank made it, its body ran once per rank. Now refused on
 * every rank, as a rank function that differs between ranks.
 *
 * swap: NOTE(i) as in twoclaim, but rank 1 answers NOTE(0)'s rank for
 * NOTE(1) and NOTE(1)'s for NOTE(0): NOTE(0) is made twice and NOTE(1) by
 * no rank, so the ranks' count is the index space's. Before, the graph ran
 * (NOTE(1)'s body never did); now every rank refuses it by the tasks'
 * identities.
 *
 * mirror (2 ranks): NOTE(i) as in twoclaim, but each rank answers itself
 * for NOTE(1) and NOTE(2) and the other rank for NOTE(0) and NOTE(3): both
 * ranks make 1 and 2, none 0 and 3, and the made tasks' indices sum as the
 * index space's (1 + 2 + 1 + 2 = 0 + 1 + 2 + 3), so the sum of identities
 * linear in the index took it (the graph ran, two tasks twice, two never);
 * the sum of their squares refuses it. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <weft/ptg.h>
#include <weft/weft.h>

#define BASE (INT_MAX - 1)

typedef struct edge {
    int nranks, me;
    int swap;   /* variant swap: rank 1 swaps the answers of NOTE(0) and NOTE(1) */
    int mirror; /* variant mirror: each rank claims NOTE(1), NOTE(2), gives NOTE(0), NOTE(3) */
    weft_data_t *t[4];
    double mem[4];
    weft_data_t *u[6];
    double umem[6];
} edge_t;

static int tile(const int *idx) { return (int)(((long long)idx[0] - BASE) * 2 + idx[1] - BASE); }
static int owner(const edge_t *e, const int *idx)
{
    return (int)(((long long)idx[1] - BASE) % e->nranks);
}

static int body_fill(weft_task_t *t)
{
    int idx[2];
    if (weft_task_value_get(t, 0, idx, sizeof idx) != WEFT_SUCCESS) return -1;
    *(double *)weft_task_ptr(t, 0) = (double)idx[0] - idx[1] + 0.25;
    return 0;
}

static const weft_task_class_t fill_class = {
    .name = "fill", .body = {[WEFT_DEV_CPU] = body_fill, [WEFT_DEV_EMU] = body_fill}};

static void range_fill(const int *idx, int dim, int *lo, int *hi, const void *arg)
{
    (void)idx, (void)dim, (void)arg;
    *lo = BASE;
    *hi = INT_MAX;
}

static void local_fill(const int *idx, int dim, int rank, int *lo, int *hi, int *step,
                       const void *arg)
{
    (void)idx;
    const edge_t *e = arg;
    *lo = dim == 0 ? BASE : (int)(((long long)BASE + rank) % e->nranks);
    *hi = INT_MAX;
    *step = dim == 0 ? 1 : e->nranks;
}

static int rank_fill(const int *idx, const void *arg) { return owner(arg, idx); }

static int args_fill(const int *idx, weft_arg_t *a, int max, const void *arg)
{
    (void)max;
    const edge_t *e = arg;
    a[0] = weft_arg_data(WEFT_W | WEFT_AFFINITY, e->t[tile(idx)]);
    a[1] = weft_arg_value(idx, 2 * sizeof idx[0]);
    return 2;
}

static int prod_none(const int *idx, int flow, weft_ptg_ref_t *p, const void *arg)
{
    (void)idx, (void)flow, (void)p, (void)arg;
    return 0;
}

static int cons_none(const int *idx, int flow, weft_ptg_ref_t *to, int max, const void *arg)
{
    (void)idx, (void)flow, (void)to, (void)max, (void)arg;
    return 0;
}

static void range_fill1(const int *idx, int dim, int *lo, int *hi, const void *arg)
{
    (void)idx, (void)dim, (void)arg;
    *lo = 0;
    *hi = 5;
}

static void local_fill1(const int *idx, int dim, int rank, int *lo, int *hi, int *step,
                        const void *arg)
{
    (void)idx, (void)dim;
    const edge_t *e = arg;
    *lo = rank;
    *hi = 5;
    *step = rank == e->nranks - 1 ? 2 * e->nranks : e->nranks;
}

static int rank_fill1(const int *idx, const void *arg)
{
    const edge_t *e = arg;
    return idx[0] % e->nranks;
}

static int args_fill1(const int *idx, weft_arg_t *a, int max, const void *arg)
{
    (void)max;
    const edge_t *e = arg;
    /* The value is copied after this returns (before the next call), as
     * in apps/gemm_stress_ptg.h: it must outlive this frame. */
    static _Thread_local int v[2];
    v[0] = idx[0];
    v[1] = 0;
    a[0] = weft_arg_data(WEFT_W | WEFT_AFFINITY, e->u[idx[0]]);
    a[1] = weft_arg_value(v, sizeof v);
    return 2;
}

static int body_note(weft_task_t *t)
{
    (void)t;
    return 0;
}

static const weft_task_class_t note_class = {.name = "note", .body = {[WEFT_DEV_CPU] = body_note}};

static int rank_note(const int *idx, const void *arg)
{
    const edge_t *e = arg;
    if (e->swap) return (e->me == 1 && idx[0] < 2 ? 1 - idx[0] : idx[0]) % e->nranks;
    if (e->mirror && idx[0] < 4)
        return idx[0] == 1 || idx[0] == 2 ? e->me : (e->me + 1) % e->nranks;
    return idx[0] == 0 ? e->me : idx[0] % e->nranks;
}

static int args_note(const int *idx, weft_arg_t *a, int max, const void *arg)
{
    (void)max;
    a[0] = weft_arg_int(WEFT_ON_RANK, rank_note(idx, arg));
    return 1;
}

static int run_refused(weft_context_t *ctx, edge_t *e, const char *variant)
{
    const weft_ptg_class_t fill1 = {&fill_class, 1,         range_fill1, rank_fill1,
                                    args_fill1,  prod_none, cons_none,   local_fill1};
    const weft_ptg_class_t note = {&note_class, 1,         range_fill1, rank_note,
                                   args_note,   prod_none, cons_none,   NULL};
    const weft_ptg_class_t cls = strcmp(variant, "lrskip") == 0 ? fill1 : note;
    const weft_ptg_t g = {.classes = &cls, .nclasses = 1, .arg = e};
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "edge");
    int rc = weft_ptg_insert(tp, &g);
    int wrc = weft_taskpool_wait(tp);
    int64_t ran = weft_taskpool_ntasks_run(tp);
    weft_taskpool_free(tp);
    if (rc == WEFT_ERR_INVALID && wrc == WEFT_SUCCESS && ran == 0) return 0;
    printf("test_ptg_edge rank %d: %s NOT refused: insert %d, wait %d, %lld tasks run\n", e->me,
           variant, rc, wrc, (long long)ran);
    return 1;
}

static int run_intmax(weft_context_t *ctx, edge_t *e)
{
    const weft_ptg_class_t cls = {&fill_class, 2,         range_fill, rank_fill,
                                  args_fill,   prod_none, cons_none,  local_fill};
    const weft_ptg_t g = {.classes = &cls, .nclasses = 1, .arg = e};
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "edge");
    int rc = weft_ptg_insert(tp, &g);
    int wrc = weft_taskpool_wait(tp);
    int64_t ran = weft_taskpool_ntasks_run(tp);
    weft_taskpool_free(tp);
    int bad = 0, mine = 0;
    for (long long j = BASE; j <= INT_MAX; j++) {
        for (long long i = BASE; i <= INT_MAX; i++) {
            int idx[2] = {(int)j, (int)i};
            if (owner(e, idx) != e->me) continue;
            mine++;
            bad += e->mem[tile(idx)] != (double)(j - i) + 0.25;
        }
    }
    if (rc == WEFT_SUCCESS && wrc == WEFT_SUCCESS && !bad && ran == mine) return 0;
    printf("test_ptg_edge rank %d: intmax FAILED: insert %d, wait %d, %d wrong, %lld of %d run\n",
           e->me, rc, wrc, bad, (long long)ran, mine);
    return 1;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    const char *variant = argc > 1 ? argv[1] : "intmax";
    edge_t e = {.nranks = weft_nranks(ctx), .me = weft_rank(ctx)};
    for (int k = 0; k < 4; k++) {
        int idx[2] = {BASE, BASE + k % 2};
        e.t[k] = weft_data_register(ctx, WEFT_DOUBLE, &e.mem[k], 1, 1, 1, owner(&e, idx));
    }
    for (int i = 0; i < 6; i++)
        e.u[i] = weft_data_register(ctx, WEFT_DOUBLE, &e.umem[i], 1, 1, 1, i % e.nranks);
    int status = 1;
    if (strcmp(variant, "intmax") == 0) status = run_intmax(ctx, &e);
    e.swap = strcmp(variant, "swap") == 0;
    e.mirror = strcmp(variant, "mirror") == 0;
    if (strcmp(variant, "lrskip") == 0 || strcmp(variant, "twoclaim") == 0 || e.swap || e.mirror)
        status = run_refused(ctx, &e, variant);
    if (status == 0) printf("test_ptg_edge rank %d: %s ok\n", e.me, variant);
    fflush(stdout);
    for (int k = 0; k < 4; k++) weft_data_release(e.t[k]);
    for (int i = 0; i < 6; i++) weft_data_release(e.u[i]);
    return weft_fini(ctx) == WEFT_SUCCESS ? status : 1;
}
