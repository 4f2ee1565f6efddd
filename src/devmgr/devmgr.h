/* The device path of task execution: one manager per accelerator takes the
 * tasks chosen for its device by priority, stages their flows in (from the
 * newest copy: peer, host, or a device through host), launches their body
 * on an execution stream and publishes what they wrote. Device copies come
 * from the device zone; when it is full, clean copies are evicted first,
 * then dirty ones after their newest version was written back to host
 * (the comm thread, receiving into a device, evicts clean ones only).
 *
 * Lock order: a data lock may be held while taking a manager's LRU lock;
 * the reverse only with a trylock on the data (eviction walks the LRU). */
#ifndef WEFT_DEVMGR_DEVMGR_H
#define WEFT_DEVMGR_DEVMGR_H

#include <pthread.h>
#include <stdatomic.h>

#include "device/registry.h"
#include "sched/heap.h"
#include "sched/task.h"
#include "context/context.h"
#include "trace/trace.h"
#include "util/list.h"

typedef struct weft_inflight weft_inflight_t;
typedef struct weft_devahead weft_devahead_t; /* devahead.c */
typedef struct weft_devgate weft_devgate_t;   /* devgate.c */

typedef struct weft_devmgr {
    weft_context_t *ctx;
    weft_device_t *dev;
    pthread_t thread;
    /* Ready tasks chosen for this device (lock). */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    weft_heap_t ready;
    int stop;
    int joined; /* the thread was joined (mgr_stop ran) */
    /* Tasks between stage-in and publication (manager thread only). */
    weft_list_t inflight; /* weft_inflight_t by link, in the order they started */
    int ninflight, max_inflight;
    int inflight_per_stream; /* parameter device_inflight */
    int prefetch;            /* parameter device_prefetch */
    int evict_next_use;      /* parameter device_evict: next_use (1) or lru (0) */
    int prefetch_share;      /* parameter device_prefetch_share (percent) */
    size_t inflight_bytes;   /* zone bytes the tiles of the tasks in flight take */
    int batch_max;           /* parameter device_batch */
    int64_t batch_elems;     /* parameter device_batch_elems */
    int64_t room_wait_ns;    /* parameter device_room_wait_ms */
    int nheld;               /* records held READY for batches this pass */
    int next_exec;           /* round robin over the execution streams */
    /* Copies ahead of upcoming tasks (devahead.c; ahead NULL: off), and those
     * fetched ahead not used yet: arriving or in, marked copy->ahead_for. */
    weft_devahead_t *ahead;
    atomic_int ahead_held;
    atomic_llong ahead_bytes;  /* their bytes */
    atomic_llong ahead_let_go; /* marks cleared since the start: used, freed */
    /* Runtime-owned copies on this device, least recently used first (the
     * order ties are broken in under next_use too). */
    pthread_mutex_t lru_lock;
    weft_list_t lru;           /* copies on the device, least recently used first */
    atomic_int live_copies;    /* runtime-owned copies allocated from the zone */
    atomic_llong load_ns;      /* estimated work queued and in flight */
    int trace_track;           /* manager thread's track; streams follow it */
    weft_trace_lanes_t lanes[WEFT_MAX_STREAMS]; /* each stream's, over its track */
    atomic_int told_too_small; /* a task was sent elsewhere: its tiles never fit the zone */
    atomic_int told_dead;      /* a task was sent elsewhere: the device failed */
    atomic_int told_held;      /* a task was sent elsewhere: its room stayed held by others */
} weft_devmgr_t;

/* ---- devexec.c: managers and the device task path -------------------- */

/* Opens the devices the parameters ask for and starts their managers;
 * sets ctx->ndevices. WEFT_ERR_NODEV (logged) for a device asked for and
 * absent. Main thread, at weft_init. */
int weft_devexec_start(weft_context_t *ctx) __attribute__((warn_unused_result));
/* Stops the managers (no task may be left) and closes the devices. */
void weft_devexec_stop(weft_context_t *ctx);
/* Stops the managers' threads only, the devices staying open (weft_fini
 * after a disagreement: the comm engine, whose transports still hold
 * mappings made through the devices, closes before them); a later
 * weft_devexec_stop does the rest. */
void weft_devexec_halt(weft_context_t *ctx);
/* The device whose module pins host memory for every device of the rank:
 * the first that is not emulated; NULL when all are (an emu device's
 * memory is the host's). */
weft_device_t *weft_devexec_pin_device(const weft_context_t *ctx);
/* Pins [ptr, ptr + bytes) through dev's module, or fails as fault_inject's
 * host_pin asks (logged, naming `what` is pinned). */
int weft_devexec_host_pin(weft_context_t *ctx, weft_device_t *dev, void *ptr, size_t bytes,
                          const char *what) __attribute__((warn_unused_result));
/* devhostmem.c: opens ctx->hostmem, the pool of weft's host copies, with
 * its pinning rule (host_pin) and its limit (host_memory_use), once the
 * devices are open. */
void weft_devexec_hostmem_open(weft_context_t *ctx);
/* Hands a ready task to the device chosen for it; returns 0 when it runs
 * on the host (the caller schedules it), 1 when a device took it. */
int weft_devexec_submit(weft_context_t *ctx, weft_task_t *t);
/* Queues t on device dev's manager (1..ndevices), counting its load. */
void weft_devexec_queue(weft_context_t *ctx, weft_task_t *t, int dev);
/* ---- devgate.c: launch ahead of a landing --------------------------- */

/* Comm thread, once the pull of receive `recv` into device copy c is
 * enqueued (and before the receive can complete): hands the successors
 * that wait for nothing else and would run on c's device to its manager,
 * each gated on an event after the pull. Returns how many. */
int weft_devgate_ahead(weft_context_t *ctx, weft_task_t *recv, weft_data_copy_t *c);
/* The ready call of a gated task (its receive completed): opens the gate,
 * its inputs' loss checked first (a lost one fails its device). */
void weft_devgate_pass(weft_context_t *ctx, weft_task_t *t);
/* 1 while t is gated and its receive has not completed. */
int weft_devgate_closed(const weft_task_t *t);
/* 1 when c is the copy t's closed gate waits for. */
int weft_devgate_landing(const weft_task_t *t, const weft_data_copy_t *c);
/* Makes `stream` of m's device wait for t's pull. */
int weft_devgate_wait(weft_devmgr_t *m, weft_task_t *t, int stream);
/* At t's end: its gate freed. */
void weft_devgate_drop(weft_devmgr_t *m, weft_task_t *t);
/* A host task ended: its estimate leaves the host's load. */
void weft_devexec_host_done(weft_context_t *ctx, weft_task_t *t);

/* ---- devshare.c: devices shared by the ranks of a node ----------------- */

/* Collective over the ranks of this rank's node (all of them must call
 * it, ds NULL for a rank whose device opening failed: it counts as a rank
 * without devices). Sets each device's share: how many devices of the
 * node's ranks carry its identity and the least free memory they saw.
 * A non-zero status (logged) when this rank cannot take part fully. */
int weft_devshare_count(weft_context_t *ctx, weft_devices_t *ds)
    __attribute__((warn_unused_result));

/* ---- devselect.c: where a task runs ---------------------------------- */

/* The device index (0 host) that runs t: its affinity data's home device
 * when it has one, else the least estimated completion time; sets
 * t->est_ns. -1 when no body of t can run on this rank. */
int weft_devselect(weft_context_t *ctx, weft_task_t *t);
/* Another place than `device` that can run t: the host when t's class has
 * a CPU body, else another device that did not fail, whose empty zone
 * holds t's tiles and where t did not wait out its patience for room
 * (t->room_waited); -1 when there is none. */
int weft_devselect_instead(weft_context_t *ctx, const weft_task_t *t, int device);

/* ---- device_api.c: the public device calls and what serves them ------- */

/* The statistics lines of show_stats, one per device. */
void weft_devstats_print(weft_context_t *ctx);
/* Unpins what weft_host_pin pinned and the user did not unpin (the
 * devices are about to close). Main thread. */
void weft_host_unpin_all(weft_context_t *ctx);

/* ---- devflush.c: final versions into the user's memory --------------- */

/* When the newest version of d lives on a device only, writes it back to
 * the host copy (created if absent); a write-back pending since an earlier
 * failure is settled by its success, as at a wait: the host copy is then
 * the only current one (unless d keeps its device copies), and d may lose
 * its last reference (the pending list's). Main thread, between taskpools. */
int weft_devexec_flush_data(weft_data_t *d) __attribute__((warn_unused_result));
/* d's newest version, made on a device between taskpools, into the user's
 * host memory now, as a wait does (device copies then stale unless kept):
 * the user may read or write that memory next without a call. A failure
 * leaves d pending, retried as a wait's is. Main thread. */
int weft_devexec_flush_now(weft_data_t *d) __attribute__((warn_unused_result));
/* End of a taskpool: the write-backs pending from earlier waits are tried
 * again, then every touched data whose host copy is the user's memory
 * (MANAGED) gets its final version back there; each failure fails the
 * wait naming the data, and leaves it pending. A failed body's bytes are
 * not written over an older version the user's memory holds intact
 * (weft_data_older_host_locked): the recovery that follows goes back to it. */
void weft_devexec_flush(struct weft_taskpool *tp);
/* After the recovery: the data weft_devexec_flush left alone that did not
 * go back to their older version (a rank without the data's handle, a
 * collective that failed) get their final version written back as any. */
void weft_devexec_flush_kept(struct weft_taskpool *tp);
/* At d's release: tries again its pending write-back, if any, the last
 * try (its failure is logged as a lost version and recorded as the
 * context's error; the memory is the user's after the release). */
void weft_devexec_flush_release(weft_data_t *d);
/* A host acquire of d with WEFT_W (no read): what the program writes is
 * the newest version, so a pending write-back is given up, said (the next
 * wait called it "settled"). Main thread. */
void weft_devexec_flush_give_up(weft_data_t *d);
/* At weft_fini, before the devices stop: the last try of every pending
 * write-back (none when retry is 0: the devices stopped early after a
 * disagreement); a failure is logged as a lost version and recorded as the
 * context's error. Empties the list. Returns the first failure's status, 0
 * when none. */
int weft_devexec_flush_fini(weft_context_t *ctx, int retry);

/* ---- devpick.c: which ready task starts next -------------------------- */

/* The next ready task of m (NULL: none). With device_evict=next_use: of
 * the first ready tasks of the top priority, the one with the fewest bytes
 * to bring in, the earliest inserted among equals (the others go back);
 * with lru the first. Manager thread; takes m->lock, then data locks
 * without it. */
weft_task_t *weft_devpick_next(weft_devmgr_t *m);
/* 1 when t, started now beside the tasks in flight, would take their
 * tiles past device_prefetch_share of the zone (next_use only): it waits
 * for one to end. Sets *bytes, t's zone bytes. Manager thread. */
int weft_devpick_past_budget(weft_devmgr_t *m, const weft_task_t *t, size_t *bytes);

/* ---- devahead.c: copies ahead of upcoming tasks ----------------------- */

/* The end of a taskpool: the finished tasks leave the devices' lists of
 * upcoming tasks (their data may be released now). Main thread. */
void weft_devahead_prune(weft_context_t *ctx);
/* A task pinned copy c of m's device: a copy fetched ahead is used and no
 * longer counts against device_prefetch_ahead. Not with c's data locked. */
void weft_devahead_claim(weft_devmgr_t *m, weft_data_copy_t *c);
/* Copy c of m's device goes back to the zone: fetched ahead and never
 * used, it counts as unused. The copy is unlinked (no lock needed). */
void weft_devahead_forget(weft_devmgr_t *m, weft_data_copy_t *c);

/* ---- devevict.c and devcopy.c: device copies and copies across devices - */

/* A copy of d on m's device with one reader taken for the caller,
 * allocated from the zone when absent, evicting clean copies only (stale,
 * or another copy holds their version) as needed. WEFT_AGAIN when no
 * clean copy can go now (the rest in use, or dirty): the comm thread
 * calls this to receive into the device, and evicting a dirty copy means
 * first copying it to host, synchronously; every transfer of the rank
 * would stall meanwhile, and for ever when that host copy is busy with
 * bytes only the comm thread moves. The receive then lands on the host;
 * the device manager writes dirty copies back when it needs room itself.
 * WEFT_AGAIN too when d's copy there is being written (UNDER: a copy
 * ahead, a stage-in or another landing): its bytes would land after the
 * receive's and stay labelled with the received version
 * (docs/COHERENCY.md rule 6). WEFT_ERR_DEVMEM when d is larger than the
 * zone or the device refuses its memory (device_alloc=tile). Any thread;
 * not with d locked. */
int weft_devcopy_get_nowait(weft_devmgr_t *m, weft_data_t *d, weft_data_copy_t **out)
    __attribute__((warn_unused_result));
/* Before every use: any copy may be evicted (data/nextuse.h's run order). */
#define WEFT_USE_ANY ((weft_use_t){.seq = 0, .priority = INT32_MAX})
/* The same for a task started ahead of those in flight (a prefetch):
 * with device_evict=next_use, only copies whose data is next used after
 * `after` (the task's own use) may be evicted for it (WEFT_USE_ANY: any),
 * so a fetch never pushes out what is needed sooner; WEFT_AGAIN when
 * nothing else can go. Dirty victims are written back first; when that
 * fails for every victim that could go, the failure is returned, named at
 * `level` (a warning for a prefetch ahead of its task, which drops it). */
int weft_devcopy_get_ahead(weft_devmgr_t *m, weft_data_t *d, weft_use_t after, int level,
                           weft_data_copy_t **out) __attribute__((warn_unused_result));
/* WEFT_SUCCESS when the tiles of t fit in m's zone when it is empty; else
 * WEFT_ERR_DEVMEM after an error naming the task, the bytes its tiles
 * need and the zone's capacity: the task can never run on that device. */
int weft_devcopy_task_fits(weft_devmgr_t *m, const weft_task_t *t)
    __attribute__((warn_unused_result));
/* Zone bytes the tiles of t take on m's device (its distinct flows; none
 * for a flow whose copy there is the user's memory). */
size_t weft_devcopy_task_bytes(weft_devmgr_t *m, const weft_task_t *t);
/* Zone bytes that copies of t's tiles take on m's device now (those a try
 * to pin its flows left there). */
size_t weft_devcopy_task_resident(weft_devmgr_t *m, const weft_task_t *t);
/* Copies of m's device that some task, transfer or send holds now (they
 * cannot be evicted until it lets go). Manager thread. */
int weft_devcopy_pinned(weft_devmgr_t *m);
/* Makes the host copy of d hold the newest version (allocating it for a
 * device-only data), writing it back from the device that holds it. With
 * out non-NULL a reader is taken on the host copy for the caller. Waits
 * for the copy. A failed copy is logged at `level`: a warning where the
 * caller recovers (an eviction takes another victim). Any thread; not
 * with d locked. */
int weft_devcopy_to_host(int level, weft_data_t *d, weft_data_copy_t **out)
    __attribute__((warn_unused_result));
/* The host copy a host task uses for a flow of this mode, with a reader
 * taken: newest for reads (written back from a device when needed),
 * allocated for a first write. */
int weft_devcopy_host_flow(weft_data_t *d, int mode, weft_data_copy_t **out)
    __attribute__((warn_unused_result));
/* weft_devcopy_host_flow for a write, without waiting (the comm thread
 * serves every transfer of its rank and must not wait on one): WEFT_AGAIN
 * while a write-back of the previous version is still landing in the host
 * copy; ask again later. WEFT_ERR_NOMEM: no host memory. */
int weft_devcopy_host_write_nowait(weft_data_t *d, weft_data_copy_t **out)
    __attribute__((warn_unused_result));

/* A write-back of a data's newest version to its host copy, enqueued on
 * the stage-out stream of the device holding it and not waited for. */
typedef struct weft_devcopy_pull {
    weft_device_t *by;     /* the device whose stream copies */
    weft_event_t ev;       /* recorded after the copy */
    weft_data_copy_t *src; /* the copy read: a reader held until the end */
    uint32_t version;      /* the version coming to the host copy (UNDER meanwhile) */
} weft_devcopy_pull_t;
/* weft_devcopy_to_host without waiting, for the comm thread: WEFT_SUCCESS
 * with *out set (a reader taken) when the host copy holds the newest
 * version already; WEFT_SUCCESS with *out NULL when the copy was enqueued:
 * once p->ev is over, call weft_devcopy_pull_end. WEFT_AGAIN: the host copy
 * is busy (bytes landing, a task writing it): ask again later. Errors:
 * WEFT_ERR_NOMEM, WEFT_ERR_DEVICE (the newest version is lost with its
 * device), WEFT_ERR_INVALID / WEFT_ERR_INTERNAL (no version exists, logged),
 * the copy's enqueue failure. Not with d locked. */
int weft_devcopy_pull_begin(weft_data_t *d, weft_devcopy_pull_t *p, weft_data_copy_t **out)
    __attribute__((warn_unused_result));
/* Ends the pull p with the status of its event: the host copy holds the
 * version (*out, a reader taken) or, on failure, is invalid. Returns
 * status. */
int weft_devcopy_pull_end(weft_data_t *d, weft_devcopy_pull_t *p, int status,
                          weft_data_copy_t **out);
/* Evicts every copy of the device that nothing uses now (dirty ones
 * written back first): the zone's free space in one piece again. Returns
 * how many went, or a negative status when a write-back failed. */
int weft_devcopy_evict_all(weft_devmgr_t *m);
/* Marks a copy just used (most recently used end of its LRU). */
void weft_devcopy_touch(weft_devmgr_t *m, weft_data_copy_t *c);
/* One synchronous 2D copy of d between copies on devices (at most one of
 * them the host) on the stream of `by`; counts the bytes. A failure of
 * the copy itself is logged at `level` (weft_devcopy_enqueue). */
int weft_devcopy_sync(int level, weft_context_t *ctx, weft_device_t *by, int stream, weft_data_t *d,
                      weft_data_copy_t *dst, weft_data_copy_t *src);
/* Enqueues the copy of d from src to dst on `stream` of `by`: the data's
 * stage function for host <-> device when it has one, else the module's
 * 2D copy. An injected failure (fault site device_copy) is logged at
 * `level`: a warning where the caller recovers (a prefetch, staged again
 * when its task runs). */
int weft_devcopy_enqueue(int level, weft_device_t *by, int stream, weft_data_t *d,
                         weft_data_copy_t *dst, weft_data_copy_t *src);

#endif
