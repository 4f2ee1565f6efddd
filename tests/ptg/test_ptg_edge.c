/* Graphs at the edges of what the description allows, run as a new user
 * would write them (argv[1] names the variant; each prints
 * "test_ptg_edge rank R: <variant> ok" or what went wrong).
 *
 * intmax: FILL(j, i) over j, i in INT_MAX-1 .. INT_MAX writes tile
 * (j, i) with j - i + 0.25; the inner index has a local_range (lo the
 * rank's residue near 0, step nranks), so on 3 ranks rank 2's first index
 * inside the range is INT_MAX + 1. Before, the build stepped its loop
 * counters as int: a range that ends at INT_MAX wrapped to INT_MIN and
 * never ended, and the clipped progression wrapped the same way. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <weft/ptg.h>
#include <weft/weft.h>

#define BASE (INT_MAX - 1)

typedef struct edge {
    int nranks, me;
    weft_data_t *t[4];
    double mem[4];
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
    int status = 1;
    if (strcmp(variant, "intmax") == 0) status = run_intmax(ctx, &e);
    if (status == 0) printf("test_ptg_edge rank %d: %s ok\n", e.me, variant);
    fflush(stdout);
    for (int k = 0; k < 4; k++) weft_data_release(e.t[k]);
    return weft_fini(ctx) == WEFT_SUCCESS ? status : 1;
}
