/* Prefetch ahead (devahead.h): the manager walks its device's upcoming
 * tasks in run order (priority, then insertion: the order next-use
 * eviction weighs) and copies in the tiles they read that are missing on
 * the device, under three rules:
 *  - only a version that is final for the task: no task of this rank that
 *    may come before it still writes the tile (data/nextuse.h: by number
 *    for inserted tasks, any pending write for a graph's), and a copy on
 *    this rank (host, or a peer device) holds it now; a version still being
 *    produced or received is never fetched;
 *  - room comes only from copies whose next use is after the task's own
 *    (weft_devcopy_get_ahead): a prefetch never evicts what is needed
 *    sooner, and never a copy that a task in flight pins (readers);
 *  - at most device_prefetch_ahead tiles held ahead: arriving, or landed
 *    and not used by a task yet (copy->ahead_for), so that the manager
 *    fetches for the next few tasks only, not for tasks far enough away
 *    that their tiles would be evicted again before they run; the copies
 *    go on the prefetch stream and the manager's pass polls them like its
 *    tasks' events: no thread blocks on them.
 * A copy ahead is a reader of its source and holds the destination (a
 * reader, and UNDER while the bytes arrive): a task that reads the tile
 * waits for it (weft_devlaunch_inputs_arriving), then finds it newest and
 * copies nothing. If the tile is written elsewhere before that task runs,
 * the copy is simply stale (versions, docs/COHERENCY.md) and the task's own
 * stage-in fetches the newest. A scan works on tasks taken out of the
 * list: the drain at a wait waits for it (weft_upcoming_prune), so that no
 * copy for a task of that taskpool starts after the wait. */
#include "devmgr/devahead.h"

#include <sched.h>
#include <stdlib.h>

#include "devmgr/devlaunch.h"
#include "sched/upcoming.h"
#include "trace/trace.h"

#define AHEAD_MAX 64  /* the parameter's upper bound: tiles held ahead */
#define AHEAD_SCAN 32 /* upcoming tasks looked at by one pass, in run order */

typedef struct ahead_rec {
    weft_data_t *data; /* retained while the copy is in flight */
    weft_data_copy_t *src, *dst;
    uint32_t version;
    weft_event_t ev;
    uint64_t t0;  /* trace */
    uint64_t seq; /* the task it is for (trace) */
} ahead_rec_t;

struct weft_devahead {
    weft_upcoming_t upcoming;
    int max, n;
    atomic_int busy; /* n, for the main thread's drain at a taskpool's end */
    long long seen;  /* what the last scan saw: tasks listed and ended, copies landed */
    long long landed;
    ahead_rec_t rec[AHEAD_MAX];
};

/* Parameters given that the others leave without effect, said once a
 * rank (by its first device's manager): a reviewer's prefetch_ahead=8 with
 * device_evict=lru fetched nothing ahead, without a word. */
static void say_unused(const weft_devmgr_t *m, int max)
{
    if (m->dev->index != 1) return;
    if (max > 0 && (!m->evict_next_use || !m->prefetch || m->prefetch_share >= 100))
        weft_warn("device_prefetch_ahead=%d does nothing with %s: it needs device_evict=next_use, "
                  "device_prefetch=1 and device_prefetch_share below 100",
                  max,
                  !m->evict_next_use ? "device_evict=lru"
                  : !m->prefetch     ? "device_prefetch=0"
                                     : "device_prefetch_share=100");
    if (!m->evict_next_use && weft_params_is_set(m->ctx->params, "device_prefetch_share"))
        weft_warn("device_prefetch_share=%d does nothing with device_evict=lru: it bounds "
                  "next_use eviction",
                  m->prefetch_share);
}

int weft_devahead_start(weft_devmgr_t *m, int max)
{
    say_unused(m, max);
    if (max <= 0 || !m->evict_next_use || !m->prefetch || m->prefetch_share >= 100)
        return WEFT_SUCCESS;
    weft_devahead_t *a = calloc(1, sizeof *a);
    if (!a) return WEFT_ERR_NOMEM;
    if (weft_upcoming_init(&a->upcoming) != WEFT_SUCCESS) {
        free(a);
        return WEFT_ERR_NOMEM;
    }
    a->max = max < AHEAD_MAX ? max : AHEAD_MAX;
    a->seen = -1;
    m->ahead = a;
    m->ctx->upcoming[m->dev->index] = &a->upcoming;
    return WEFT_SUCCESS;
}

void weft_devahead_stop(weft_devmgr_t *m)
{
    weft_devahead_t *a = m->ahead;
    if (!a) return;
    m->ctx->upcoming[m->dev->index] = NULL;
    weft_upcoming_fini(&a->upcoming);
    free(a);
    m->ahead = NULL;
}

int weft_devahead_inflight(const weft_devmgr_t *m) { return m->ahead ? m->ahead->n : 0; }

static void clear_marks(weft_devmgr_t *m);

void weft_devahead_prune(weft_context_t *ctx)
{
    for (int i = 1; i <= ctx->ndevices; i++) {
        weft_devahead_t *a = ctx->devmgr[i] ? ctx->devmgr[i]->ahead : NULL;
        if (!a) continue;
        /* After the scan in progress, if any (it held tasks of this
         * taskpool out of the list and could start copies for them after
         * this drain: their readers held past the wait, and a copy of the
         * host's version made current after host_only, when the user may
         * write that memory). Later scans find these tasks finished. */
        weft_upcoming_prune(&a->upcoming);
        /* A copy for a task that was cancelled may still be landing: the
         * wait's write-backs and host_only come after it (the manager polls
         * while one is in flight). */
        while (atomic_load(&a->busy) > 0) sched_yield();
        clear_marks(ctx->devmgr[i]);
    }
}

/* ---- one copy ahead ------------------------------------------------------ */

/* Under d's lock: the copy to fetch d from for a task inserted as `seq`,
 * NULL when there is nothing to fetch now: the device's copy is current or
 * arriving, or in use (`held` readers are the caller's own); the task will
 * read a version not produced yet; no copy a direct copy can reach holds
 * the newest version (a device without peer access: the task's own
 * stage-in goes through host). */
static weft_data_copy_t *source_locked(weft_devmgr_t *m, weft_data_t *d, uint64_t seq, int held)
{
    weft_data_copy_t *c = d->copies[m->dev->index];
    if (d->lost || d->host_access) return NULL;
    if (c && (weft_data_copy_at_newest_locked(d, c) || c->readers > held ||
              c->xfer == WEFT_XFER_UNDER || c->owner == WEFT_MEM_MANAGED))
        return NULL;
    if (weft_nextuse_writer_before_locked(&d->uses, seq)) return NULL;
    return weft_devlaunch_source_locked(m, d);
}

/* Under c's data lock: c no longer counts as fetched ahead. */
static void let_go_locked(weft_devmgr_t *m, weft_data_copy_t *c)
{
    if (!c->ahead_for) return;
    c->ahead_for = 0;
    atomic_fetch_sub(&m->ahead_held, 1);
    atomic_fetch_sub(&m->ahead_bytes, (long long)c->data->bytes);
    atomic_fetch_add(&m->ahead_let_go, 1);
}

/* The end of a taskpool: copies fetched ahead for tasks that ended without
 * pinning them (cancelled) stop holding room in the window. Copies of
 * tasks of other taskpools lose their mark too: the window only counts
 * them no more, they stay. Data locks only tried (the LRU lock is held). */
static void clear_marks(weft_devmgr_t *m)
{
    pthread_mutex_lock(&m->lru_lock);
    for (weft_list_t *l = weft_list_first(&m->lru); l; l = weft_list_next(&m->lru, l)) {
        weft_data_copy_t *c = weft_list_entry(l, weft_data_copy_t, lru);
        if (!weft_spin_trylock(&c->data->lock)) continue;
        if (c->xfer != WEFT_XFER_UNDER) let_go_locked(m, c);
        weft_data_unlock(c->data);
    }
    pthread_mutex_unlock(&m->lru_lock);
}

void weft_devahead_claim(weft_devmgr_t *m, weft_data_copy_t *c)
{
    weft_data_lock(c->data);
    let_go_locked(m, c);
    weft_data_unlock(c->data);
}

void weft_devahead_forget(weft_devmgr_t *m, weft_data_copy_t *c)
{
    if (!c->ahead_for) return;
    atomic_fetch_add(&m->dev->stats.prefetches_unused, 1);
    let_go_locked(m, c); /* unlinked: nobody else reaches c */
}

/* The copy landed (ok) or failed: its readers go, the destination becomes
 * current (or stays stale: weft_data_xfer_end_locked, and no longer held
 * ahead). */
static void end_copy(weft_devmgr_t *m, ahead_rec_t *r, int ok)
{
    weft_data_t *d = r->data;
    weft_data_lock(d);
    weft_data_copy_reader_release_locked(r->src);
    weft_data_xfer_end_locked(d, m->dev->index, r->version, ok);
    if (!ok) let_go_locked(m, r->dst);
    weft_data_copy_reader_release_locked(r->dst);
    weft_data_unlock(d);
    weft_trace_lane_slice(m->ctx->trace, &m->lanes[WEFT_STREAM_PREFETCH], r->t0, "prefetch ahead",
                          "xfer", "\"key\":%llu,\"seq\":%llu,\"ok\":%d", (unsigned long long)d->key,
                          (unsigned long long)r->seq, ok);
    weft_data__unref(d);
}

/* Enqueues the copy of d's newest version into c (held by one reader of
 * ours) on the prefetch stream. Returns 1 when it is in flight, 0 when
 * there was nothing to fetch after all (c's reader released). */
static int begin_copy(weft_devmgr_t *m, weft_data_t *d, weft_data_copy_t *c, uint64_t seq)
{
    weft_device_t *dev = m->dev;
    weft_devahead_t *a = m->ahead;
    weft_data_lock(d);
    weft_data_copy_t *src = source_locked(m, d, seq, 1);
    if (!src) {
        weft_data_copy_reader_release_locked(c);
        weft_data_unlock(d);
        return 0;
    }
    weft_data_copy_reader_acquire_locked(src);
    weft_data__retain(d);
    ahead_rec_t *r = &a->rec[a->n];
    *r = (ahead_rec_t){.data = d, .src = src, .dst = c, .seq = seq};
    r->version = weft_data_xfer_begin_locked(d, dev->index);
    r->t0 = weft_trace_stamp(m->ctx->trace);
    if (!c->ahead_for) {
        atomic_fetch_add(&m->ahead_held, 1);
        atomic_fetch_add(&m->ahead_bytes, (long long)d->bytes);
    }
    c->ahead_for = seq;
    weft_data_unlock(d);
    /* A failed prefetch is staged again when its task runs: a warning. */
    int rc = weft_devcopy_enqueue(WEFT_LOG_WARN, dev, WEFT_STREAM_PREFETCH, d, c, src);
    if (rc == WEFT_SUCCESS) rc = weft_device_event_record(dev, WEFT_STREAM_PREFETCH, &r->ev);
    if (rc != WEFT_SUCCESS) {
        /* The stream is in order: a later copy into c lands after this one. */
        end_copy(m, r, 0);
        return 0;
    }
    atomic_fetch_add(&dev->stats.prefetches, 1); /* its bytes: counted when enqueued */
    a->n++;
    atomic_fetch_add(&a->busy, 1);
    return 1;
}

/* 1 when `bytes` more may not be held ahead: max tiles are, or they would
 * take more of the zone than the tasks in flight leave (100 -
 * device_prefetch_share percent): in a zone of a few tiles, tiles fetched
 * ahead would only push out each other and the next task's. */
static int window_full(weft_devmgr_t *m, size_t bytes)
{
    weft_devahead_t *a = m->ahead;
    size_t room = weft_zone_capacity(m->dev->zone) / 100 * (size_t)(100 - m->prefetch_share);
    size_t held = (size_t)atomic_load(&m->ahead_bytes);
    return a->n >= a->max || atomic_load(&m->ahead_held) >= a->max || held + bytes > room;
}

/* What one look at a tile of an upcoming task did. */
typedef enum { AHEAD_NONE, AHEAD_STARTED, AHEAD_NO_ROOM } ahead_step_t;

/* Fetches d for task t when it is missing here and final for t.
 * AHEAD_NO_ROOM: the zone has no room but what is needed before t (later
 * tasks would find none either). */
static ahead_step_t prefetch_data(weft_devmgr_t *m, weft_task_t *t, weft_data_t *d)
{
    weft_data_lock(d);
    int wanted = source_locked(m, d, t->seq, 0) != NULL;
    weft_data_unlock(d);
    if (!wanted) return AHEAD_NONE;
    weft_use_t use = {.seq = t->seq, .priority = t->priority};
    weft_data_copy_t *c;
    /* A warning: a failure here is dropped, the task's own start reports it. */
    int rc = weft_devcopy_get_ahead(m, d, use, WEFT_LOG_WARN, &c);
    if (rc == WEFT_AGAIN) return AHEAD_NO_ROOM;
    if (rc != WEFT_SUCCESS) return AHEAD_NONE; /* the task's own start reports it */
    /* Making room may have taken long (a dirty victim written back): t may
     * have ended meanwhile (cancelled, run elsewhere). Past this point the
     * wait's drain waits for the copy (weft_devahead_prune). */
    if (weft_upcoming_gone(t)) {
        weft_data_lock(d);
        weft_data_copy_reader_release_locked(c);
        weft_data_unlock(d);
        return AHEAD_NONE;
    }
    return begin_copy(m, d, c, t->seq) ? AHEAD_STARTED : AHEAD_NONE;
}

/* ---- the manager's pass --------------------------------------------------- */

/* Marks in the copies whose event passed; returns how many. */
static int poll_copies(weft_devmgr_t *m)
{
    weft_devahead_t *a = m->ahead;
    weft_device_t *dev = m->dev;
    int ended = 0;
    for (int i = 0; i < a->n;) {
        ahead_rec_t *r = &a->rec[i];
        int rc = dev->ops->event_query(dev, &r->ev);
        if (rc == WEFT_AGAIN) {
            i++;
            continue;
        }
        dev->ops->event_destroy(dev, &r->ev);
        end_copy(m, r, rc == WEFT_SUCCESS);
        a->rec[i] = a->rec[--a->n];
        atomic_fetch_sub(&a->busy, 1);
        ended++;
    }
    a->landed += ended;
    return ended;
}

/* What a scan depends on: the tasks listed, those ended on this rank (a
 * version became final, a task's tiles were unpinned), and the copies
 * ahead that landed, were used or were freed (room in the window). Equal
 * to the last scan's: nothing new to fetch. */
static long long state_now(weft_devmgr_t *m)
{
    weft_context_t *ctx = m->ctx;
    return atomic_load_explicit(&m->ahead->upcoming.pushed, memory_order_relaxed) +
           atomic_load_explicit(&ctx->tasks_run, memory_order_relaxed) +
           atomic_load_explicit(&ctx->actions_done, memory_order_relaxed) +
           atomic_load_explicit(&ctx->tasks_cancelled, memory_order_relaxed) + m->ahead->landed +
           atomic_load_explicit(&m->ahead_let_go, memory_order_relaxed);
}

/* Walks the first upcoming tasks in run order, starting copies for their
 * reads until max are in flight or the zone has no room for them; returns
 * how many started. */
static int scan(weft_devmgr_t *m)
{
    weft_devahead_t *a = m->ahead;
    weft_task_t *t[AHEAD_SCAN];
    int n = weft_upcoming_take(&a->upcoming, t, AHEAD_SCAN), started = 0, stop = 0;
    for (int i = 0; i < n && !stop; i++) {
        for (int j = 0; j < t[i]->nflows && !stop; j++) {
            if (!(t[i]->flow[j].mode & WEFT_R) || weft_task_first_flow_of(t[i], j) != j) continue;
            stop = window_full(m, t[i]->flow[j].data->bytes);
            ahead_step_t r = stop ? AHEAD_NONE : prefetch_data(m, t[i], t[i]->flow[j].data);
            started += r == AHEAD_STARTED;
            stop |= r == AHEAD_NO_ROOM;
        }
    }
    weft_upcoming_put_back(&a->upcoming, t, n);
    return started;
}

int weft_devahead_pass(weft_devmgr_t *m, int fetch)
{
    weft_devahead_t *a = m->ahead;
    if (!a) return 0;
    int progress = poll_copies(m);
    if (!fetch || window_full(m, 0)) return progress;
    long long now = state_now(m);
    if (now == a->seen) return progress;
    a->seen = now;
    return progress + scan(m);
}
