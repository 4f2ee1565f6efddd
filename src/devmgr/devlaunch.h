/* The record of a task in flight on a device and its own steps there
 * (devlaunch.c): what the manager's task path (devexec.c) and its batches
 * (devbatch.c) share. Internal to devmgr/. */
#ifndef WEFT_DEVMGR_DEVLAUNCH_H
#define WEFT_DEVMGR_DEVLAUNCH_H

#include "devmgr/devmgr.h"

/* A stage-in copy into a device copy, finished when its event is. */
typedef struct weft_stage_rec {
    weft_data_t *data;
    weft_data_copy_t *src, *dst;
    uint32_t version;
} weft_stage_rec_t;

/* WAIT: flows pinned, some copy still receiving another task's transfer.
 * READY: could be launched, held for a batch (launched after the pass).
 * EXEC: copies and kernel enqueued on one execution stream.
 * DONE: failed before its launch, its task finished: dropped next pass.
 * GATED: failed before its launch, launched ahead of a receive that has
 * not completed (devgate.c): it ends once that receive did. */
typedef enum { PHASE_WAIT, PHASE_READY, PHASE_EXEC, PHASE_DONE, PHASE_GATED } phase_t;

/* The tasks launched by one batch-body call; its first task's record
 * polls the kernel's event and hands the result to the others. */
typedef struct weft_batch {
    int refs;      /* records still holding it */
    int done, rc;  /* set by the first record once the kernel's event is */
    int launch_rc; /* what the launch of the batch body returned */
    int n;
    weft_task_t *tasks[];
} weft_batch_t;

struct weft_inflight {
    weft_task_t *task;
    phase_t phase;
    size_t zone_bytes;     /* its tiles' share of the zone (prefetch budget) */
    int stream;            /* the kernel's */
    int copy_stream;       /* the stage-in copies' */
    weft_event_t stage_ev; /* after the stage-in copies */
    weft_event_t ev;       /* after the kernel */
    int has_stage_ev, has_event;
    int ev_rc; /* the kernel's event seen over while its gate was closed; else WEFT_AGAIN */
    int rc;    /* a launch error, reported once the stream is past it */
    int nstage;
    weft_stage_rec_t stage[WEFT_MAX_FLOWS];
    int64_t start_ns;
    uint64_t stage_t0; /* trace: when the stage-in copies were enqueued */
    int64_t stage_bytes;
    weft_batch_t *batch; /* launched in this batch (NULL: alone) */
    weft_list_t link;    /* in the manager's inflight list */
};

/* The record of `link` in a manager's inflight list, NULL for none. */
static inline weft_inflight_t *weft_inflight_of(weft_list_t *link)
{
    return link ? weft_list_entry(link, weft_inflight_t, link) : NULL;
}

/* The record after f in m's inflight list, NULL at its end. */
static inline weft_inflight_t *weft_inflight_next(weft_devmgr_t *m, weft_inflight_t *f)
{
    return weft_inflight_of(weft_list_next(&m->inflight, &f->link));
}

/* What the device's launch hands a kernel, kept in the task for the
 * accessors its body calls (weft_task_stream, weft_task_blas_handle...):
 * the device module knows streams, not tasks. */
static inline void weft_devlaunch_take_env(weft_task_t *t, const weft_device_env_t *env)
{
    t->stream = env->stream_handle;
    t->blas = env->blas;
    t->solver = env->solver;
    t->workspace = env->workspace;
    t->workspace_bytes = env->workspace_bytes;
}

/* Every flow of t gets its device copy, pinned by a reader; all or none.
 * A task started while others are in flight is a prefetch: it may not
 * evict what is needed before it. */
int weft_devlaunch_pin_flows(weft_devmgr_t *m, weft_task_t *t);
/* The execution stream for t (the urgent one for a task that outranks
 * the running work, else round robin). */
int weft_devlaunch_pick_stream(weft_devmgr_t *m, const weft_task_t *t);
/* Under d's lock: the copy to stage d in from, a peer device's if allowed,
 * else the host's; NULL when only a device without peer access holds the
 * newest version. */
weft_data_copy_t *weft_devlaunch_source_locked(weft_devmgr_t *m, weft_data_t *d);
/* 1 while a copy t reads is receiving bytes for another task. */
int weft_devlaunch_inputs_arriving(const weft_task_t *t);
/* Enqueues f's stage-in copies; f's stream waits for them. */
int weft_devlaunch_stage_inputs(weft_devmgr_t *m, weft_inflight_t *f);
/* Stream, copies and f's own body, enqueued; f in EXEC on success. */
int weft_devlaunch_stage_and_launch(weft_devmgr_t *m, weft_inflight_t *f);
/* f's stage-in copies are over (ok: they landed): sources released,
 * destinations current, or stale when not ok. */
void weft_devlaunch_finish_stage(weft_devmgr_t *m, weft_inflight_t *f, int ok);
/* After a failed stage-in: waits for what was enqueued, unpins f's flows. */
void weft_devlaunch_undo_stage(weft_devmgr_t *m, weft_inflight_t *f);

/* Whether the ranks diverged (stf/taskrun.h): then f's task starts
 * nothing, neither its copies (an eviction they make writes a version
 * into the program's memory) nor its body; its flows are let go and it is
 * marked cancelled, for the caller to end (1). 0: go on. */
int weft_devlaunch_halted(weft_devmgr_t *m, weft_inflight_t *f);
/* Whether f's stage-in copies ended (1; on another stream than the
 * kernel's, a failure fails the task: f->rc) or run on (0). */
int weft_devlaunch_stage_landed(weft_devmgr_t *m, weft_inflight_t *f);
/* What f's kernel event says (WEFT_AGAIN: not over), kept in f->ev_rc
 * once over: a task launched ahead of its receive is polled while its
 * gate is closed, so that its end follows the gate. */
int weft_devlaunch_kernel_poll(weft_devmgr_t *m, weft_inflight_t *f);
/* The outcome of f's kernel, WEFT_AGAIN while it runs. */
int weft_devlaunch_kernel_outcome(weft_devmgr_t *m, weft_inflight_t *f);
/* f's kernel is over with rc: stage-in finished, written flows published,
 * readers released, statistics and trace, then the task finished. */
void weft_devlaunch_end(weft_devmgr_t *m, weft_inflight_t *f, int rc);
/* The task leaves the device: its load and the scheduler's accounts. */
void weft_devlaunch_finish_task(weft_devmgr_t *m, weft_task_t *t, int rc);
/* A record is done with its batch (NULL: none); the last frees it. */
void weft_devlaunch_batch_release(weft_batch_t *b);

#endif
