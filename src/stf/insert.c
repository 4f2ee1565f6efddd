/* Task insertion (sequential task flow): the array form and the variadic
 * form (their arguments parsed alike in insert_args.c), the class and flow
 * checks, placement, the dependencies from the access modes in insertion
 * order, release of the task when nothing precedes it. */
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sched/sched.h"
#include "sched/task.h"
#include "sched/upcoming.h"
#include "stf/insert.h"
#include "stf/insert_args.h"
#include "stf/newread.h"
#include "stf/record.h"
#include "util/fault.h"
#include "stf/remote.h"
#include "stf/seqcheck.h"
#include "stf/taskpool.h"
#include "stf/watchdog.h"
#include "util/clock.h"
#include "util/handle.h"
#include "util/log.h"
#include "stf/home.h"
#include "stf/redux.h"

/* Every rank answers alike: open_wave is set by every insertion on every
 * rank, whichever rank runs the task. */
const weft_taskpool_t *weft_insert_open_pool(const weft_data_t *d)
{
    if (d->open_wave == 0) return NULL;
    const weft_context_t *ctx = d->ctx;
    weft_taskpool_t *const *pools = ctx->taskpools.data;
    for (size_t i = 0; i < ctx->taskpools.n; i++)
        if ((uint32_t)pools[i]->wave == d->open_wave && pools[i]->t_first > 0) return pools[i];
    return NULL;
}

const weft_taskpool_t *weft_insert_busy_pool(const weft_data_t *d)
{
    const weft_stf_rec_t *r = weft_stf_rec(d);
    if (r && r->graph) return r->graph;
    const weft_task_t *t = !r               ? NULL
                           : r->last_writer ? r->last_writer
                           : r->readers.n   ? weft_stf_rec_reader(r, 0)
                                            : NULL;
    if (t) return t->tp;
    /* Tasks of other ranks only (a task elsewhere that writes a tile this
     * rank owns), or WEFT_REDUX tasks, whose partials wait for their
     * combination outside the record: the mark every rank's insertion
     * sets. */
    return weft_insert_open_pool(d);
}

const char *weft_insert_busy_pool_name(const weft_data_t *d)
{
    const weft_taskpool_t *tp = weft_insert_busy_pool(d);
    return tp ? tp->name : NULL;
}

/* The taskpool other than tp that d is open in, NULL when none. */
static const weft_taskpool_t *open_elsewhere(const weft_taskpool_t *tp, const weft_data_t *d)
{
    if (d->open_wave == 0 || d->open_wave == (uint32_t)tp->wave) return NULL;
    return weft_insert_open_pool(d);
}

/* Sets bit i of *init for each flow i that reads a NEW data never written
 * that has an initialiser (weft_data_set_init): the rank that runs t makes
 * its contents. by_weft: t is weft's own (a reduction's fold into its data
 * reads the owner's contents where they are). */
static int check_flows(const weft_task_t *t, unsigned *init, int by_weft)
{
    *init = 0;
    for (int i = 0; i < t->nflows; i++) {
        const weft_data_t *d = t->flow[i].data;
        int rc = weft_newread_check(t, i, by_weft);
        if (rc > 0) *init |= 1u << i;
        if (rc < 0) return rc;
        if (d->host_access) {
            weft_error("insert %s: data %llu is acquired by the host (weft_data_host_acquire): "
                       "call weft_data_host_release on it before inserting tasks that use it",
                       t->cls->name, (unsigned long long)d->key);
            return WEFT_ERR_INVALID;
        }
        const weft_taskpool_t *other = open_elsewhere(t->tp, d);
        if (other) {
            /* Its wait writes d back, drops the device copies and resets
             * d's dependencies: with this task in flight, that lost its
             * result (docs/SEMANTICS.md section 1). */
            weft_error("insert %s: data %llu is used by taskpool \"%s\", which was not waited "
                       "for: a data is used by one taskpool at a time; call weft_taskpool_wait "
                       "on \"%s\" before inserting tasks of taskpool \"%s\" that use it",
                       t->cls->name, (unsigned long long)d->key, other->name, other->name,
                       t->tp->name);
            return WEFT_ERR_INVALID;
        }
        const weft_stf_rec_t *rec = weft_stf_rec(d);
        if (rec && rec->graph && rec->graph != t->tp) {
            weft_error("insert %s: data %llu is used by the graph (weft_ptg_insert) of taskpool "
                       "\"%s\", which was not waited for: a graph's tasks are ordered among "
                       "themselves only; call weft_taskpool_wait on it first",
                       t->cls->name, (unsigned long long)d->key, rec->graph->name);
            return WEFT_ERR_INVALID;
        }
        if (d->ctx != t->tp->ctx) {
            weft_error("insert %s: data %llu belongs to another weft context than the taskpool",
                       t->cls->name, (unsigned long long)d->key);
            return WEFT_ERR_INVALID;
        }
    }
    return WEFT_SUCCESS;
}

/* Read after write: after the last writer. Write after read: after every
 * reader since that write (they follow the writer already). Write after
 * write: after the last writer when nobody read in between. */
static int infer_flow(weft_taskpool_t *tp, weft_task_t *t, weft_data_t *d, int mode)
{
    weft_stf_rec_t *rec = weft_stf_rec_touch(tp, d);
    if (!rec) return WEFT_ERR_NOMEM;
    if (!(mode & WEFT_W)) {
        if (rec->last_writer) weft_task_add_edge(rec->last_writer, t);
        return weft_stf_rec_push_reader(rec, t);
    }
    if (rec->readers.n > 0) {
        for (size_t r = 0; r < rec->readers.n; r++) {
            weft_task_t *reader = weft_stf_rec_reader(rec, r);
            weft_task_add_edge(reader, t);
            weft_task_unref(reader);
        }
        weft_vec_clear(&rec->readers);
    } else if (rec->last_writer) {
        weft_task_add_edge(rec->last_writer, t);
    }
    weft_task_retain(t);
    if (rec->last_writer) weft_task_unref(rec->last_writer);
    rec->last_writer = t;
    rec->written = 1;
    weft_taskpool_writer_set(tp, d);
    return WEFT_SUCCESS;
}

/* 1 when a flow of t names the same data as flow i and writes it. */
static int writes_data(const weft_task_t *t, int i)
{
    for (int j = 0; j < t->nflows; j++)
        if (t->flow[j].data == t->flow[i].data && (t->flow[j].mode & WEFT_W)) return 1;
    return 0;
}

/* t is a pending use of each of its data until it ends (device eviction
 * keeps what is used soonest), and a body task homed on a device is listed
 * for that device's manager to stage its inputs ahead. `unordered`: t's
 * number may come before those of tasks it depends on. */
static int add_uses(weft_context_t *ctx, weft_task_t *t, int unordered)
{
    int home = weft_home_device(ctx, t), rc = WEFT_SUCCESS;
    for (int i = 0; i < t->nflows && rc == WEFT_SUCCESS; i++) {
        if (weft_task_first_flow_of(t, i) != i) continue;
        weft_use_t use = {.seq = t->seq,
                          .priority = t->priority,
                          .device = home,
                          .writes = writes_data(t, i),
                          .unordered = unordered};
        rc = weft_data_use_add(t->flow[i].data, use);
    }
    if (rc == WEFT_SUCCESS && t->kind == WEFT_TASK_BODY && home > 0 && ctx->upcoming[home]) {
        int urc = weft_upcoming_push(ctx->upcoming[home], t);
        (void)urc; /* out of memory: t's inputs come at its start, as without prefetch */
    }
    return rc;
}

static int number(weft_taskpool_t *tp, weft_task_t *t, int unordered)
{
    weft_context_t *ctx = tp->ctx;
    t->seq = ctx->next_seq++;
    /* Nothing to keep without devices. */
    return ctx->ndevices > 0 ? add_uses(ctx, t, unordered) : WEFT_SUCCESS;
}

/* A front-end that orders tasks itself numbers them in its own order (a
 * graph: class by class, transfers last), not after their predecessors. */
int weft_insert_number(weft_taskpool_t *tp, weft_task_t *t) { return number(tp, t, 1); }

int weft_insert_local(weft_taskpool_t *tp, weft_task_t *t)
{
    weft_context_t *ctx = tp->ctx;
    /* Inserted in order: after every task it depends on. */
    int rc = number(tp, t, 0);
    for (int i = 0; i < t->nflows && rc == WEFT_SUCCESS; i++)
        rc = infer_flow(tp, t, t->flow[i].data, t->flow[i].mode);
    if (rc != WEFT_SUCCESS) weft_error("insert %s: out of memory", t->cls->name);
    /* Even on failure the task is released so that nothing waits forever. */
    long pending = atomic_fetch_add_explicit(&tp->pending, 1, memory_order_relaxed) + 1;
    if (weft_task_insert_done(t)) ctx->ready(ctx, t);
    weft_taskpool_let_go(tp);
    /* Far ahead of the workers: run ready tasks here for a while. Not
     * held here: this may be a transfer of a task being inserted, the
     * rest of whose transfers would not be set up (weft_taskpool_hold,
     * once the task is in whole). */
    if (pending > ctx->insert_window)
        while (atomic_load_explicit(&tp->pending, memory_order_relaxed) > ctx->insert_window / 2 &&
               weft_sched_help(ctx->sched)) {
            /* A long run's tasks may all end here, before its wait. */
            if (tp->progress_due > 0) weft_watchdog_progress(tp);
        }
    return rc;
}

static int affinity_flow(const int *tags, int n)
{
    for (int i = 0; i < n; i++)
        if (tags[i] & WEFT_AFFINITY) return i;
    return -1;
}

/* Distributed part: every rank updates the records; only the rank that
 * runs the task (exec_rank) keeps it. Returns 1 when the task stays on
 * this rank. */
static int distribute(weft_taskpool_t *tp, weft_task_t *t, int exec_rank, int *rc)
{
    weft_context_t *ctx = tp->ctx;
    *rc = weft_seqcheck_log(tp, t, exec_rank);
    if (*rc == WEFT_SUCCESS) *rc = weft_remote_infer(tp, t, exec_rank);
    return exec_rank == ctx->rank;
}

/* Every rank walks every task; most ranks keep few. A task is parsed on
 * the stack, and only a task this rank keeps gets a structure and
 * references on its data (docs/SCALE.md). */
static void walk_init(weft_task_t *w, weft_taskpool_t *tp, const weft_task_class_t *cls)
{
    w->cls = cls;
    w->tp = tp;
    w->priority = 0;
    w->device = 0;
    w->affinity = -1;
    w->on_rank = w->device_hint = -1;
    w->nflows = 0;
    w->nvalues = 0;
}

weft_task_t *weft_insert_keep(weft_taskpool_t *tp, const weft_task_t *w)
{
    if (weft_fault_hit(tp->ctx->fault, WEFT_FAULT_TASK_KEEP, NULL)) return NULL;
    weft_task_t *t = weft_task_alloc(&tp->ctx->task_pool);
    if (!t) return NULL;
    t->cls = w->cls;
    t->tp = tp;
    t->priority = w->priority;
    t->device = 0;
    t->affinity = w->affinity;
    t->on_rank = w->on_rank;
    t->device_hint = w->device_hint;
    t->nflows = w->nflows;
    memcpy(t->flow, w->flow, sizeof *w->flow * (size_t)w->nflows);
    for (int i = 0; i < t->nflows; i++) weft_data__retain(t->flow[i].data);
    int nv = w->nvalues;
    t->nvalues = nv;
    memcpy(t->value_off, w->value_off, sizeof *w->value_off * (size_t)nv);
    memcpy(t->value_len, w->value_len, sizeof *w->value_len * (size_t)nv);
    if (nv) memcpy(t->values, w->values, (size_t)(w->value_off[nv - 1] + w->value_len[nv - 1]));
    weft_meta_note(&tp->ctx->meta);
    return t;
}

int weft_insert_parse(weft_taskpool_t *tp, const weft_task_class_t *cls, const weft_arg_t *args,
                      int nargs, weft_task_t *w, int *aff)
{
    walk_init(w, tp, cls);
    int tags[WEFT_MAX_FLOWS];
    int rc = weft_insert__parse_args(w, tags, args, nargs, 0);
    *aff = affinity_flow(tags, w->nflows);
    w->affinity = *aff;
    return rc;
}

/* Whether cls gives a body for some device type (a batch body alone
 * cannot run a task that does not batch). */
int weft_insert_class_has_body(const weft_task_class_t *cls)
{
    int any = 0;
    for (int i = 0; i < WEFT_DEV_TYPES; i++) any |= cls->body[i] != NULL;
    return any;
}

/* A refusal after tp's handle and thread were found good: an entry of
 * tp's wave on every rank alike (every rank checks the class), so a free
 * or weft_fini waits for tp as for a task inserted (weft_taskpool_unwaited). */
static int refuse_class(weft_taskpool_t *tp)
{
    tp->refused = 1;
    return WEFT_ERR_INVALID;
}

static int check_class(weft_taskpool_t *tp, const weft_task_class_t *cls, const char *call)
{
    /* The usual case without a call: every rank checks every task. An
     * int passed for either is refused below (reading it crashed). */
    int small_cls = weft_address_is_small(cls);
    if (!weft_address_is_small(tp) && tp && tp->tag == (uint32_t)WEFT_HANDLE_TASKPOOL &&
        !small_cls && cls && cls->name && !tp->ptg && weft_insert_class_has_body(cls) &&
        !atomic_load_explicit(&tp->ctx->bodies_halted, memory_order_relaxed) &&
        !atomic_load_explicit(&tp->ctx->mpi_gone, memory_order_relaxed))
        return weft_context_check_thread(tp->ctx, call) ? WEFT_SUCCESS : WEFT_ERR_INVALID;
    if (!weft_handle_check(tp, WEFT_HANDLE_TASKPOOL, call, 1)) return WEFT_ERR_INVALID;
    /* Before any refusal is folded into tp's sequence, which is its
     * context's thread's. */
    if (!weft_context_check_thread(tp->ctx, call)) return WEFT_ERR_INVALID;
    /* bodies_halted, set with ctx->diverged (weft_context_diverge), is the
     * one an MPI_Finalize run on another thread may write. */
    int gone = atomic_load(&tp->ctx->mpi_gone);
    if (gone || atomic_load(&tp->ctx->bodies_halted)) {
        /* Apart ranks: refused (an insertion used to be accepted and the
         * task never ran), WEFT_ERR_MPI where MPI ended or failed a
         * collective. Said once a taskpool: a loop of insertions would
         * fill the log (after MPI_Finalize a line came with each). */
        int rc = gone || tp->ctx->diverged == WEFT_ERR_MPI ? WEFT_ERR_MPI : WEFT_ERR_MISMATCH;
        if (!tp->diverged_said)
            weft_error("%s: taskpool %s: %s: no task is inserted any more (each later insertion "
                       "into it returns %s without a line); call weft_fini",
                       call, tp->name, weft_context_diverged_why(tp->ctx),
                       rc == WEFT_ERR_MPI ? "WEFT_ERR_MPI" : "WEFT_ERR_MISMATCH");
        tp->diverged_said = 1;
        return rc;
    }
    if (small_cls) {
        weft_error("argument 2 of %s is the small integer %lu (no address), not a task class", call,
                   (unsigned long)(uintptr_t)cls);
        return refuse_class(tp);
    }
    /* A graph's tasks would not be ordered with this one (docs/PTG.md). */
    if (tp->ptg) {
        /* Named by its class, as the header promises for every refusal. */
        weft_error("insert %s: taskpool %s received a graph (weft_ptg_insert) since its last "
                   "wait: call weft_taskpool_wait before inserting",
                   cls && cls->name ? cls->name : "(a class with no name)", tp->name);
        return refuse_class(tp);
    }
    if (cls && cls->name && !weft_insert_class_has_body(cls)) {
        /* Every rank refuses it: none could run the task. */
        weft_error("argument 2 of %s is task class %s, which has no body: give it a body for "
                   "at least one device type (.body[WEFT_DEV_CPU] runs on the host and on emu "
                   "devices)",
                   call, cls->name);
        return refuse_class(tp);
    }
    if (cls && cls->name) return WEFT_SUCCESS;
    weft_error("argument 2 of %s is %s: pass a weft_task_class_t with a name", call,
               cls ? "a task class without a name" : "NULL");
    return refuse_class(tp);
}

/* The rank that runs w keeps it as class `kept`, each write a read-write
 * (weft_insert_by_weft_kept_as): every rank logged and inferred it as it
 * was inserted, so the ranks' sequences stay the same. */
static void keep_as(weft_task_t *w, const weft_task_class_t *kept)
{
    w->cls = kept;
    for (int i = 0; i < w->nflows; i++)
        if (w->flow[i].mode & WEFT_W) w->flow[i].mode |= WEFT_R;
}

/* After the arguments were checked: the distributed part on every rank,
 * then the local part on the rank that keeps the task (weft_insert_keep),
 * as class `kept` when not NULL. */
/* A task walked and logged that this rank cannot set up (its transfers'
 * actions or its structure: host memory): said here, and marked in the
 * sequence after the task, so that every rank's report names this rank's
 * reason; all a rank said before was that the ranks had inserted
 * different tasks. */
static int refuse_logged(weft_taskpool_t *tp, const weft_task_t *w, int rc, const char *what)
{
    weft_error("insert %s: %s: %s; the task is refused", w->cls->name, what, weft_strerror(rc));
    weft_seqcheck_refused_logged(tp, w->cls->name, rc);
    return rc;
}

static int insert_checked(weft_taskpool_t *tp, weft_task_t *w, int aff, int exec_rank,
                          unsigned init, const weft_task_class_t *kept)
{
    int rc = WEFT_SUCCESS;
    if (tp->t_first == 0) {
        tp->t_first = weft_clock_s();
        tp->cpu_first = weft_clock_thread_s();
        tp->progress_due = weft_watchdog_shows(tp->ctx) ? tp->t_first + 1.0 : 0;
    }
    /* The line a second runs from the first insertion, not from the wait:
     * the inserting thread may spend most of the run here (the clock read
     * every 16th task: an application's own work between insertions may
     * make them slow). */
    if ((++tp->ctx->walked & 15) == 0 && tp->progress_due > 0) weft_watchdog_progress(tp);
    for (int i = 0; i < w->nflows; i++) w->flow[i].data->open_wave = (uint32_t)tp->wave;
    w->affinity = aff;
    if (tp->ctx->nranks > 1) {
        int here = distribute(tp, w, exec_rank, &rc);
        /* Kept here without its receives, the task ran into "no copy
         * holds its newest version: internal error". */
        if (rc != WEFT_SUCCESS) return refuse_logged(tp, w, rc, "setting up its transfers");
        if (!here) return rc;
    }
    if (kept) keep_as(w, kept);
    for (int i = 0; i < w->nflows && rc == WEFT_SUCCESS; i++)
        if (init & (1u << i)) rc = weft_data_init_contents(w->flow[i].data, tp->ctx->hostmem);
    weft_task_t *t = weft_insert_keep(tp, w);
    if (!t) return refuse_logged(tp, w, WEFT_ERR_NOMEM, "keeping it");
    tp->ninserted_local++;
    tp->ctx->kept++;
    int rc2 = weft_insert_local(tp, t);
    return rc != WEFT_SUCCESS ? rc : rc2;
}

/* Whether a flow of t reduces, or names a data with a reduction set:
 * reductions are rare, and one look spares the walk redux.c's passes. */
static int uses_redux(const weft_task_t *t)
{
    int any = 0;
    for (int i = 0; i < t->nflows; i++)
        any |= t->flow[i].mode == WEFT_REDUX || (t->flow[i].data->flags & WEFT_DATA_REDUX);
    return any;
}

/* The one path of both forms, once tp and cls were checked and the
 * arguments parsed into w (rc: how that went); kept: insert_checked's;
 * by_weft: a task weft inserts (check_flows'). */
static int insert_walked(weft_taskpool_t *tp, weft_task_t *w, const int *tags, int rc,
                         const weft_task_class_t *kept, int by_weft)
{
    unsigned init = 0;
    int redux = rc == WEFT_SUCCESS && uses_redux(w);
    /* Pending partial results of a data this task uses otherwise are
     * combined first (their tasks go before it). */
    if (redux) rc = weft_redux_check_flows(w);
    if (redux && rc == WEFT_SUCCESS) rc = weft_redux_flush_flows(tp, w);
    if (rc == WEFT_SUCCESS) rc = check_flows(w, &init, by_weft);
    int aff = affinity_flow(tags, w->nflows);
    /* Once, from the flows as given: the merge of repeated flows below
     * makes an earlier read of a data written later a write, which moved
     * the task to that data's owner, and a reduction's partial was taken
     * for the rank chosen here while the task ran there. */
    int exec_rank = w->on_rank >= 0 ? w->on_rank : weft_remote_exec_rank(w, aff);
    if (rc == WEFT_SUCCESS && redux)
        rc = weft_redux_lower(tp, w, tp->ctx->nranks > 1 ? exec_rank : 0);
    /* Refused: nothing inserted, so nothing for a wait to wait for; the
     * refusal is compared across ranks, since one rank may refuse what
     * another accepts (a data acquired by its host, its memory). */
    if (rc != WEFT_SUCCESS) {
        weft_seqcheck_refused_task(tp, w->cls->name, rc);
        return rc;
    }
    /* W t then R t (or R t then W t): one copy, the union of the modes. */
    weft_task_merge_repeated_flows(w);
    return insert_checked(tp, w, aff, exec_rank, init, kept);
}

/* The arguments walked into a task and the task inserted; released_ok:
 * add_flow's; kept: insert_checked's. */
static int insert_array(weft_taskpool_t *tp, const weft_task_class_t *cls, const weft_arg_t *args,
                        int nargs, int released_ok, const weft_task_class_t *kept)
{
    weft_task_t w; /* the walked task */
    walk_init(&w, tp, cls);
    int tags[WEFT_MAX_FLOWS];
    int rc = weft_insert__parse_args(&w, tags, args, nargs, released_ok);
    return insert_walked(tp, &w, tags, rc, kept, released_ok);
}

static int insert_task_array(weft_taskpool_t *tp, const weft_task_class_t *cls,
                             const weft_arg_t *args, int nargs)
{
    int crc = check_class(tp, cls, "weft_insert_task_array");
    if (crc != WEFT_SUCCESS) return crc;
    if (nargs < 0 || (!args && nargs > 0)) {
        weft_error("insert %s: %d arguments at %p: pass nargs >= 0 and the array that holds "
                   "them",
                   cls->name, nargs, (const void *)args);
        weft_seqcheck_refused_task(tp, cls->name, WEFT_ERR_INVALID);
        return WEFT_ERR_INVALID;
    }
    int rc = insert_array(tp, cls, args, nargs, 0, NULL);
    weft_taskpool_hold(tp);
    return rc;
}

/* An insertion that a signal handler's call interrupts is refused by that
 * call (util/inbody.h): the handler's insertion, reentering this one
 * inside malloc, hung on malloc's lock; a wait or weft_fini from it would
 * find the taskpool half updated. */
int weft_insert_task_array(weft_taskpool_t *tp, const weft_task_class_t *cls,
                           const weft_arg_t *args, int nargs)
{
    if (weft_inbody_call_refuse("weft_insert_task_array", NULL)) return WEFT_ERR_INVALID;
    const char *was = weft_inbody_call_enter("weft_insert_task_array");
    int rc = insert_task_array(tp, cls, args, nargs);
    weft_inbody_call_leave(was);
    return rc;
}

int weft_insert_by_weft(weft_taskpool_t *tp, const weft_task_class_t *cls, const weft_arg_t *args,
                        int nargs)
{
    return weft_insert_by_weft_kept_as(tp, cls, args, nargs, NULL);
}

int weft_insert_by_weft_kept_as(weft_taskpool_t *tp, const weft_task_class_t *cls,
                                const weft_arg_t *args, int nargs, const weft_task_class_t *kept)
{
    /* A divergence report naming the task says weft added it: it has the
     * user's class (the reduction's), which the user never inserted. */
    tp->inserting_own = 1;
    int rc = insert_array(tp, cls, args, nargs, 1, kept);
    tp->inserting_own = 0;
    return rc;
}

static int insert_task_va(weft_taskpool_t *tp, const weft_task_class_t *cls, va_list ap)
{
    int crc = check_class(tp, cls, "weft_insert_task");
    if (crc != WEFT_SUCCESS) return crc;
    weft_task_t w; /* the walked task */
    walk_init(&w, tp, cls);
    int tags[WEFT_MAX_FLOWS];
    int rc = weft_insert__parse_va(&w, tags, ap);
    rc = insert_walked(tp, &w, tags, rc, NULL, 0);
    /* Here, the task inserted whole: a rank held in the middle of one
     * would have set up some of its transfers and not the rest. */
    weft_taskpool_hold(tp);
    return rc;
}

/* As weft_insert_task_array: a signal handler's call inside it is refused. */
int weft_insert_task(weft_taskpool_t *tp, const weft_task_class_t *cls, ...)
{
    if (weft_inbody_call_refuse("weft_insert_task", NULL)) return WEFT_ERR_INVALID;
    const char *was = weft_inbody_call_enter("weft_insert_task");
    va_list ap;
    va_start(ap, cls);
    int rc = insert_task_va(tp, cls, ap);
    va_end(ap);
    weft_inbody_call_leave(was);
    return rc;
}
