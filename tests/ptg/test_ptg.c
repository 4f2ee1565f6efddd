/* A small parameterized task graph (include/weft/ptg.h) with reads that
 * cross ranks and versions replaced while other ranks still read them,
 * run correct and with one fault each (argv[1] names it).
 *
 * n tiles X[i] of tile_b doubles, owned round-robin. INIT(i) writes X[i] =
 * i+1 on X[i]'s owner; STEP(s, i) for s < nsteps:
 *
 *     X[i] += 0.5 * X[(i+1) % n]      (the version of step s of both)
 *
 * so STEP(s, i+1) must wait for STEP(s, i) to have read X[i+1] before it
 * replaces it (write after read, across ranks when the owners differ).
 * Each owner checks its tiles against the same recurrence computed
 * serially and prints "test_ptg rank R: <variant> ok" or the error; the
 * faulty variants must be refused on every rank ("refused" printed, the
 * wait of the taskpool still works afterwards) with no task run.
 *
 * Variants: ok, devstep (ok with the steps on the device only), producer (STEP names the wrong
 * producer for its read), consumers (INIT's list misses a reader), local_range (leaves out tasks of
 * odd indices), rank (the rank function disagrees with the arguments), remote_initial (STEP reads
 * the initial version of its neighbour, away from the owner), cycle (the producers loop), twice
 * (two tasks replace one version), space (a consumer outside its class's space), away (a final
 * version written away from its owner), graphs (rank 1 passes another graph), periodic (the updates
 * form a ring: a cycle on one rank, fine across ranks), fwd (the first versions passed on by READ
 * tasks on their owners: producer functions answering 2), sim (ok, under sim_nranks: counts only),
 * noclasses (classes NULL with nclasses 2: a refusal, not a crash), bounds (INIT alone, whose range
 * on rank 1 leaves out INIT(1), which rank 1 runs: no flow names it, so only the ranks' comparison
 * of the graphs finds it, not left silently unwritten), inner (STEP's inner range on rank 1 stops
 * one tile short from step 2: named on every rank as a difference of the graphs, "index 1 under
 * (2)", where before only the rank whose flow named a missing task said anything of it), datamap
 * (rank 1's args and rank functions swap the data of tiles 2 and 3, agreeing with each other but
 * not with the other ranks': before, step(s,2) ran on two ranks, step(s,3) on none, and a receive
 * of a version no rank made hung; now refused on every rank, a transfer named as each end sees it;
 * "datamap_lr" the same with the steps' local_range, which leaves rank 1 without the task its
 * functions place there), outofstep (rank 1 skips the graph and goes to the wait: every rank's
 * weft_ptg_insert or wait and weft_fini return WEFT_ERR_MISMATCH; "outofstep refused" then), nobody
 * (STEP's class has no body: refused at the insertion as weft_insert_task
 * refuses it; before, the graph was accepted and failed at the wait),
 * swaplist (STEP(1, 1) and STEP(1, 2) list each other's consumers: the
 * counts agree, and on one rank the lists were never checked against the
 * consumers' producer functions, so the graph ran; a stranger's graph like
 * it left a final version away from its owner with rc 0), kind (STEP(2, 1)
 * names the writer of its right neighbour's version with 2, as a
 * forwarder: accepted on one rank, refused on two), otherflow (STEP(2, 1)
 * names its right neighbour's writer by that task's other flow, which
 * holds another tile: the refusal says which flow it named), devahead
 * (devstep with larger tiles and more steps, run a few times: at
 * devahead_rounds), badargs (STEP(1, 0)'s args give its device hint twice:
 * every rank's refusal names the parse's reason; the other ranks read
 * "(above)" with nothing above), greedy (STEP(1, 0)'s consumers function
 * asks for one entry more than the room it is given, every time), noflow
 * (INIT(1)'s consumers name flow 5 of STEP(0, 1), which has two: the
 * refusal names INIT(1) too, where the mistake is; it named STEP(0, 1)
 * alone, a stranger's note), unwritten (STEP(1, 0)'s consumers function
 * counts one entry more than it writes: weft read what the previous task's
 * list, or malloc, left there), noprod (STEP(2, 1)'s producer function
 * says 1 for flow 1 without writing *from: a stale or uninitialised
 * reference was read), selfprod (STEP(2, 0) names itself as its flow 0's
 * producer: the refusal read "names another task as its producer"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <weft/ptg.h>
#include <weft/weft.h>

/* Doubles a tile and steps: larger in "devahead". */
static int tile_b = 64;
static int nsteps = 5;

enum { C_INIT = 0, C_STEP = 1 };

typedef struct graph {
    int n, nranks, me;
    const char *variant;
    weft_data_t **x;
} graph_t;

static int is(const graph_t *g, const char *v) { return strcmp(g->variant, v) == 0; }
static int owner(const graph_t *g, int i) { return i % g->nranks; }
static int left(const graph_t *g, int i) { return (i - 1 + g->n) % g->n; }
static int right(const graph_t *g, int i) { return (i + 1) % g->n; }
/* Without "periodic" the last tile is only read (by STEP(s, n-2), at every
 * step its INIT version): the in-place updates then form a chain. With it
 * they form a ring, a cycle on one rank (refused) that copies to other
 * ranks break. */
static int periodic(const graph_t *g) { return is(g, "periodic"); }
/* "fwd": no INIT tasks; the owners fill X before the graph, and class 0 is
 * READ(i), which reads X[i] on its owner and passes that version on to the
 * readers on other ranks (its producer functions answer 2). */
static int fwd(const graph_t *g) { return is(g, "fwd"); }
static int nsteps_i(const graph_t *g) { return periodic(g) ? g->n : g->n - 1; }
/* The data of tile i as the graph's functions name it: "datamap" swaps
 * tiles 2 and 3 on rank 1 only (its args and rank functions agree with
 * each other, not with the other ranks'). */
static int tile(const graph_t *g, int i)
{
    int swap = is(g, "datamap") || is(g, "datamap_lr");
    return swap && g->me == 1 && (i == 2 || i == 3) ? 5 - i : i;
}

static int body_init(weft_task_t *t)
{
    int i;
    if (weft_task_value_get(t, 0, &i, sizeof i) != WEFT_SUCCESS) return -1;
    double *x = weft_task_ptr(t, 0);
    for (int k = 0; k < tile_b; k++) x[k] = i + 1 + 0.001 * k;
    return 0;
}

static int body_step(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    const double *y = weft_task_ptr(t, 1);
    for (int k = 0; k < tile_b; k++) x[k] += 0.5 * y[k];
    return 0;
}

static const weft_task_class_t init_class = {
    .name = "init", .body = {[WEFT_DEV_CPU] = body_init, [WEFT_DEV_EMU] = body_init}};
static int body_read(weft_task_t *t)
{
    (void)t;
    return 0;
}

static const weft_task_class_t read_class = {
    .name = "read", .body = {[WEFT_DEV_CPU] = body_read, [WEFT_DEV_EMU] = body_read}};
static const weft_task_class_t step_class = {
    .name = "step", .body = {[WEFT_DEV_CPU] = body_step, [WEFT_DEV_EMU] = body_step}};

static weft_ptg_ref_t ref(int cls, int flow, int a, int b)
{
    weft_ptg_ref_t r = {.cls = cls, .flow = flow, .idx = {a, b, 0, 0}};
    return r;
}

static void range_init(const int *idx, int dim, int *lo, int *hi, const void *arg)
{
    (void)idx, (void)dim;
    const graph_t *g = arg;
    /* "bounds": rank 1 leaves out INIT(0) and INIT(1), its own. */
    *lo = is(g, "bounds") && g->me == 1 ? 2 : 0;
    *hi = g->n - 1;
}

static void range_step(const int *idx, int dim, int *lo, int *hi, const void *arg)
{
    const graph_t *g = arg;
    *lo = 0;
    *hi = dim == 0 ? nsteps - 1 : nsteps_i(arg) - 1;
    /* "inner": rank 1's steps 2 and up stop one tile short. */
    if (is(g, "inner") && g->me == 1 && dim == 1 && idx[0] >= 2) (*hi)--;
}

static int rank_init(const int *idx, const void *arg) { return owner(arg, tile(arg, idx[0])); }

/* "away": the last update of X[0] runs on the next rank (WEFT_ON_RANK),
 * which leaves X[0]'s final version away from its owner. */
static int away(const graph_t *g, const int *idx)
{
    return is(g, "away") && idx[0] == nsteps - 1 && idx[1] == 0;
}

static int rank_step(const int *idx, const void *arg)
{
    const graph_t *g = arg;
    if (is(g, "rank") && idx[0] == 1) return owner(g, idx[1] + 1);
    if (away(g, idx)) return owner(g, 1);
    return owner(g, tile(g, idx[1]));
}

static int args_init(const int *idx, weft_arg_t *a, int max, const void *arg)
{
    (void)max;
    const graph_t *g = arg;
    a[0] = weft_arg_data((fwd(g) ? WEFT_R : WEFT_W) | WEFT_AFFINITY, g->x[tile(g, idx[0])]);
    a[1] = weft_arg_value(&idx[0], sizeof idx[0]);
    return 2;
}

static int args_step(const int *idx, weft_arg_t *a, int max, const void *arg)
{
    (void)max;
    const graph_t *g = arg;
    a[0] = weft_arg_data(WEFT_RW | WEFT_AFFINITY, g->x[tile(g, idx[1])]);
    a[1] = weft_arg_data(WEFT_R, g->x[tile(g, right(g, idx[1]))]);
    a[2] = weft_arg_int(WEFT_PRIORITY, nsteps - idx[0]);
    /* badargs: one task's device hint given twice, refused by the parse. */
    if (is(g, "badargs") && idx[0] == 1 && idx[1] == 0) {
        a[3] = weft_arg_int(WEFT_DEVICE_HINT, 0);
        a[4] = weft_arg_int(WEFT_DEVICE_HINT, 0);
        return 5;
    }
    if (!away(g, idx)) return 3;
    a[3] = weft_arg_int(WEFT_ON_RANK, owner(g, 1));
    return 4;
}

static int prod_init(const int *idx, int flow, weft_ptg_ref_t *p, const void *arg)
{
    (void)idx, (void)flow, (void)p, (void)arg;
    return 0;
}

/* The version of X[j] that step s reads: INIT(j)'s, or STEP(s-1, j)'s
 * (INIT's for a tile no step updates). */
static int version_of(const graph_t *g, int s, int j, weft_ptg_ref_t *p)
{
    *p = s == 0 || j >= nsteps_i(g) ? ref(C_INIT, 0, j, 0) : ref(C_STEP, 0, s - 1, j);
    return fwd(g) && p->cls == C_INIT ? 2 : 1;
}

static int prod_step(const int *idx, int flow, weft_ptg_ref_t *p, const void *arg)
{
    const graph_t *g = arg;
    int s = idx[0], i = idx[1];
    if (flow == 0) {
        if (is(g, "cycle") && s == 2 && i == 0) {
            *p = ref(C_STEP, 0, 3, 0);
            return 1;
        }
        if (is(g, "selfprod") && s == 2 && i == 0) {
            *p = ref(C_STEP, 0, 2, 0);
            return 1;
        }
        /* STEP(1, 0) claims to replace the version STEP(0, 0) replaces. */
        if (is(g, "twice") && s == 1 && i == 0) return version_of(g, 0, i, p);
        /* Its own tile's first version is the owner's, read in place. */
        if (fwd(g) && s == 0) return 0;
        return version_of(g, s, i, p);
    }
    if (is(g, "remote_initial") && s == 0) return 0;
    if (is(g, "producer") && s == 2 && i == 1) return version_of(g, s - 1, right(g, i), p);
    if (is(g, "otherflow") && s == 2 && i == 1) {
        *p = ref(C_STEP, 1, s - 1, right(g, i));
        return 1;
    }
    if (is(g, "noprod") && s == 2 && i == 1) return 1;
    int kind = version_of(g, s, right(g, i), p);
    return is(g, "kind") && s == 2 && i == 1 ? 2 : kind;
}

static int put(weft_ptg_ref_t *to, int max, int n, weft_ptg_ref_t r)
{
    if (n < max) to[n] = r;
    return n + 1;
}

/* The version of X[i] made at step s (s = -1: by INIT) goes to step s+1's
 * task of i (which replaces it) and of its left neighbour (which reads
 * it); a tile no step updates keeps INIT's version for every step. */
static int readers_of(const graph_t *g, int s, int i, weft_ptg_ref_t *to, int max)
{
    if (s + 1 >= nsteps) return 0;
    if (i >= nsteps_i(g)) {
        int n = 0;
        for (int k = 0; k < nsteps; k++) n = put(to, max, n, ref(C_STEP, 1, k, left(g, i)));
        return n;
    }
    int n = fwd(g) && s == -1 ? 0 : put(to, max, 0, ref(C_STEP, 0, s + 1, i));
    if (is(g, "noflow") && s == -1 && i == 1) return put(to, max, 0, ref(C_STEP, 5, 0, 1));
    if (is(g, "consumers") && s == -1 && i == 1) return n;
    if (is(g, "space") && s == 0 && i == 0) n = put(to, max, n, ref(C_STEP, 1, nsteps + 3, 0));
    if (!periodic(g) && i == 0) return n;
    return put(to, max, n, ref(C_STEP, 1, s + 1, left(g, i)));
}

static int cons_init(const int *idx, int flow, weft_ptg_ref_t *to, int max, const void *arg)
{
    (void)flow;
    if (is(arg, "bounds")) return 0; /* INIT alone: nothing names the tasks left out */
    return readers_of(arg, -1, idx[0], to, max);
}

static int cons_step(const int *idx, int flow, weft_ptg_ref_t *to, int max, const void *arg)
{
    int i = idx[1];
    if (is(arg, "swaplist") && idx[0] == 1 && (i == 1 || i == 2)) i = 3 - i;
    /* "greedy": a count that grows with the room given (weft kept doubling
     * it until the host ran out, then said only "out of host memory"). */
    if (is(arg, "greedy") && idx[0] == 1 && i == 0 && flow == 0) return max + 1;
    if (is(arg, "unwritten") && idx[0] == 1 && i == 0 && flow == 0)
        return readers_of(arg, idx[0], i, to, max) + 1;
    return flow == 0 ? readers_of(arg, idx[0], i, to, max) : 0;
}

/* Every index of this rank's tiles; the faulty one leaves out odd ones. */
static void local_step(const int *idx, int dim, int rank, int *lo, int *hi, int *step,
                       const void *arg)
{
    (void)idx;
    const graph_t *g = arg;
    *lo = 0;
    *hi = dim == 0 ? nsteps - 1 : g->n - 1;
    *step = 1;
    /* "rank": every index, so that the rank function's fault is the one
     * found (its tasks kept where the arguments do not place them). */
    if (dim == 1 && !is(g, "rank") && !is(g, "away") && !is(g, "datamap")) {
        *lo = rank;
        *step = g->nranks;
        if (is(g, "local_range") && g->nranks > 1 && rank == 1) *step = 2 * g->nranks;
    }
}

/* "graphs": rank 1 passes a graph whose update class has another name. */
/* "devstep": the steps run on the emulated device only, so that a device
 * fault aimed at the N-th step lands whatever the scheduler's load says
 * (with a host body too, rank 1 ran a single step on its device 1 run in
 * ~600 and the rule never fired). */
static const weft_task_class_t step_class_dev = {.name = "step",
                                                 .body = {[WEFT_DEV_EMU] = body_step}};
static const weft_task_class_t step_class_renamed = {.name = "step_renamed",
                                                     .body = {[WEFT_DEV_CPU] = body_step}};

static const weft_ptg_class_t classes[] = {
    [C_INIT] = {&init_class, 1, range_init, rank_init, args_init, prod_init, cons_init, NULL},
    [C_STEP] = {&step_class, 2, range_step, rank_step, args_step, prod_step, cons_step, local_step},
};

/* The serial recurrence; 0 when this rank's tiles hold it. */
static int check(const graph_t *g, double **mem, int me)
{
    double *ref_x = malloc(sizeof(double) * (size_t)(g->n * tile_b));
    double *old = malloc(sizeof(double) * (size_t)(g->n * tile_b));
    for (int i = 0; i < g->n; i++)
        for (int k = 0; k < tile_b; k++) ref_x[i * tile_b + k] = i + 1 + 0.001 * k;
    for (int s = 0; s < nsteps; s++) {
        memcpy(old, ref_x, sizeof(double) * (size_t)(g->n * tile_b));
        for (int i = 0; i < nsteps_i(g); i++)
            for (int k = 0; k < tile_b; k++)
                ref_x[i * tile_b + k] += 0.5 * old[right(g, i) * tile_b + k];
    }
    int bad = 0;
    for (int i = 0; i < g->n; i++)
        if (owner(g, i) == me)
            for (int k = 0; k < tile_b; k++) bad += mem[i][k] != ref_x[i * tile_b + k];
    free(ref_x);
    free(old);
    return bad;
}

/* "devahead": steps on device 1 only, each rank's own tiles homed there,
 * tiles of 512 doubles, 40 steps; run with copies slowed and prefetch
 * ahead on. A graph numbers its tasks class by class and its transfers
 * last, so a step's number came before that of the RECV landing the
 * version it reads: the copy ahead took the version before it for final,
 * the received tile landed in that copy while the prefetch still wrote it,
 * and the older bytes, landing last, stayed labelled new (1024 wrong
 * values in most rounds). The graph runs DEVAHEAD_ROUNDS times, in
 * a taskpool each (INIT rewrites every tile), so that it fails almost
 * surely; each round is checked. */
#define DEVAHEAD_ROUNDS 5

static int devahead_rounds(weft_context_t *ctx, const graph_t *g, double **mem,
                           const weft_ptg_t *graph)
{
    int status = 0;
    /* Every round on every rank, whatever one found: the ranks' graphs
     * stay in step. */
    for (int r = 1; r < DEVAHEAD_ROUNDS; r++) {
        weft_taskpool_t *tp = weft_taskpool_new(ctx, "ptg");
        int rc = weft_ptg_insert(tp, graph);
        int wrc = weft_taskpool_wait(tp);
        weft_taskpool_free(tp);
        int bad = rc == WEFT_SUCCESS && wrc == WEFT_SUCCESS ? check(g, mem, g->me) : 0;
        if (rc == WEFT_SUCCESS && wrc == WEFT_SUCCESS && !bad) continue;
        printf("test_ptg rank %d: devahead round %d FAILED: insert %d, wait %d, %d wrong values\n",
               g->me, r, rc, wrc, bad);
        status = 1;
    }
    return status;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    int me = weft_rank(ctx);
    graph_t g = {
        .n = 7, .nranks = weft_nranks(ctx), .me = me, .variant = argc > 1 ? argv[1] : "ok"};
    if (g.nranks > g.n) g.n = 2 * g.nranks + 1;
    int devahead = is(&g, "devahead");
    if (devahead) {
        tile_b = 512;
        nsteps = 40;
    }
    g.x = calloc((size_t)g.n, sizeof *g.x);
    double **mem = calloc((size_t)g.n, sizeof *mem);
    for (int i = 0; i < g.n; i++) {
        mem[i] = owner(&g, i) == me ? calloc(tile_b, sizeof(double)) : NULL;
        g.x[i] = weft_data_register(ctx, WEFT_DOUBLE, mem[i], tile_b, 1, tile_b, owner(&g, i));
        if (devahead && mem[i] && weft_ndevices(ctx) > 0 &&
            weft_data_set_device(g.x[i], 1) != WEFT_SUCCESS)
            return 1;
    }
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "ptg");
    weft_ptg_class_t mine[2] = {classes[0], classes[1]};
    if (fwd(&g)) {
        mine[C_INIT].task = &read_class;
        for (int i = 0; i < g.n; i++)
            for (int k = 0; mem[i] && k < tile_b; k++) mem[i][k] = i + 1 + 0.001 * k;
    }
    if (is(&g, "graphs") && me == 1) mine[C_STEP].task = &step_class_renamed;
    if (is(&g, "devstep") || devahead) mine[C_STEP].task = &step_class_dev;
    static const weft_task_class_t bodiless = {.name = "step"};
    if (is(&g, "nobody")) mine[C_STEP].task = &bodiless;
    weft_ptg_t graph = {.classes = is(&g, "noclasses") ? NULL : mine,
                        .nclasses = is(&g, "bounds") ? 1 : 2,
                        .arg = &g};
    int skip = is(&g, "outofstep") && me == 1;
    int status = devahead ? devahead_rounds(ctx, &g, mem, &graph) : 0;
    int rc = skip ? WEFT_ERR_MISMATCH : weft_ptg_insert(tp, &graph);
    int wrc = weft_taskpool_wait(tp);
    int64_t ran = weft_taskpool_ntasks_run(tp);
    int refused_here = is(&g, "periodic") && g.nranks == 1;
    if ((is(&g, "ok") || is(&g, "devstep") || devahead || is(&g, "sim") || is(&g, "periodic") ||
         fwd(&g)) &&
        !refused_here) {
        int bad =
            rc == WEFT_SUCCESS && wrc == WEFT_SUCCESS && !is(&g, "sim") ? check(&g, mem, me) : 0;
        if (rc != WEFT_SUCCESS || wrc != WEFT_SUCCESS || bad) {
            printf("test_ptg rank %d: %s FAILED: insert %d, wait %d, %d wrong values\n", me,
                   g.variant, rc, wrc, bad);
            status = 1;
        } else {
            printf("test_ptg rank %d: %s ok (%lld tasks run here)\n", me, g.variant,
                   (long long)ran);
        }
    } else if (is(&g, "outofstep")) {
        status = rc == WEFT_ERR_MISMATCH && wrc == WEFT_ERR_MISMATCH && ran == 0 ? 2 : 1;
    } else if (rc == WEFT_ERR_INVALID && wrc == WEFT_SUCCESS && ran == 0) {
        /* A refused graph leaves the taskpool usable. */
        printf("test_ptg rank %d: %s refused\n", me, g.variant);
    } else {
        printf("test_ptg rank %d: %s NOT refused: insert %d, wait %d, %lld tasks run\n", me,
               g.variant, rc, wrc, (long long)ran);
        status = 1;
    }
    fflush(stdout);
    weft_taskpool_free(tp);
    for (int i = 0; i < g.n; i++) weft_data_release(g.x[i]);
    int frc = weft_fini(ctx);
    if (is(&g, "outofstep")) {
        /* Every rank's fini returns the disagreement, wherever it found it. */
        if (status == 2 && frc == WEFT_ERR_MISMATCH) {
            printf("test_ptg rank %d: outofstep refused\n", me);
            status = 0;
        } else {
            printf("test_ptg rank %d: outofstep NOT refused: insert %d, wait %d, fini %d, "
                   "%lld tasks run\n",
                   me, rc, wrc, frc, (long long)ran);
            status = 1;
        }
    } else if (frc != WEFT_SUCCESS) {
        status = 1;
    }
    for (int i = 0; i < g.n; i++) free(mem[i]);
    free(mem);
    free(g.x);
    return status;
}
