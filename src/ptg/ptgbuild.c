/* weft_ptg_insert: enumerate the index spaces, keep this rank's tasks, let
 * ptgflow.c connect them, agree with the other ranks that every rank's
 * part is sound, then release (or, on any rank's failure, drop) the
 * tasks. docs/PTG.md. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "context/coll.h"
#include "ptg/ptg.h"
#include "stf/agree.h"
#include "stf/insert.h"
#include "stf/record.h"
#include "stf/remote.h"
#include "stf/seqcheck.h"
#include "stf/taskrun.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/inbody.h"
#include "util/log.h"
#include "util/tname.h"

_Static_assert(WEFT_TNAME_MAX_IDX == WEFT_PTG_MAX_DIMS, "a task keeps every index of a graph");

/* The checks insertion makes on a task's data, less the STF ones. */
static int check_data(const weft_ptg_build_t *b, const weft_ptg_ref_t *r, const weft_task_t *w)
{
    for (int i = 0; i < w->nflows; i++) {
        const weft_data_t *d = w->flow[i].data;
        if (w->flow[i].mode & WEFT_REDUX)
            return weft_ptg__fail(b, r, "flow %d is WEFT_REDUX, which a graph does not take", i);
        if (d->ctx != b->ctx)
            return weft_ptg__fail(b, r, "data %llu belongs to another weft context",
                                  (unsigned long long)d->key);
        if (d->host_access)
            return weft_ptg__fail(b, r,
                                  "data %llu is acquired by the host: release it before "
                                  "weft_ptg_insert",
                                  (unsigned long long)d->key);
        /* tp has no task since its wait: a busy data is another's. */
        const char *busy = weft_insert_busy_pool_name(d);
        if (busy)
            return weft_ptg__fail(b, r,
                                  "data %llu is used by taskpool \"%s\", which was not waited "
                                  "for: a graph's tasks are ordered among themselves only; "
                                  "call weft_taskpool_wait on it first",
                                  (unsigned long long)d->key, busy);
    }
    return WEFT_SUCCESS;
}

/* One index point: kept when this rank runs it. */
static int visit(weft_ptg_build_t *b, int cls, const int *idx)
{
    b->walked++;
    weft_ptg_ref_t r = {.cls = cls, .flow = -1};
    memcpy(r.idx, idx, sizeof r.idx);
    int rank = weft_ptg__rank(b, &r);
    if (rank < 0) return WEFT_ERR_INVALID;
    if (rank != b->me) return WEFT_SUCCESS;
    weft_task_t w;
    int exec, rc = weft_ptg__parse(b, &r, &w, &exec);
    if (rc == WEFT_SUCCESS) rc = check_data(b, &r, &w);
    if (rc != WEFT_SUCCESS) return rc;
    if (b->ctx->nranks > 1 && exec != rank)
        return weft_ptg__fail(b, &r,
                              "its rank function gives rank %d, but its arguments place it on "
                              "rank %d",
                              rank, exec);
    if (weft_ptgmap_get(&b->tasks, &r) != SIZE_MAX)
        return weft_ptg__fail(b, &r, "its index space gives it twice");
    weft_task_t *t = weft_insert_keep(b->tp, &w);
    if (!t) return WEFT_ERR_NOMEM;
    /* Every line about it names it by these, not by a number of the build. */
    t->nidx = b->g->classes[cls].ndims;
    memcpy(t->idx, idx, sizeof t->idx);
    if (weft_ptgmap_put(&b->tasks, &r, b->local.n) != WEFT_SUCCESS ||
        weft_vec_reserve(&b->selfs, b->local.n + 1) != WEFT_SUCCESS ||
        weft_vec_push(&b->local, &t) != WEFT_SUCCESS) {
        weft_task_unref(t);
        return WEFT_ERR_NOMEM;
    }
    r.flow = 0;
    weft_ptg_ref_t *self = weft_vec_at(&b->selfs, b->selfs.n++);
    *self = r;
    for (int i = 0; i < t->nflows; i++)
        if (!weft_stf_rec_touch(b->tp, t->flow[i].data)) return WEFT_ERR_NOMEM;
    return WEFT_SUCCESS;
}

/* Dimension d's indices for this rank: the local range when the class
 * gives one (clipped to the range), else the whole range. In long long:
 * a progression's first index inside the range may lie past INT_MAX. */
static void dim_bounds(const weft_ptg_build_t *b, const weft_ptg_class_t *k, const int *idx, int d,
                       int *lo, int *hi, int *step)
{
    k->range(idx, d, lo, hi, b->g->arg);
    *step = 1;
    if (!k->local_range) return;
    int llo, lhi, lstep = 1;
    k->local_range(idx, d, b->me, &llo, &lhi, &lstep, b->g->arg);
    if (lstep < 1) lstep = 1;
    /* Keep the progression, clipped to range's bounds. */
    long long first = llo;
    if (first < *lo) first += ((long long)*lo - llo + lstep - 1) / lstep * lstep;
    if (lhi < *hi) *hi = lhi;
    if (first > *hi) {
        *lo = 1, *hi = 0; /* nothing of this rank's progression in the range */
        return;
    }
    *lo = (int)first;
    *step = lstep;
}

/* The nested loops of a class's index space, each range asked with the
 * outer indices set. The loop counters are long long: a range that ends
 * at INT_MAX (or a step that passes it) ends its loop instead of
 * wrapping to negative indices forever. */
static int enumerate(weft_ptg_build_t *b, int cls)
{
    const weft_ptg_class_t *k = &b->g->classes[cls];
    int idx[WEFT_PTG_MAX_DIMS] = {0}, hi[WEFT_PTG_MAX_DIMS], step[WEFT_PTG_MAX_DIMS], lo;
    long long at[WEFT_PTG_MAX_DIMS];
    int d = 0;
    dim_bounds(b, k, idx, 0, &lo, &hi[0], &step[0]);
    at[0] = lo;
    for (;;) {
        if (at[d] > hi[d]) {
            if (d == 0) return WEFT_SUCCESS;
            idx[d] = 0;
            d--;
            at[d] += step[d];
            continue;
        }
        idx[d] = (int)at[d];
        if (d < k->ndims - 1) {
            d++;
            dim_bounds(b, k, idx, d, &lo, &hi[d], &step[d]);
            at[d] = lo;
            continue;
        }
        int rc = visit(b, cls, idx);
        if (rc != WEFT_SUCCESS) return rc;
        at[d] += step[d];
    }
}

int weft_ptg__enumerated_by(const weft_ptg_build_t *b, const weft_ptg_ref_t *r, int rank)
{
    const weft_ptg_class_t *k = &b->g->classes[r->cls];
    if (!k->local_range) return 1;
    for (int d = 0; d < k->ndims; d++) {
        int lo, hi, step = 1;
        k->local_range(r->idx, d, rank, &lo, &hi, &step, b->g->arg);
        if (step < 1) step = 1;
        if (r->idx[d] < lo || r->idx[d] > hi || ((long long)r->idx[d] - lo) % step != 0) {
            weft_ptg__fail(b, r,
                           "runs on rank %d, but its class's local_range for that rank leaves "
                           "out index %d = %d (it gives %d..%d by %d): that rank would never "
                           "make it",
                           rank, d, r->idx[d], lo, hi, step);
            return 0;
        }
    }
    return 1;
}

/* The graph's shape (classes, their functions); logged when `log`. */
static int check_graph(const weft_ptg_t *g, int log)
{
    if (!g || !g->classes || g->nclasses <= 0) {
        if (log)
            weft_error("weft_ptg_insert: argument 2 is %s: pass a graph with at least one class",
                       !g            ? "NULL"
                       : !g->classes ? "a graph whose classes are NULL"
                                     : "a graph without classes");
        return WEFT_ERR_INVALID;
    }
    for (int c = 0; c < g->nclasses; c++) {
        const weft_ptg_class_t *k = &g->classes[c];
        const char *wrong = !k->task         ? "its task class is NULL"
                            : !k->task->name ? "its task class has no name"
                            : !k->range      ? "its range function is NULL"
                            : !k->rank       ? "its rank function is NULL"
                            : !k->args       ? "its args function is NULL"
                            : !k->producer   ? "its producer function is NULL"
                            : !k->consumers  ? "its consumers function is NULL"
                            : k->ndims < 1 || k->ndims > WEFT_PTG_MAX_DIMS
                                ? "its ndims is out of range"
                                : NULL;
        if (wrong) {
            if (log)
                weft_error("weft_ptg_insert: class #%d (%s): %s (ndims %d; it takes 1..%d, a named "
                           "task class and every function: range, rank, args, producer, "
                           "consumers)",
                           c, k->task && k->task->name ? k->task->name : "no name", wrong, k->ndims,
                           WEFT_PTG_MAX_DIMS);
            return WEFT_ERR_INVALID;
        }
        if (!weft_insert_class_has_body(k->task)) {
            /* Every rank refuses it: none could run the class's tasks. */
            if (log)
                weft_error("weft_ptg_insert: class #%d is task class %s, which has no body: give "
                           "it a body for at least one device type",
                           c, k->task->name);
            return WEFT_ERR_INVALID;
        }
    }
    return WEFT_SUCCESS;
}

static int build(weft_ptg_build_t *b)
{
    for (int c = 0; c < b->g->nclasses; c++) {
        int rc = enumerate(b, c);
        if (rc != WEFT_SUCCESS) return rc;
    }
    for (size_t j = 0; j < b->local.n; j++) {
        weft_task_t *t = *(weft_task_t **)weft_vec_at(&b->local, j);
        const weft_ptg_ref_t *self = weft_vec_at(&b->selfs, j);
        for (int i = 0; i < t->nflows; i++) {
            int rc = weft_ptg__flow(b, self, t, i);
            if (rc != WEFT_SUCCESS) return rc;
        }
    }
    return weft_ptg__finish(b);
}

/* What every rank must have passed alike (ptghash.c): a size or inner
 * range that differs between ranks would otherwise leave tasks that one
 * rank counts on and the rank that runs them never makes. Only for a
 * graph check_graph accepts: a refused one may have no classes or
 * functions (its status is what the ranks compare then). */
static uint64_t graph_hash(weft_ptg_build_t *b)
{
    if (check_graph(b->g, 0) != WEFT_SUCCESS) return WEFT_HASH_INIT;
    return weft_ptg__graph_hash(b->g, b->points, b->ids);
}

/* Each task of the graph is made by one rank: the ranks' tasks of each
 * class, summed, must be its index space's count, and their identities'
 * sum the index space's. A local_range that leaves out tasks of the rank
 * that runs them is found here even where no flow names them (those tasks
 * were made by no rank, silently), and a rank function that differs
 * between ranks where two ranks made one task (and, by the identities,
 * where one task was made twice and another never). In the same
 * allreduce, the transfers as both ends see them (ptgends.c). Every rank
 * sees the same sums, so every rank refuses alike. Not in simulation (one
 * rank's part only), nor for a class past the limit of the ranges
 * compared (its count is unknown). Collective. */
static int check_made(weft_ptg_build_t *b)
{
    if (b->ctx->sim) return WEFT_SUCCESS;
    int nc = b->g->nclasses, nid = WEFT_PTG_MOMENTS * nc;
    long long *made = b->points + nc, *limbs = made + nc, *idl = limbs + WEFT_PTG_LIMBS;
    uint64_t *mine = b->ids + nid;
    for (size_t j = 0; j < b->selfs.n; j++) {
        const weft_ptg_ref_t *r = weft_vec_at(&b->selfs, j);
        uint64_t id[WEFT_PTG_MOMENTS];
        made[r->cls]++;
        weft_ptg__task_ids(r->cls, b->g->classes[r->cls].ndims, r->idx, id);
        for (int m = 0; m < WEFT_PTG_MOMENTS; m++) mine[m * nc + r->cls] += id[m];
    }
    weft_ptg__to_limbs(b->ends_sum, limbs);
    for (int k = 0; k < nid; k++) weft_ptg__to_limbs(mine[k], idl + (size_t)k * WEFT_PTG_LIMBS);
    /* A failed sum leaves this rank's own counts: refused, not compared. */
    if (b->ctx->nranks > 1 &&
        weft_coll_check(b->ctx,
                        MPI_Allreduce(MPI_IN_PLACE, made, nc + WEFT_PTG_LIMBS * (1 + nid),
                                      MPI_LONG_LONG, MPI_SUM, b->ctx->comm),
                        "weft_ptg_insert: counting the tasks the ranks made") != WEFT_SUCCESS)
        return WEFT_ERR_MPI;
    /* Before the counts: the two views of a transfer say which answer
     * differs, a count only that one does. Every rank saw the same sum. */
    int rc = WEFT_SUCCESS;
    if (weft_ptg__limbs_total(limbs) != 0) {
        weft_ptg__ends_report(b);
        /* A collective of the report failed: the graph is refused as when
         * the sum itself failed, the taskpool no longer usable. */
        if (b->ctx->diverged) return WEFT_ERR_MPI;
        rc = WEFT_ERR_INVALID;
    }
    for (int c = 0; c < nc; c++) {
        if (b->points[c] < 0) continue;
        const char *name = b->g->classes[c].task->name;
        if (made[c] != b->points[c]) {
            weft_error("weft_ptg_insert: class %s: the ranks made %lld of the %lld tasks of its "
                       "index space: %s; no task of the graph runs",
                       name, made[c], b->points[c],
                       made[c] < b->points[c]
                           ? "a local_range leaves out indices of the rank that runs them (it "
                             "may give more than a rank's tasks, never fewer), or its rank "
                             "function answers differently on different ranks"
                           : "its rank function answers differently on different ranks");
            return WEFT_ERR_INVALID;
        }
        int same = 1;
        for (int m = 0; m < WEFT_PTG_MOMENTS; m++)
            same &= weft_ptg__limbs_total(idl + (size_t)(m * nc + c) * WEFT_PTG_LIMBS) ==
                    b->ids[m * nc + c];
        if (!same) {
            weft_error("weft_ptg_insert: class %s: the ranks made its %lld tasks, but not each "
                       "once: some were made by two ranks and others by none, so its rank "
                       "function answers differently on different ranks; no task of the graph "
                       "runs",
                       name, made[c]);
            return WEFT_ERR_INVALID;
        }
    }
    return rc;
}

/* Every rank learns whether every rank's part is sound before any task
 * of the graph runs: a rank that found a fault would otherwise leave its
 * peers waiting for transfers that never come. */
static int agree(weft_ptg_build_t *b, int rc)
{
    weft_agree_vote_t v = {.point = WEFT_AGREE_PTG,
                           .ordinal = b->tp->number,
                           .status = rc,
                           .task_hash = graph_hash(b),
                           .ntasks = b->g ? b->g->nclasses : 0};
    snprintf(v.where, sizeof v.where, "weft_ptg_insert into taskpool '%.40s'", b->tp->name);
    weft_agree_outcome_t out = {0};
    int arc = weft_agree(b->ctx, &v, &out);
    if (arc == WEFT_ERR_MPI || arc == WEFT_ERR_MISMATCH) {
        /* Out of step (or unknown): no collective is safe any more, and
         * weft_fini returns it on this rank as on the ranks that found it
         * in a wait. */
        weft_taskrun_diverge(b->ctx, arc);
        if (arc == WEFT_ERR_MISMATCH) b->tp->mismatch = 1;
        return arc;
    }
    if (out.failed_rank >= 0 && out.failed_rank != b->me)
        weft_error("weft_ptg_insert: rank %d refused the graph (%s): no task of it runs",
                   out.failed_rank, out.failed_msg);
    /* Named on every rank even when a rank also failed: differing ranges
     * are often why a rank found a task missing. Every rank saw the same
     * outcome, so every rank makes the report's collectives. */
    if (!out.same_tasks) {
        weft_error("weft_ptg_insert: the ranks passed different graphs (class names, "
                   "dimensions or index ranges differ): no task of it runs");
        weft_ptg__graph_report(b->ctx, b->g, check_graph(b->g, 0) == WEFT_SUCCESS);
        if (b->ctx->diverged) return WEFT_ERR_MPI; /* a collective of the report failed */
        if (arc == WEFT_SUCCESS) arc = WEFT_ERR_INVALID;
    }
    return arc;
}

static void for_each_task(weft_ptg_build_t *b, void (*fn)(weft_ptg_build_t *, weft_task_t *))
{
    for (size_t j = 0; j < b->local.n; j++) fn(b, *(weft_task_t **)weft_vec_at(&b->local, j));
    for (size_t j = 0; j < b->actions.n; j++) fn(b, *(weft_task_t **)weft_vec_at(&b->actions, j));
}

static void drop(weft_ptg_build_t *b, weft_task_t *t)
{
    b->nsends += t->kind == WEFT_TASK_SEND;
    b->nrecvs += t->kind == WEFT_TASK_RECV;
    if (t->kind == WEFT_TASK_RECV) weft_comm_arrival_leave(t->action);
    weft_task_unref(t);
}

/* Numbered and counted pending only now: a dropped graph leaves no use of
 * its data behind (device eviction reads them). */
static void number(weft_ptg_build_t *b, weft_task_t *t)
{
    if (weft_insert_number(b->tp, t) != WEFT_SUCCESS)
        weft_warn("weft_ptg_insert: out of memory noting a use of a tile (device eviction "
                  "may pick it early)");
}

/* The graph's data are busy (weft_insert_busy_pool) until tp's wait. */
static void mark_busy(weft_ptg_build_t *b, weft_task_t *t)
{
    for (int i = 0; i < t->nflows; i++) weft_stf_rec(t->flow[i].data)->graph = b->tp;
}

static void release(weft_ptg_build_t *b, weft_task_t *t)
{
    if (weft_task_insert_done(t)) b->ctx->ready(b->ctx, t);
}

static void build_init(weft_ptg_build_t *b, weft_taskpool_t *tp, const weft_ptg_t *g)
{
    *b = (weft_ptg_build_t){.tp = tp, .ctx = tp->ctx, .g = g, .me = tp->ctx->rank};
    weft_ptgmap_init(&b->tasks);
    weft_ptgmap_init(&b->vers);
    weft_ptgmap_init(&b->expect);
    weft_ptgmap_init(&b->xfers);
    weft_vec_init(&b->local, sizeof(weft_task_t *), 64);
    weft_vec_init(&b->selfs, sizeof(weft_ptg_ref_t), 64);
    weft_vec_init(&b->actions, sizeof(weft_task_t *), 64);
    weft_vec_init(&b->vervec, sizeof(weft_ptg_ver_t), 64);
    weft_vec_init(&b->links, sizeof(weft_ptg_link_t), 64);
    weft_vec_init(&b->refs, sizeof(weft_ptg_ref_t), 16);
    weft_vec_init(&b->ends, sizeof(weft_ptg_end_t), 64);
    weft_vec_init(&b->fwd_sends, sizeof(weft_ptg_fwd_send_t), 16);
}

/* The builder's own memory, counted in the metadata peak (docs/SCALE.md). */
static long long build_bytes(const weft_ptg_build_t *b)
{
    const weft_vec_t *v[] = {&b->local, &b->selfs, &b->actions, &b->vervec,
                             &b->links, &b->refs,  &b->ends,    &b->fwd_sends};
    size_t bytes = weft_ptgmap_bytes(&b->tasks) + weft_ptgmap_bytes(&b->vers) +
                   weft_ptgmap_bytes(&b->expect) + weft_ptgmap_bytes(&b->xfers);
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) bytes += v[i]->cap * v[i]->elem;
    return (long long)bytes;
}

static void build_fini(weft_ptg_build_t *b)
{
    weft_ptgmap_fini(&b->tasks);
    weft_ptgmap_fini(&b->vers);
    weft_ptgmap_fini(&b->expect);
    weft_ptgmap_fini(&b->xfers);
    free(b->points);
    free(b->ids);
    weft_vec_t *v[] = {&b->local, &b->selfs, &b->actions, &b->vervec,
                       &b->links, &b->refs,  &b->ends,    &b->fwd_sends};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) weft_vec_fini(v[i]);
}

/* The graph's shape checked, then this rank's part built, with room for
 * the counts and identities check_made compares. */
static int check_and_build(weft_ptg_build_t *b)
{
    int rc = check_graph(b->g, 1);
    if (rc != WEFT_SUCCESS) return rc;
    size_t nc = (size_t)b->g->nclasses;
    b->points = calloc(2 * nc + WEFT_PTG_LIMBS * (1 + WEFT_PTG_MOMENTS * nc), sizeof *b->points);
    /* The index space's, then this rank's. */
    b->ids = calloc(2 * WEFT_PTG_MOMENTS * nc, sizeof *b->ids);
    if (b->points && b->ids) return build(b);
    /* Both or neither: the agreement's graph hash fills ids beside points. */
    free(b->points);
    free(b->ids);
    b->points = NULL;
    b->ids = NULL;
    return WEFT_ERR_NOMEM;
}

/* The refusals made before any of the graph is built: a diverged
 * context, a sequence refused on some ranks only, a wave with tasks. */
static int insert_refused(weft_taskpool_t *tp)
{
    if (tp->ctx->diverged) {
        weft_error("weft_ptg_insert: %s", weft_context_diverged_why(tp->ctx));
        return WEFT_ERR_MISMATCH;
    }
    /* Insertions refused on some ranks only, or creations, would part the
     * ranks below (one refusing the graph, another building it): they are
     * named first, on every rank. */
    if (tp->ctx->nranks > 1) {
        int rc = weft_seqcheck_graph(tp);
        if (rc != WEFT_SUCCESS) return rc;
    }
    /* A graph's tasks are ordered among themselves only: it takes a wave of
     * the taskpool (between two waits) of its own. The ranks' sequences
     * agree, so every rank refuses alike. */
    if (tp->t_first > 0) {
        weft_error("weft_ptg_insert: taskpool %s has %s since its last wait: a graph takes a "
                   "wave of its own (call weft_taskpool_wait first)",
                   tp->name, tp->ptg ? "a graph" : "tasks inserted");
        return WEFT_ERR_INVALID;
    }
    return WEFT_SUCCESS;
}

/* The graph's functions run here, on the main thread inside
 * weft_ptg_insert: a call from them into weft (a wait, an insertion, a
 * free, weft_fini) reentered it and hung or crashed; refused, it fails the
 * graph on every rank through the agreement. */
static int build_guarded(weft_ptg_build_t *b)
{
    atomic_int misuse = 0;
    weft_inbody_t saved;
    weft_inbody_enter_callback(&saved, &misuse, "a function of the graph (weft_ptg_class_t)", 0, 0,
                               "the graph's insertion");
    int rc = check_and_build(b);
    weft_inbody_leave(&saved);
    if (atomic_load(&misuse) && rc == WEFT_SUCCESS) rc = WEFT_ERR_INVALID;
    if (rc == WEFT_ERR_NOMEM) weft_error("weft_ptg_insert: out of host memory building the graph");
    return rc;
}

/* A graph agreed on and walked: its tasks join the taskpool's wave (which
 * started at t0, cpu0) and are released. */
static void commit(weft_ptg_build_t *b, double t0, double cpu0)
{
    weft_taskpool_t *tp = b->tp;
    tp->t_first = t0;
    tp->cpu_first = cpu0;
    tp->ptg = 1;
    tp->ctx->kept += (long long)b->local.n;
    tp->ninserted_local += (long)b->local.n;
    for_each_task(b, number);
    for (size_t j = 0; j < b->local.n; j++)
        mark_busy(b, *(weft_task_t **)weft_vec_at(&b->local, j));
    atomic_fetch_add_explicit(&tp->pending, (long)(b->local.n + b->actions.n),
                              memory_order_relaxed);
    long long bytes = build_bytes(b);
    weft_meta_add(&tp->ctx->meta, WEFT_META_RECORDS, bytes);
    for_each_task(b, release);
    weft_meta_add(&tp->ctx->meta, WEFT_META_RECORDS, -bytes);
}

int weft_ptg_insert(weft_taskpool_t *tp, const weft_ptg_t *g)
{
    if (!weft_handle_check_main(tp, WEFT_HANDLE_TASKPOOL, "weft_ptg_insert", 1))
        return WEFT_ERR_INVALID;
    int rc = insert_refused(tp);
    if (rc != WEFT_SUCCESS) return rc;
    double t0 = weft_clock_s(), cpu0 = weft_clock_thread_s();
    weft_ptg_build_t b;
    build_init(&b, tp, g);
    /* A bad graph still goes to the agreement: the other ranks are there. */
    rc = build_guarded(&b);
    tp->ctx->ptg_build_s += weft_clock_thread_s() - cpu0;
    rc = agree(&b, rc);
    /* A refused graph wrote nothing (stf/newread.c). */
    if (rc == WEFT_SUCCESS && tp->ctx->sim) tp->ctx->sim_graph_keys = tp->ctx->next_key;
    if (rc == WEFT_SUCCESS) rc = check_made(&b);
    if (rc == WEFT_SUCCESS) rc = weft_ptg__dry_run(&b);
    tp->ctx->walked += b.walked;
    if (rc != WEFT_SUCCESS) {
        /* Nothing of it ran nor counts: the transfers it had planned go too.
         * Its build was insertion work all the same (the simulation's line
         * gave a graph build longer than the insertion it is part of). */
        tp->ctx->insert_s += weft_clock_thread_s() - cpu0;
        for_each_task(&b, drop);
        tp->ctx->sends -= b.nsends;
        tp->ctx->recvs -= b.nrecvs;
    } else {
        commit(&b, t0, cpu0);
    }
    build_fini(&b);
    return rc;
}
