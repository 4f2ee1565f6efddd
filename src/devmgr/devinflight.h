/* What the device managers' task path (devexec.c) shares with its
 * batches (devbatch.c): the record of a task in flight on a device and
 * the steps that stage and launch it. Internal to those two files. */
#ifndef WEFT_DEVMGR_DEVINFLIGHT_H
#define WEFT_DEVMGR_DEVINFLIGHT_H

#include "devmgr/devmgr.h"

/* A transfer into a device copy, finished when its event is. */
typedef struct weft_xfer_rec {
    weft_data_t *data;
    weft_data_copy_t *src, *dst;
    uint32_t version;
} weft_xfer_rec_t;

/* WAIT: flows pinned, some copy still receiving another task's transfer.
 * READY: could be launched, held for a batch (launched after the pass).
 * EXEC: copies and kernel enqueued on one execution stream.
 * DONE: failed before its launch, its task finished: dropped next pass. */
typedef enum { PHASE_WAIT, PHASE_READY, PHASE_EXEC, PHASE_DONE } phase_t;

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
    int stream;           /* the kernel's */
    int copy_stream;      /* the stage-in copies' */
    weft_event_t xfer_ev; /* after the stage-in copies */
    weft_event_t ev;      /* after the kernel */
    int has_xfer_ev, has_event;
    int rc; /* a launch error, reported once the stream is past it */
    int nxfer;
    weft_xfer_rec_t xfer[WEFT_MAX_FLOWS];
    int64_t start_ns;
    uint64_t xfer_t0; /* trace: when the stage-in copies were enqueued */
    int64_t xfer_bytes;
    weft_batch_t *batch; /* launched in this batch (NULL: alone) */
    weft_inflight_t *next;
};

/* What the device's launch hands a kernel, kept in the task for the
 * accessors its body calls (weft_task_stream, weft_task_blas_handle...):
 * the device module knows streams, not tasks. */
static inline void weft_devexec_take_env(weft_task_t *t, const weft_device_env_t *env)
{
    t->stream = env->stream_handle;
    t->blas = env->blas;
    t->solver = env->solver;
    t->workspace = env->workspace;
    t->workspace_bytes = env->workspace_bytes;
}

/* ---- devexec.c ------------------------------------------------------- */

/* The execution stream for t (the urgent one for a task that outranks
 * the running work, else round robin). */
int weft_devexec_pick_stream(weft_devmgr_t *m, const weft_task_t *t);
/* 1 while a copy t reads is receiving bytes for another task. */
int weft_devexec_inputs_arriving(const weft_task_t *t);
/* Enqueues f's stage-in copies; f's stream waits for them. */
int weft_devexec_stage_inputs(weft_devmgr_t *m, weft_inflight_t *f);
/* Stream, copies and f's own body, enqueued; f in EXEC on success. */
int weft_devexec_stage_and_launch(weft_devmgr_t *m, weft_inflight_t *f);
/* After a failed stage-in: waits for what was enqueued, unpins f's flows. */
void weft_devexec_undo_stage(weft_devmgr_t *m, weft_inflight_t *f);
/* The task leaves the device: its load and the scheduler's accounts. */
void weft_devexec_finish_task(weft_devmgr_t *m, weft_task_t *t, int rc);

/* ---- devbatch.c ------------------------------------------------------ */

/* The batch body t would go out with on m's device, or NULL. */
weft_batch_fn weft_devbatch_body(const weft_devmgr_t *m, const weft_task_t *t);
/* Launches the records held READY, in batches; returns the tasks launched. */
int weft_devbatch_launch(weft_devmgr_t *m);
/* A record is done with its batch (NULL: none); the last frees it. */
void weft_devbatch_release(weft_batch_t *b);

#endif
