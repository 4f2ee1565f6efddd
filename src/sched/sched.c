/* The workers: one priority heap each, stealing between them, and the
 * sleep of an idle worker until a task is pushed. */
#include "sched/sched.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "sched/heap.h"
#include "util/bodythread.h"
#include "util/log.h"

typedef struct worker {
    weft_heap_t heap; /* guarded by lock */
    weft_spin_t lock;
    /* Tasks pushed by other threads: a lock-free stack (push: one CAS;
     * whoever holds the lock moves it whole into the heap), so the inserting
     * thread never fights the worker for its heap lock. */
    _Atomic(weft_task_t *) inbox;
    pthread_t thread;
    int joined; /* weft_sched_stop joined it */
    int id;
    struct weft_sched *sched;
    char pad[64];
} worker_t;

struct weft_sched {
    weft_sched_config_t cfg;
    worker_t *workers;
    int nworkers;
    atomic_int nready;    /* tasks in all heaps */
    atomic_int nsleeping; /* workers in (or entering) the wait below */
    atomic_int nspinning; /* idle workers still polling the queues */
    atomic_int stop;
    int joined;     /* every worker was joined (weft_sched_stop) */
    atomic_uint rr; /* round robin for pushes from other threads */
    pthread_mutex_t sleep_lock;
    pthread_cond_t sleep_cond;
};

static _Thread_local int self_id = -1;

int weft_sched_self(void) { return self_id; }

static void wake_one(weft_sched_t *s)
{
    /* Sequentially consistent with the sleeper's increment + recheck, so a
     * push either is seen by the sleeper or sees the sleeper. A worker that
     * is still spinning will find the task: no need to wake anyone. */
    if (atomic_load(&s->nsleeping) == 0) return;
    if (s->cfg.steal && atomic_load(&s->nspinning) > 0) return;
    /* Taking the lock orders us after a sleeper's recheck; signalling after
     * the unlock keeps the woken worker from blocking on the lock we hold. */
    pthread_mutex_lock(&s->sleep_lock);
    pthread_mutex_unlock(&s->sleep_lock);
    /* Without stealing only the owner of the queue can take the task. */
    if (s->cfg.steal)
        pthread_cond_signal(&s->sleep_cond);
    else
        pthread_cond_broadcast(&s->sleep_cond);
}

void weft_sched_push(weft_sched_t *s, weft_task_t *t, int worker_hint)
{
    if (worker_hint < 0 || worker_hint >= s->nworkers)
        worker_hint = (int)(atomic_fetch_add_explicit(&s->rr, 1, memory_order_relaxed) %
                            (unsigned)s->nworkers);
    worker_t *w = &s->workers[worker_hint];
    if (worker_hint == self_id) {
        weft_spin_lock(&w->lock);
        int rc = weft_heap_push(&w->heap, t);
        weft_spin_unlock(&w->lock);
        if (rc != 0) {
            weft_error("out of memory growing a ready queue");
            abort();
        }
    } else {
        weft_task_t *head = atomic_load_explicit(&w->inbox, memory_order_relaxed);
        do {
            t->next = head;
        } while (!atomic_compare_exchange_weak_explicit(&w->inbox, &head, t, memory_order_release,
                                                        memory_order_relaxed));
    }
    atomic_fetch_add(&s->nready, 1);
    wake_one(s);
}

/* Moves the inbox into the heap; the caller holds the lock. */
static void drain_inbox_locked(worker_t *w)
{
    weft_task_t *t = atomic_exchange_explicit(&w->inbox, NULL, memory_order_acquire);
    while (t) {
        weft_task_t *next = t->next;
        if (weft_heap_push(&w->heap, t) != 0) {
            weft_error("out of memory growing a ready queue");
            abort();
        }
        t = next;
    }
}

static weft_task_t *pop_from(worker_t *w)
{
    /* Racy peeks, rechecked under the lock. */
    if (weft_heap_empty(&w->heap) && !atomic_load_explicit(&w->inbox, memory_order_relaxed))
        return NULL;
    weft_spin_lock(&w->lock);
    drain_inbox_locked(w);
    weft_task_t *t = weft_heap_pop(&w->heap);
    weft_spin_unlock(&w->lock);
    return t;
}

static weft_task_t *find_work(weft_sched_t *s, worker_t *me)
{
    weft_task_t *t = pop_from(me);
    if (t || !s->cfg.steal) return t;
    for (int k = 1; k < s->nworkers; k++) {
        worker_t *v = &s->workers[(me->id + k) % s->nworkers];
        t = pop_from(v);
        if (t) return t;
    }
    return NULL;
}

int weft_sched_help(weft_sched_t *s)
{
    if (atomic_load_explicit(&s->nready, memory_order_relaxed) == 0) return 0;
    unsigned start = atomic_load_explicit(&s->rr, memory_order_relaxed);
    for (int k = 0; k < s->nworkers; k++) {
        weft_task_t *t = pop_from(&s->workers[(start + (unsigned)k) % (unsigned)s->nworkers]);
        if (!t) continue;
        atomic_fetch_sub(&s->nready, 1);
        s->cfg.exec(s->cfg.exec_arg, t, -1);
        return 1;
    }
    return 0;
}

static void sleep_until_work(weft_sched_t *s)
{
    pthread_mutex_lock(&s->sleep_lock);
    atomic_fetch_add(&s->nsleeping, 1);
    while (atomic_load(&s->nready) == 0 && !atomic_load(&s->stop))
        pthread_cond_wait(&s->sleep_cond, &s->sleep_lock);
    atomic_fetch_sub(&s->nsleeping, 1);
    pthread_mutex_unlock(&s->sleep_lock);
}

static void bind_worker(weft_sched_t *s, int id)
{
    hwloc_topology_t topo = s->cfg.topo;
    if (!topo || !s->cfg.cpuset) return;
    int ncores = hwloc_get_nbobjs_inside_cpuset_by_type(topo, s->cfg.cpuset, HWLOC_OBJ_CORE);
    if (ncores <= 0) return;
    hwloc_obj_t core =
        hwloc_get_obj_inside_cpuset_by_type(topo, s->cfg.cpuset, HWLOC_OBJ_CORE, id % ncores);
    if (core && hwloc_set_cpubind(topo, core->cpuset, HWLOC_CPUBIND_THREAD) != 0)
        weft_warn("worker %d: could not bind to core %u", id, core->logical_index);
}

static void *worker_main(void *arg)
{
    worker_t *me = arg;
    weft_sched_t *s = me->sched;
    self_id = me->id;
    bind_worker(s, me->id);
    /* A new worker sleeps until the first task: spinning (and yielding)
     * while weft_init still creates the others made each creation compete
     * with every worker before it (cores=4096 took over a minute). */
    sleep_until_work(s);
    int idle = 0;
    while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
        if (atomic_load_explicit(&s->nready, memory_order_relaxed) > 0) {
            weft_task_t *t = find_work(s, me);
            if (t) {
                atomic_fetch_sub(&s->nready, 1);
                if (idle > 0) atomic_fetch_sub(&s->nspinning, 1);
                s->cfg.exec(s->cfg.exec_arg, t, me->id);
                idle = 0;
                continue;
            }
        }
        /* Spin briefly: a successor is often released microseconds later. */
        if (idle == 0) atomic_fetch_add(&s->nspinning, 1);
        if (++idle < 2000) {
            /* Past a short pause, give the core away: the inserting thread
             * or the comm thread may share it and have the work we wait for. */
            if (idle < 64)
                weft_cpu_relax();
            else
                sched_yield();
            continue;
        }
        atomic_fetch_sub(&s->nspinning, 1);
        sleep_until_work(s);
        idle = 0;
    }
    return NULL;
}

int weft_sched_create(const weft_sched_config_t *cfg, weft_sched_t **out)
{
    if (cfg->nworkers <= 0 || !cfg->exec) return WEFT_ERR_INVALID;
    weft_sched_t *s = calloc(1, sizeof *s);
    if (!s) return WEFT_ERR_NOMEM;
    s->cfg = *cfg;
    s->nworkers = cfg->nworkers;
    s->workers = calloc((size_t)s->nworkers, sizeof *s->workers);
    if (!s->workers) goto undo_sched;
    pthread_mutex_init(&s->sleep_lock, NULL);
    pthread_cond_init(&s->sleep_cond, NULL);
    int started = 0;
    for (; started < s->nworkers; started++) {
        worker_t *w = &s->workers[started];
        w->id = started;
        w->sched = s;
        weft_spin_init(&w->lock);
        if (weft_heap_init(&w->heap, 256) != 0) goto undo_threads;
        if (weft_body_thread_create(&w->thread, worker_main, w) != 0) {
            weft_heap_fini(&w->heap);
            goto undo_threads;
        }
    }
    *out = s;
    return WEFT_SUCCESS;

undo_threads:
    atomic_store(&s->stop, 1);
    pthread_mutex_lock(&s->sleep_lock);
    pthread_cond_broadcast(&s->sleep_cond);
    pthread_mutex_unlock(&s->sleep_lock);
    for (int i = 0; i < started; i++) {
        pthread_join(s->workers[i].thread, NULL);
        weft_heap_fini(&s->workers[i].heap);
    }
    free(s->workers);
undo_sched:
    free(s);
    return WEFT_ERR_NOMEM;
}

void weft_sched_stop(weft_sched_t *s)
{
    if (!s || s->joined) return;
    atomic_store(&s->stop, 1);
    pthread_mutex_lock(&s->sleep_lock);
    pthread_cond_broadcast(&s->sleep_cond);
    pthread_mutex_unlock(&s->sleep_lock);
    int all = 1;
    for (int i = 0; i < s->nworkers; i++) {
        worker_t *w = &s->workers[i];
        if (w->joined) continue;
        /* A body on this worker ended MPI (runtime/mpiend.c stops the
         * threads from there): joining itself failed and the worker, never
         * joined, went on ending its task while weft_fini freed the
         * taskpool and the scheduler (ThreadSanitizer). weft_fini's stop
         * joins it, once its body has returned. */
        if (pthread_equal(w->thread, pthread_self())) {
            all = 0;
            continue;
        }
        pthread_join(w->thread, NULL);
        w->joined = 1;
    }
    s->joined = all;
}

void weft_sched_destroy(weft_sched_t *s)
{
    if (!s) return;
    weft_sched_stop(s);
    for (int i = 0; i < s->nworkers; i++) weft_heap_fini(&s->workers[i].heap);
    pthread_mutex_destroy(&s->sleep_lock);
    pthread_cond_destroy(&s->sleep_cond);
    free(s->workers);
    free(s);
}
