/* Reductions by rewriting (stf/redux.h): partial results per rank and lane,
 * their init tasks, and the combine tasks that fold them into the data on
 * its owner. */
#include "stf/redux.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "params/params.h"
#include "stf/insert.h"
#include "stf/newread.h"
#include "stf/record.h"
#include "stf/remote.h"
#include "stf/seqcheck.h"
#include "util/handle.h"
#include "util/fault.h"
#include "util/log.h"

/* The reduction of one data; partials indexed [rank * lanes + lane]. */
typedef struct weft_redux {
    const weft_task_class_t *init, *combine;
    int lanes, nparts;
    weft_data_t **part;  /* NULL until first used */
    unsigned char *live; /* initialised and not yet combined */
    int *next;           /* per rank: the lane its next task takes */
    weft_taskpool_t *tp; /* taskpool of the pending partials, NULL: none */
} weft_redux_t;

void weft_redux_free(weft_redux_t *r)
{
    if (!r) return;
    for (int i = 0; r->part && i < r->nparts; i++)
        if (r->part[i]) weft_data__unref(r->part[i]);
    free(r->live);
    free(r->next);
    free(r->part);
    free(r);
}

static weft_redux_t *redux_of(const weft_data_t *d)
{
    const weft_stf_rec_t *rec = weft_stf_rec(d);
    return rec ? rec->redux : NULL;
}

static int has_cpu_body(const weft_task_class_t *c)
{
    return c && c->name && c->body[WEFT_DEV_CPU];
}

/* arg: the data's key, its lanes (redux_lanes when the reduction was set). */
static void describe_reduction(const weft_seqcall_kind_t *kind, const int64_t *arg, char *text,
                               size_t n)
{
    snprintf(text, n, "%s(data %lld) with redux_lanes=%d", kind->name, (long long)arg[0],
             (int)arg[1]);
}

static const weft_seqcall_kind_t seq_reduction = {"weft_data_set_reduction", describe_reduction};

int weft_data_set_reduction(weft_data_t *d, const weft_task_class_t *init,
                            const weft_task_class_t *combine)
{
    if (!weft_handle_check_main(d, WEFT_HANDLE_DATA, "weft_data_set_reduction", 1))
        return WEFT_ERR_INVALID;
    if (!has_cpu_body(init) || !has_cpu_body(combine)) {
        weft_error("weft_data_set_reduction: data %llu: pass an init and a combine class, each "
                   "with a name and a CPU body",
                   (unsigned long long)d->key);
        return WEFT_ERR_INVALID;
    }
    weft_stf_rec_t *rec = weft_stf_rec_get(d);
    if (!rec) return WEFT_ERR_NOMEM;
    if (rec->redux && rec->redux->tp) {
        weft_error(
            "weft_data_set_reduction: data %llu has partial results pending in taskpool "
            "%s: call it before the data's first WEFT_REDUX task, or after that taskpool's wait",
            (unsigned long long)d->key, rec->redux->tp->name);
        return WEFT_ERR_INVALID;
    }
    weft_context_t *ctx = d->ctx;
    if (!rec->redux) {
        /* All of it or nothing: a half-built one (tables NULL) passed a
         * second call and crashed the first REDUX insertion. */
        weft_redux_t *r = calloc(1, sizeof *r);
        int lanes = (int)weft_params_int(ctx->params, "redux_lanes");
        size_t n = (size_t)ctx->nranks * (size_t)lanes;
        if (r) {
            r->lanes = lanes;
            r->nparts = (int)n;
            r->part = calloc(n, sizeof *r->part);
            r->live = calloc(n, 1);
            r->next = weft_fault_hit(ctx->fault, WEFT_FAULT_REDUX_ALLOC, NULL)
                          ? NULL
                          : calloc((size_t)ctx->nranks, sizeof *r->next);
        }
        if (!r || !r->part || !r->live || !r->next) {
            if (r) {
                free(r->part);
                free(r->live);
                free(r->next);
            }
            free(r);
            weft_error("weft_data_set_reduction: data %llu: no memory for its partial results",
                       (unsigned long long)d->key);
            return WEFT_ERR_NOMEM;
        }
        rec->redux = r;
        d->flags |= WEFT_DATA_REDUX;
        /* The lanes decide which partial tasks every rank inserts: a
         * redux_lanes set on some ranks only is named here, at the next
         * agreement, not by the partials it makes differ. */
        weft_seqcheck_call(ctx, &seq_reduction,
                           (int64_t[WEFT_SEQCALL_ARGS]){(int64_t)d->key, r->lanes});
    }
    weft_redux_t *r = rec->redux;
    r->init = init;
    r->combine = combine;
    return WEFT_SUCCESS;
}

/* arg: the data's key, rank, lane (described only to report a divergence). */
static void describe_partial(const weft_seqcall_kind_t *kind, const int64_t *arg, char *text,
                             size_t n)
{
    snprintf(text, n, "%s of data %lld (rank %d, lane %d)", kind->name, (long long)arg[0],
             (int)arg[1], (int)arg[2]);
}

static const weft_seqcall_kind_t seq_partial = {"partial", describe_partial};

/* A partial moves as its data does: by d's stage functions, so that a
 * body on a device sees the layout stage_in makes there and the combine
 * reads each partial in the host layout (without them a device's partial
 * was made and folded in the device layout: wrong values, no word).
 * Taken again at each use, since d's may be set between waits; written
 * only when they differ, then, with no task of the partial in flight. */
static void inherit_stage(weft_data_t *part, const weft_data_t *d)
{
    if (part->stage_in != d->stage_in || part->stage_out != d->stage_out ||
        part->stage_arg != d->stage_arg) {
        part->stage_in = d->stage_in;
        part->stage_out = d->stage_out;
        part->stage_arg = d->stage_arg;
    }
}

/* Partial `lane` of `rank` for d, made on first use (on every rank, in the
 * same order: the creation is part of the sequence the ranks compare). */
static weft_data_t *partial(weft_context_t *ctx, const weft_data_t *d, weft_redux_t *r, int rank,
                            int lane)
{
    weft_data_t **p = &r->part[rank * r->lanes + lane];
    if (!*p) {
        weft_seqcheck_call(ctx, &seq_partial,
                           (int64_t[WEFT_SEQCALL_ARGS]){(int64_t)d->key, rank, lane});
        *p = weft_data_make(ctx, d->type, d->rows, d->cols, rank);
        if (!*p) return NULL;
        (*p)->flags |= WEFT_DATA_NEW;
        (*p)->partial_of = d->key + 1;
    }
    inherit_stage(*p, d);
    return *p;
}

/* The init task of d's reduction on x (a partial, or d itself). The
 * combines and inits are weft's tasks: d may be released by now (the
 * tasks that reduce into it hold it until the wait that runs these). */
static int insert_init(weft_taskpool_t *tp, const weft_redux_t *r, weft_data_t *x)
{
    const weft_arg_t arg = weft_arg_data(WEFT_W | WEFT_AFFINITY, x);
    return weft_insert_by_weft(tp, r->init, &arg, 1);
}

/* d joins tp's pending data (retained until combined). */
static int note_pending(weft_taskpool_t *tp, weft_data_t *d, weft_redux_t *r)
{
    if (r->tp == tp) return WEFT_SUCCESS;
    if (weft_vec_push(&tp->redux, &d) != WEFT_SUCCESS) return WEFT_ERR_NOMEM;
    weft_data__retain(d);
    r->tp = tp;
    return WEFT_SUCCESS;
}

/* The partial a REDUX task of d on `rank` updates: the rank's next lane,
 * initialised by an init task when it is not live. */
static int take_partial(weft_taskpool_t *tp, weft_data_t *d, weft_redux_t *r, int rank,
                        weft_data_t **out)
{
    int lane = r->next[rank];
    r->next[rank] = (lane + 1) % r->lanes;
    weft_data_t *p = partial(tp->ctx, d, r, rank, lane);
    if (!p) return WEFT_ERR_NOMEM;
    int rc = note_pending(tp, d, r);
    if (rc == WEFT_SUCCESS && !r->live[rank * r->lanes + lane]) rc = insert_init(tp, r, p);
    if (rc != WEFT_SUCCESS) return rc;
    r->live[rank * r->lanes + lane] = 1;
    *out = p;
    return WEFT_SUCCESS;
}

/* Another flow of t that names the data of REDUX flow i, -1 when none:
 * flow i becomes a partial result, so a read or write of the same data in
 * the task would see neither the partials nor its own update. */
static int other_flow_of(const weft_task_t *t, int i)
{
    for (int j = 0; j < t->nflows; j++)
        if (j != i && t->flow[j].data == t->flow[i].data) return j;
    return -1;
}

int weft_redux_check_flows(const weft_task_t *t)
{
    for (int i = 0; i < t->nflows; i++) {
        int j = t->flow[i].mode == WEFT_REDUX ? other_flow_of(t, i) : -1;
        if (j < 0) continue;
        weft_error("insert %s: data %llu is data argument %d (WEFT_REDUX) and %d too: a task "
                   "that reduces into a data names it once, in no other mode",
                   t->cls->name, (unsigned long long)t->flow[i].data->key, i + 1, j + 1);
        return WEFT_ERR_INVALID;
    }
    return WEFT_SUCCESS;
}

int weft_redux_lower(weft_taskpool_t *tp, weft_task_t *t, int exec_rank)
{
    for (int i = 0; i < t->nflows; i++) {
        weft_flow_t *f = &t->flow[i];
        if (f->mode != WEFT_REDUX) continue;
        weft_data_t *d = f->data, *p = NULL;
        weft_redux_t *r = redux_of(d);
        unsigned long long key = (unsigned long long)d->key;
        if (!r || !r->part) {
            weft_error("insert %s: WEFT_REDUX on data %llu, which has no reduction: call "
                       "weft_data_set_reduction on it first",
                       t->cls->name, key);
            return WEFT_ERR_INVALID;
        }
        if (r->tp && r->tp != tp) {
            weft_error("insert %s: data %llu has partial results pending in taskpool %s: wait "
                       "for that taskpool first",
                       t->cls->name, key, r->tp->name);
            return WEFT_ERR_INVALID;
        }
        int rc = take_partial(tp, d, r, exec_rank, &p);
        if (rc != WEFT_SUCCESS) return rc;
        /* d belongs to tp until its wait combines the partials: a task of
         * another taskpool reading d before would miss them (insert.c). */
        d->open_wave = (uint32_t)tp->wave;
        /* A walked task holds no references: keep_walked takes them. */
        f->data = p;
        f->mode = WEFT_RW;
    }
    return WEFT_SUCCESS;
}

/* What the owner keeps for the init task of a NEW data it wrote from the
 * host (flush_data): those contents, untouched. */
static int keep_contents(weft_task_t *t)
{
    (void)t;
    return 0;
}

static const weft_task_class_t keep_class = {.name = "weft.redux_keep",
                                             .body = {[WEFT_DEV_CPU] = keep_contents}};

/* Whether d's reduction starts from the identity (an init task on d): a
 * NEW data without an initialiser that no task wrote. Decided alike on
 * every rank, from what every rank has (how d was made, the remote view,
 * stf/remote.c), never from this rank's copies or NEW flag: the owner's
 * host write of a NEW data is its local act (docs/SEMANTICS.md section
 * 1), and deciding from it made the owner skip the init task the other
 * ranks inserted. On one rank its own view is every rank's. */
static int starts_from_identity(const weft_data_t *d)
{
    if (d->flags & WEFT_DATA_INIT) return 0;
    if (d->ctx->nranks == 1) return weft_insert_never_written(d);
    return (d->flags & WEFT_DATA_MADE_NEW) && weft_remote_version(d) == 0;
}

/* The init task of d itself. A rank with contents of d (its owner, after
 * a host write, which cleared NEW there) keeps it as keep_class, so that
 * the partials fold into what the host wrote. */
static int insert_init_data(weft_taskpool_t *tp, const weft_redux_t *r, weft_data_t *d)
{
    if (weft_insert_never_written(d)) return insert_init(tp, r, d);
    const weft_arg_t arg = weft_arg_data(WEFT_W | WEFT_AFFINITY, d);
    return weft_insert_by_weft_kept_as(tp, r->init, &arg, 1, &keep_class);
}

static int combine(weft_taskpool_t *tp, const weft_redux_t *r, weft_data_t *dst, weft_data_t *src)
{
    const weft_arg_t args[] = {weft_arg_data(WEFT_RW | WEFT_AFFINITY, dst),
                               weft_arg_data(WEFT_R, src)};
    return weft_insert_by_weft(tp, r->combine, args, 2);
}

/* The live partials of `rank` fold into its first one, returned (NULL:
 * the rank has none). */
static int fold_rank(weft_taskpool_t *tp, weft_redux_t *r, int rank, weft_data_t **first)
{
    weft_data_t **p = &r->part[rank * r->lanes];
    unsigned char *live = &r->live[rank * r->lanes];
    int rc = WEFT_SUCCESS;
    *first = NULL;
    for (int l = 0; l < r->lanes && rc == WEFT_SUCCESS; l++) {
        if (!live[l]) continue;
        live[l] = 0;
        if (*first)
            rc = combine(tp, r, *first, p[l]);
        else
            *first = p[l];
    }
    return rc;
}

/* Each rank's live partials fold into its first one; those fold into one
 * of them, the owner's when it has one (then on d's owner, the R flows of
 * those combines sending the others there), which alone folds into d. So
 * the reduction reaches d whole or not at all: a contribution that failed
 * leaves d at its version from before the reduction, however many ranks
 * took part (folded into d rank by rank, d kept the ranks' sums before the
 * failed one's: a value that depended on the number of ranks). d's
 * contents before the reduction, when it has some (weft_data_set_init's,
 * the owner's host write, a task's), are what they fold into: every rank
 * inserts the same tasks. */
static int flush_data(weft_taskpool_t *tp, weft_data_t *d)
{
    weft_redux_t *r = redux_of(d);
    if (!r || r->tp != tp) return WEFT_SUCCESS;
    r->tp = NULL; /* first: the combine tasks below use d */
    int rc = WEFT_SUCCESS, nranks = tp->ctx->nranks;
    if (starts_from_identity(d)) rc = insert_init_data(tp, r, d);
    weft_data_t *all = NULL;
    for (int k = 0; k < nranks && rc == WEFT_SUCCESS; k++) {
        weft_data_t *mine;
        rc = fold_rank(tp, r, (d->owner_rank + k) % nranks, &mine);
        if (rc != WEFT_SUCCESS || !mine) continue;
        if (all)
            rc = combine(tp, r, all, mine);
        else
            all = mine;
    }
    if (all && rc == WEFT_SUCCESS) rc = combine(tp, r, d, all);
    return rc;
}

int weft_redux_flush_flows(weft_taskpool_t *tp, const weft_task_t *t)
{
    int rc = WEFT_SUCCESS;
    /* Every rank walks every task: the flag spares a cache miss a data. */
    for (int i = 0; i < t->nflows && rc == WEFT_SUCCESS; i++)
        if (t->flow[i].mode != WEFT_REDUX && (t->flow[i].data->flags & WEFT_DATA_REDUX) &&
            redux_of(t->flow[i].data))
            rc = flush_data(tp, t->flow[i].data);
    return rc;
}

int weft_redux_flush_pool(weft_taskpool_t *tp)
{
    int rc = WEFT_SUCCESS;
    for (size_t i = 0; i < tp->redux.n; i++) {
        weft_data_t *d = *(weft_data_t **)weft_vec_at(&tp->redux, i);
        if (rc == WEFT_SUCCESS) rc = flush_data(tp, d);
        weft_data__unref(d);
    }
    weft_vec_clear(&tp->redux);
    return rc;
}

void weft_redux_drop_pool(weft_taskpool_t *tp)
{
    for (size_t i = 0; i < tp->redux.n; i++) {
        weft_data_t *d = *(weft_data_t **)weft_vec_at(&tp->redux, i);
        weft_redux_t *r = redux_of(d);
        if (r && r->tp == tp) {
            r->tp = NULL;
            memset(r->live, 0, (size_t)r->nparts);
        }
        weft_data__unref(d);
    }
    weft_vec_fini(&tp->redux);
}
