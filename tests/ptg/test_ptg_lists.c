/* The graph's own functions as a stranger wrote them (an audit of
 * docs/PTG.md against the code); argv[1] names the variant, each prints
 * "test_ptg_lists rank R: <variant> ok" or what went wrong.
 *
 * backchain: a chain over one data enumerated against its order
 * (STEP(i)'s producer is STEP(i + 1); STEP(N - 1) writes first, on the
 * data's owner, rank 0), the steps spread over the ranks. Each body checks
 * that the step before it ran last. Before, each task's depth walked the
 * whole rest of the chain (16000 tasks: 33 s of build on one rank); the
 * producer function's calls are counted: at most 200 a task.
 *
 * cap: NOTE(j, i), j in 0..65534, i in 0..0: its ranges are exactly the
 * 65536 the ranks' count check covers, and its local_range leaves out
 * NOTE(7, 0). Before, a class that ended on the last range was taken as
 * cut short and not counted: the graph ran without that task. Refused.
 *
 * oob (2 ranks): P(0) on rank 0 writes a data of rank 1 and lists C(5) and
 * C(0) as its consumers, C's range being 0..0. Rank 1 called C's rank and
 * args functions for C(5) before checking it (a user's args indexing an
 * array by it reads past it). Refused on every rank; C's functions never
 * see an index outside its range.
 *
 * dup: T(0) (RW) lists T(1) twice as consumers and leaves out T(2), which
 * names T(0) too: the count of consumers on the rank matched and the graph
 * ran. Refused, naming the repeated consumer. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <weft/ptg.h>
#include <weft/weft.h>

#define CHAIN 3001
#define CAP_J 65535

static int nranks, me;
static weft_data_t *x[2];
static double xmem[2];
static atomic_long producer_calls, out_of_range;
static atomic_int wrong_order;

/* ---- backchain ---------------------------------------------------------- */

static int body_step(weft_task_t *t)
{
    int i;
    if (weft_task_value_get(t, 0, &i, sizeof i) != WEFT_SUCCESS) return -1;
    double *v = weft_task_ptr(t, 0);
    /* The data carries the index of the step before. */
    if ((int)v[0] != (i == CHAIN - 1 ? -1 : i + 1)) atomic_fetch_add(&wrong_order, 1);
    v[0] = i;
    return 0;
}

static const weft_task_class_t step_class = {.name = "step", .body = {[WEFT_DEV_CPU] = body_step}};

static void range_chain(const int *idx, int dim, int *lo, int *hi, const void *arg)
{
    (void)idx, (void)dim, (void)arg;
    *lo = 0;
    *hi = CHAIN - 1;
}

/* Its position along the chain from its first writer, on rank 0. */
static int rank_step(const int *idx, const void *arg)
{
    (void)arg;
    return (CHAIN - 1 - idx[0]) % nranks;
}

static int args_step(const int *idx, weft_arg_t *a, int max, const void *arg)
{
    (void)max;
    static _Thread_local int v; /* read after this returns (docs/PTG.md) */
    v = idx[0];
    a[0] = weft_arg_data(WEFT_RW, x[0]);
    a[1] = weft_arg_value(&v, sizeof v);
    a[2] = weft_arg_int(WEFT_ON_RANK, rank_step(idx, arg));
    return 3;
}

static int producer_step(const int *idx, int flow, weft_ptg_ref_t *p, const void *arg)
{
    (void)flow, (void)arg;
    atomic_fetch_add(&producer_calls, 1);
    if (idx[0] == CHAIN - 1) return 0;
    *p = (weft_ptg_ref_t){.cls = 0, .flow = 0, .idx = {idx[0] + 1}};
    return 1;
}

static int consumers_step(const int *idx, int flow, weft_ptg_ref_t *to, int max, const void *arg)
{
    (void)flow, (void)arg;
    if (idx[0] == 0) return 0;
    if (max >= 1) to[0] = (weft_ptg_ref_t){.cls = 0, .flow = 0, .idx = {idx[0] - 1}};
    return 1;
}

/* ---- cap ---------------------------------------------------------------- */

static int body_none(weft_task_t *t)
{
    (void)t;
    return 0;
}

static const weft_task_class_t note_class = {.name = "note", .body = {[WEFT_DEV_CPU] = body_none}};

static void range_cap(const int *idx, int dim, int *lo, int *hi, const void *arg)
{
    (void)idx, (void)arg;
    *lo = 0;
    *hi = dim == 0 ? CAP_J - 1 : 0;
}

static void local_cap(const int *idx, int dim, int rank, int *lo, int *hi, int *step,
                      const void *arg)
{
    (void)rank;
    range_cap(idx, dim, lo, hi, arg);
    *step = 1;
    if (dim == 1 && idx[0] == 7) *lo = 1; /* leaves out NOTE(7, 0) */
}

static int rank_cap(const int *idx, const void *arg)
{
    (void)arg;
    return idx[0] % nranks;
}

static int args_cap(const int *idx, weft_arg_t *a, int max, const void *arg)
{
    (void)max;
    a[0] = weft_arg_int(WEFT_ON_RANK, rank_cap(idx, arg));
    return 1;
}

static int producer_none(const int *idx, int flow, weft_ptg_ref_t *p, const void *arg)
{
    (void)idx, (void)flow, (void)p, (void)arg;
    return 0;
}

static int consumers_none(const int *idx, int flow, weft_ptg_ref_t *to, int max, const void *arg)
{
    (void)idx, (void)flow, (void)to, (void)max, (void)arg;
    return 0;
}

/* ---- oob ---------------------------------------------------------------- */

static const weft_task_class_t p_class = {.name = "P", .body = {[WEFT_DEV_CPU] = body_none}};
static const weft_task_class_t c_class = {.name = "C", .body = {[WEFT_DEV_CPU] = body_none}};

static void range_one(const int *idx, int dim, int *lo, int *hi, const void *arg)
{
    (void)idx, (void)dim, (void)arg;
    *lo = *hi = 0;
}

static int rank_p(const int *idx, const void *arg)
{
    (void)idx, (void)arg;
    return 0;
}

static int rank_c(const int *idx, const void *arg)
{
    (void)arg;
    if (idx[0] != 0) atomic_fetch_add(&out_of_range, 1);
    return 1;
}

static int args_p(const int *idx, weft_arg_t *a, int max, const void *arg)
{
    (void)idx, (void)max, (void)arg;
    a[0] = weft_arg_data(WEFT_W, x[1]);
    a[1] = weft_arg_int(WEFT_ON_RANK, 0);
    return 2;
}

static int args_c(const int *idx, weft_arg_t *a, int max, const void *arg)
{
    (void)max, (void)arg;
    if (idx[0] != 0) atomic_fetch_add(&out_of_range, 1);
    a[0] = weft_arg_data(WEFT_RW, x[1]);
    return 1;
}

static int producer_c(const int *idx, int flow, weft_ptg_ref_t *p, const void *arg)
{
    (void)flow, (void)arg;
    if (idx[0] != 0) atomic_fetch_add(&out_of_range, 1);
    *p = (weft_ptg_ref_t){.cls = 0, .flow = 0};
    return 1;
}

static int consumers_p(const int *idx, int flow, weft_ptg_ref_t *to, int max, const void *arg)
{
    (void)idx, (void)flow, (void)arg;
    /* C(5) first: the final-version check parses the list's entries in
     * order, and stopped at C(0), which writes, before reaching it. */
    if (max >= 2) {
        to[0] = (weft_ptg_ref_t){.cls = 1, .flow = 0, .idx = {5}};
        to[1] = (weft_ptg_ref_t){.cls = 1, .flow = 0, .idx = {0}};
    }
    return 2;
}

/* ---- dup ---------------------------------------------------------------- */

static void range_three(const int *idx, int dim, int *lo, int *hi, const void *arg)
{
    (void)idx, (void)dim, (void)arg;
    *lo = 0;
    *hi = 2;
}

static int rank_zero(const int *idx, const void *arg)
{
    (void)idx, (void)arg;
    return 0;
}

static int args_dup(const int *idx, weft_arg_t *a, int max, const void *arg)
{
    (void)max, (void)arg;
    a[0] = weft_arg_data(idx[0] == 0 ? WEFT_RW : WEFT_R, x[0]);
    return 1;
}

static int producer_dup(const int *idx, int flow, weft_ptg_ref_t *p, const void *arg)
{
    (void)flow, (void)arg;
    if (idx[0] == 0) return 0;
    *p = (weft_ptg_ref_t){.cls = 0, .flow = 0, .idx = {0}};
    return 1;
}

static int consumers_dup(const int *idx, int flow, weft_ptg_ref_t *to, int max, const void *arg)
{
    (void)flow, (void)arg;
    if (idx[0] != 0) return 0;
    if (max >= 2) to[0] = to[1] = (weft_ptg_ref_t){.cls = 0, .flow = 0, .idx = {1}};
    return 2;
}

/* ---- the runs ----------------------------------------------------------- */

static int run(weft_context_t *ctx, const weft_ptg_class_t *classes, int n, int *rc, int *wrc)
{
    const weft_ptg_t g = {.classes = classes, .nclasses = n};
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "lists");
    *rc = weft_ptg_insert(tp, &g);
    *wrc = weft_taskpool_wait(tp);
    int ran = (int)weft_taskpool_ntasks_run(tp);
    weft_taskpool_free(tp);
    return ran;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    nranks = weft_nranks(ctx);
    me = weft_rank(ctx);
    const char *variant = argc > 1 ? argv[1] : "backchain";
    xmem[0] = -1;
    for (int i = 0; i < 2; i++)
        x[i] = weft_data_register(ctx, WEFT_DOUBLE, &xmem[i], 1, 1, 1, i % nranks);
    int rc = 0, wrc = 0, ran, ok = 0;
    if (strcmp(variant, "backchain") == 0) {
        const weft_ptg_class_t c = {
            &step_class, 1, range_chain, rank_step, args_step, producer_step, consumers_step, NULL};
        ran = run(ctx, &c, 1, &rc, &wrc);
        int mine = 0;
        for (int i = 0; i < CHAIN; i++) mine += rank_step(&i, NULL) == me;
        long calls = atomic_load(&producer_calls);
        ok = rc == 0 && wrc == 0 && ran == mine && atomic_load(&wrong_order) == 0 &&
             calls <= 200L * CHAIN && (me != 0 || xmem[0] == 0);
        if (!ok)
            printf("test_ptg_lists rank %d: backchain: insert %d, wait %d, %d of %d run, %d out "
                   "of order, %ld producer calls (at most %ld), value %g\n",
                   me, rc, wrc, ran, mine, atomic_load(&wrong_order), calls, 200L * CHAIN, xmem[0]);
    } else {
        weft_ptg_class_t c[2] = {0};
        int n = 1;
        if (strcmp(variant, "cap") == 0) {
            c[0] = (weft_ptg_class_t){&note_class,    2,        range_cap,
                                      rank_cap,       args_cap, producer_none,
                                      consumers_none, local_cap};
        } else if (strcmp(variant, "oob") == 0) {
            c[0] = (weft_ptg_class_t){&p_class,      1,           range_one, rank_p, args_p,
                                      producer_none, consumers_p, NULL};
            c[1] = (weft_ptg_class_t){&c_class, 1,          range_one,      rank_c,
                                      args_c,   producer_c, consumers_none, NULL};
            n = 2;
        } else {
            c[0] = (weft_ptg_class_t){&note_class,   1,        range_three,
                                      rank_zero,     args_dup, producer_dup,
                                      consumers_dup, NULL};
        }
        ran = run(ctx, c, n, &rc, &wrc);
        ok = rc == WEFT_ERR_INVALID && wrc == 0 && ran == 0 && atomic_load(&out_of_range) == 0;
        if (!ok)
            printf("test_ptg_lists rank %d: %s NOT refused: insert %d, wait %d, %d run, %ld calls "
                   "out of range\n",
                   me, variant, rc, wrc, ran, atomic_load(&out_of_range));
    }
    if (ok) printf("test_ptg_lists rank %d: %s ok\n", me, variant);
    fflush(stdout);
    for (int i = 0; i < 2; i++) weft_data_release(x[i]);
    return weft_fini(ctx) == WEFT_SUCCESS && ok ? 0 : 1;
}
