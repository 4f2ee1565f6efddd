/* Taskpools: creation and registry in the context, the data each touched,
 * the wait for its tasks (with the watchdog) and their end. */
#include "stf/taskpool.h"
#include "stf/redux.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "data/span.h"
#include "sched/sched.h"
#include "sched/task.h"
#include "stf/record.h"
#include "stf/seqcheck.h"
#include "stf/sim.h"
#include "stf/watchdog.h"
#include "util/clock.h"
#include "util/log.h"

static int add_to_context(weft_context_t *ctx, weft_taskpool_t *tp)
{
    if (weft_vec_push(&ctx->taskpools, &tp) != WEFT_SUCCESS) return WEFT_ERR_NOMEM;
    tp->number = ++ctx->taskpools_made;
    return WEFT_SUCCESS;
}

static void remove_from_context(weft_context_t *ctx, weft_taskpool_t *tp)
{
    weft_taskpool_t **pools = ctx->taskpools.data;
    for (size_t i = 0; i < ctx->taskpools.n; i++) {
        if (pools[i] != tp) continue;
        weft_vec_remove(&ctx->taskpools, i); /* creation order is weft_fini's order */
        return;
    }
}

weft_taskpool_t *weft_taskpool_new(weft_context_t *ctx, const char *name)
{
    if (!weft_handle_check_main(ctx, WEFT_HANDLE_CONTEXT, "weft_taskpool_new", 1)) return NULL;
    weft_taskpool_t *tp = calloc(1, sizeof *tp);
    if (!tp) {
        weft_error("weft_taskpool_new: out of host memory");
        return NULL;
    }
    tp->tag = WEFT_HANDLE_TASKPOOL;
    tp->ctx = ctx;
    snprintf(tp->name, sizeof tp->name, "%s", name ? name : "taskpool");
    pthread_mutex_init(&tp->lock, NULL);
    pthread_cond_init(&tp->done, NULL);
    tp->epoch = 1;
    weft_vec_init(&tp->touched, sizeof(weft_data_t *), 64);
    weft_vec_init(&tp->writers, sizeof(weft_data_t *), 64);
    weft_vec_init(&tp->redux, sizeof(weft_data_t *), 8);
    tp->wave = ++ctx->waves;
    weft_seqlog_init(&tp->seq, ctx->seq_detail ? weft_seqcheck_task_rec_size() : 0, &ctx->meta);
    if (add_to_context(ctx, tp) != WEFT_SUCCESS) {
        weft_error("taskpool %s: out of host memory", tp->name);
        pthread_cond_destroy(&tp->done);
        pthread_mutex_destroy(&tp->lock);
        free(tp);
        return NULL;
    }
    return tp;
}

void weft_taskpool_task_done(weft_taskpool_t *tp)
{
    /* Above the last task, a lock-free decrement. The last one is made
     * under the lock: the waiter reads pending under it, so it sees 0
     * only once this thread is done with the lock and the condition. Made
     * before the lock, the waiter (its watchdog's timed wait ending then)
     * could see 0, return and free the taskpool, its mutex and condition
     * with them, while this thread was about to lock and signal them
     * (ThreadSanitizer). */
    long left = atomic_load_explicit(&tp->pending, memory_order_relaxed);
    /* So is the one that reaches what a held insertion waits for (a
     * crossing missed while the insertion starts to wait costs it one
     * timed wake, weft_taskpool_hold). */
    long low = atomic_load(&tp->hold_low);
    while (left > 1 && left - 1 != low)
        if (atomic_compare_exchange_weak_explicit(&tp->pending, &left, left - 1,
                                                  memory_order_acq_rel, memory_order_relaxed))
            return;
    pthread_mutex_lock(&tp->lock);
    long was = atomic_fetch_sub_explicit(&tp->pending, 1, memory_order_acq_rel);
    if (was == 1 || was - 1 <= atomic_load(&tp->hold_low)) pthread_cond_broadcast(&tp->done);
    pthread_mutex_unlock(&tp->lock);
}

/* The pending tasks past which an insertion is held back now, 0: none.
 * None after a refusal here or once the ranks went out of step: then the
 * sequences may differ, tasks may wait for transfers that never come, and
 * the wait must come to say so. After a hold gave up, twice the bound it
 * gave up at, until the tasks fall to half the parameter again: a task
 * long enough to trip it on another rank lets memory double once a second
 * at most, and a misuse meets the wait after a few seconds. */
static long hold_bound(weft_taskpool_t *tp)
{
    long max = tp->ctx->insert_max;
    long pending = atomic_load_explicit(&tp->pending, memory_order_relaxed);
    if (tp->hold_cap && pending <= max / 2) tp->hold_cap = 0;
    if (max <= 0 || tp->refused || tp->ctx->diverged) return 0;
    return tp->hold_cap ? tp->hold_cap : max;
}

/* Nothing ran, ended or moved on this rank for a second while held: what
 * the tasks wait for is elsewhere (a long body on another rank, or ranks
 * whose sequences differ, which only the wait can tell). */
static void hold_give_up(weft_taskpool_t *tp, long bound)
{
    weft_context_t *ctx = tp->ctx;
    tp->hold_cap = bound < LONG_MAX / 2 ? 2 * bound : LONG_MAX;
    ctx->hold_giveups++;
    /* The context's first said as a warning, with what it may mean: the
     * insertion stalled a second silently, and again at each doubling
     * (ranks apart are only found at the wait). */
    weft_log(ctx->hold_giveups == 1 ? WEFT_LOG_WARN : WEFT_LOG_INFO, -1,
             "taskpool %s: insertion held back at %ld pending tasks, none of which progressed "
             "for 1 s: goes on up to %ld%s",
             tp->name, (long)atomic_load(&tp->pending), tp->hold_cap,
             ctx->hold_giveups == 1
                 ? " (a long task elsewhere, or ranks that inserted different tasks, which the "
                   "wait will name; later such lines at debug_verbose=2; sched_pending_max)"
                 : "");
}

void weft_taskpool_hold(weft_taskpool_t *tp)
{
    weft_context_t *ctx = tp->ctx;
    long bound = hold_bound(tp);
    if (bound <= 0 || atomic_load_explicit(&tp->pending, memory_order_relaxed) <= bound) return;
    /* A simulated rank runs nothing until its queue is drained. */
    if (ctx->sim) {
        weft_sim_drain(ctx);
        return;
    }
    long low = ctx->insert_max / 2;
    double t0 = weft_clock_s(), next_check = t0 + 0.05;
    ctx->holds++;
    weft_watchdog_t w;
    weft_watchdog_start(&w, tp);
    while (atomic_load(&tp->pending) > low && !atomic_load(&ctx->mpi_gone)) {
        if (weft_sched_help(ctx->sched)) {
            if (tp->progress_due > 0) weft_watchdog_progress(tp);
            continue;
        }
        pthread_mutex_lock(&tp->lock);
        atomic_store(&tp->hold_low, low);
        if (atomic_load(&tp->pending) > low) {
            /* Short: a task may become ready for this thread to run. */
            struct timespec ts = weft_deadline_in(2 * 1000000LL);
            pthread_cond_timedwait(&tp->done, &tp->lock, &ts);
        }
        atomic_store(&tp->hold_low, 0);
        double now = weft_clock_s();
        if (now >= next_check) {
            weft_watchdog_check(&w);
            next_check = now + 0.05;
        }
        pthread_mutex_unlock(&tp->lock);
        if (now - w.last_move >= 1.0) {
            hold_give_up(tp, bound);
            break;
        }
    }
    ctx->hold_s += weft_clock_s() - t0;
}

/* Appends d to one of tp's vectors (touched, writers), counted by capacity
 * as it grows. */
static int push_counted(weft_taskpool_t *tp, weft_vec_t *v, weft_data_t *d)
{
    size_t cap = v->cap;
    if (weft_vec_push(v, &d) != WEFT_SUCCESS) return WEFT_ERR_NOMEM;
    if (v->cap != cap)
        weft_meta_add(&tp->ctx->meta, WEFT_META_RECORDS, (long long)(v->elem * (v->cap - cap)));
    return WEFT_SUCCESS;
}

/* Drops the queue's entries before writers_head once they are half of it. */
static void writers_compact(weft_taskpool_t *tp)
{
    weft_vec_t *q = &tp->writers;
    if (tp->writers_head < 64 || tp->writers_head < q->n / 2) return;
    memmove(q->data, (weft_data_t **)q->data + tp->writers_head,
            (q->n - tp->writers_head) * q->elem);
    q->n -= tp->writers_head;
    tp->writers_head = 0;
}

void weft_taskpool_writer_set(weft_taskpool_t *tp, weft_data_t *d)
{
    weft_stf_rec_t *r = weft_stf_rec(d);
    if (!r->writer_queued && push_counted(tp, &tp->writers, d) == WEFT_SUCCESS)
        r->writer_queued = 1;
    /* A few thousand queued hold a few MiB at most: left to the tiles'
     * next writes and the wait. Looking at every write cost each one two
     * task locks, which a worker ending those tasks takes too: empty tasks
     * on 1024 tiles, 2 workers, 1.43-1.48 us a task before the queue and
     * 1.61-1.66 with it looking always (bench/task_overhead.c -p spread). */
    if (tp->writers.n - tp->writers_head < WEFT_TASKPOOL_WRITERS_KEPT) return;
    for (int look = 0; look < 2 && tp->writers_head < tp->writers.n; look++) {
        weft_data_t *e = ((weft_data_t **)tp->writers.data)[tp->writers_head++];
        weft_stf_rec_t *er = weft_stf_rec(e);
        if (weft_stf_rec_drop_writer(er)) {
            if (push_counted(tp, &tp->writers, e) != WEFT_SUCCESS) er->writer_queued = 0;
            continue;
        }
        er->writer_queued = 0;
    }
    writers_compact(tp);
}

int weft_taskpool_touch(weft_taskpool_t *tp, weft_data_t *d)
{
    if (push_counted(tp, &tp->touched, d) != WEFT_SUCCESS) return WEFT_ERR_NOMEM;
    weft_data__retain(d);
    return WEFT_SUCCESS;
}

/* Every task is done: the dependency records of the touched data hold
 * finished tasks only; drop them so the next wave starts clean. */
void weft_taskpool_reset_tracking(weft_taskpool_t *tp)
{
    for (size_t i = 0; i < tp->touched.n; i++) {
        weft_data_t *d = weft_taskpool_touched(tp, i);
        if (weft_stf_rec(d)->graph == tp) weft_stf_rec(d)->graph = NULL;
        weft_stf_rec_reset(weft_stf_rec(d));
        if (d->flags & WEFT_DATA_RELEASED) {
            /* Released while these tasks used its memory (weft_data_release
             * kept it claimed): another handle may take it now. */
            weft_spans_release_all(&tp->ctx->spans, d->span);
            d->span = NULL;
        }
        weft_data__unref(d);
    }
    weft_vec_clear(&tp->touched);
    weft_vec_clear(&tp->writers);
    tp->writers_head = 0;
    tp->let_go_at = 0;
    tp->hold_cap = 0;
    tp->epoch++;
    tp->wave = ++tp->ctx->waves;
}

void weft_taskpool_let_go(weft_taskpool_t *tp)
{
    atomic_llong *live = &tp->ctx->task_pool.live;
    if (atomic_load_explicit(live, memory_order_relaxed) <= tp->let_go_at) return;
    for (size_t i = 0; i < tp->touched.n; i++) {
        weft_stf_rec_t *r = weft_stf_rec(weft_taskpool_touched(tp, i));
        if (r) weft_stf_rec_drop_ended(r);
    }
    long long left = atomic_load_explicit(live, memory_order_relaxed);
    long long floor = (long long)tp->touched.n > tp->ctx->insert_window
                          ? (long long)tp->touched.n
                          : (long long)tp->ctx->insert_window;
    tp->let_go_at = left + (left > floor ? left : floor);
}

void weft_taskpool_wait_tasks(weft_taskpool_t *tp)
{
    if (tp->ctx->sim) weft_sim_drain(tp->ctx);
    weft_watchdog_t w;
    weft_watchdog_start(&w, tp);
    int timed = weft_watchdog_on(&w);
    pthread_mutex_lock(&tp->lock);
    /* MPI_Finalize called meanwhile (from a body: the wait had begun)
     * stopped the threads that would end the tasks (runtime/mpiend.c). */
    while (atomic_load(&tp->pending) > 0 && !atomic_load(&tp->ctx->mpi_gone)) {
        if (!timed) {
            pthread_cond_wait(&tp->done, &tp->lock);
            continue;
        }
        /* Wakes now and then so that the watchdog sees a stall. */
        struct timespec ts = weft_deadline_in(250 * 1000000LL);
        pthread_cond_timedwait(&tp->done, &tp->lock, &ts);
        weft_watchdog_check(&w);
    }
    pthread_mutex_unlock(&tp->lock);
}

void weft_taskpool_wake(weft_taskpool_t *tp)
{
    pthread_mutex_lock(&tp->lock);
    pthread_cond_broadcast(&tp->done);
    pthread_mutex_unlock(&tp->lock);
}

double weft_taskpool_gflops(const weft_taskpool_t *tp)
{
    return weft_handle_check(tp, WEFT_HANDLE_TASKPOOL, "weft_taskpool_gflops", 1) ? tp->last_gflops
                                                                                  : 0.0;
}

void weft_taskpool_destroy(weft_taskpool_t *tp)
{
    remove_from_context(tp->ctx, tp);
    weft_redux_drop_pool(tp);
    weft_meta_add(
        &tp->ctx->meta, WEFT_META_RECORDS,
        -(long long)(tp->touched.elem * tp->touched.cap + tp->writers.elem * tp->writers.cap));
    weft_vec_fini(&tp->touched);
    weft_vec_fini(&tp->writers);
    weft_seqlog_free(&tp->seq);
    pthread_cond_destroy(&tp->done);
    pthread_mutex_destroy(&tp->lock);
    /* Kept a while: a call with the freed taskpool reads a released tag. */
    tp->tag = weft_handle_released(WEFT_HANDLE_TASKPOOL);
    weft_quarantine_put(&tp->ctx->quarantine, tp, sizeof *tp, free);
}

int64_t weft_taskpool_ntasks_run(const weft_taskpool_t *tp)
{
    if (!weft_handle_check(tp, WEFT_HANDLE_TASKPOOL, "weft_taskpool_ntasks_run", 1)) return -1;
    return atomic_load(&((weft_taskpool_t *)tp)->nrun);
}
