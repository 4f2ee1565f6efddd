/* A task and its life: created by insertion, held back by a count of
 * unfinished predecessors, pushed to a ready queue when the count reaches
 * zero, run, then completed: successors released, references dropped. */
#ifndef WEFT_SCHED_TASK_H
#define WEFT_SCHED_TASK_H

#include <stdatomic.h>
#include <stdint.h>

#include "data/data.h"
#include "util/inbody.h"
#include "util/log.h"
#include "util/spin.h"
#include "util/tname.h"
#include "util/vec.h"
#include "weft/weft.h"

typedef struct weft_flow {
    weft_data_t *data;
    int mode;               /* WEFT_R / WEFT_W / WEFT_RW */
    weft_data_copy_t *copy; /* the copy the body uses, on the task's device */
    uint32_t out_version;   /* version a write publishes; 0: the next one */
} weft_flow_t;

/* Kinds of work a task structure carries: a user body, or a runtime action
 * (a network send or receive, a write-back) scheduled like a task so that
 * the dependency machinery orders it. */
typedef enum weft_task_kind {
    WEFT_TASK_BODY = 0,
    WEFT_TASK_SEND = 1,
    WEFT_TASK_RECV = 2
} weft_task_kind_t;

struct weft_taskpool;

struct weft_task {
    const weft_task_class_t *cls;
    struct weft_taskpool *tp;
    uint64_t seq; /* insertion number within the context */
    weft_task_kind_t kind;
    int priority;
    int device;      /* device index it runs on (0 = host) */
    int affinity;    /* flow whose data decides where it runs (WEFT_AFFINITY), -1 none */
    int64_t est_ns;  /* estimated run time where it was placed (device selection) */
    int on_rank;     /* WEFT_ON_RANK: the rank it runs on, -1 none */
    int device_hint; /* WEFT_DEVICE_HINT: the device it runs on when it can, -1 none */
    /* Devices (a bit each) where it waited its patience for room that
     * copies held elsewhere kept taken (devmgr/devexec.c): it goes to none
     * of them again, so that it cannot bounce between two full devices. */
    uint32_t room_waited;
    /* Its body called an accessor with a bad index or size (bit 1), or
     * weft_task_error (bit 2): the task fails whatever the body returns
     * (set on the body's thread, read at finish). */
    atomic_int misuse;
    /* Its class's flops estimate once asked (weft_taskrun_flops: for its
     * placement, or before its writes are published, since a bad estimate
     * fails the task); -1 before. */
    double flops;
    /* Its body runs now (set around the call, batches' members too): a
     * thread the body started may say why it fails only then (a pointer
     * kept past the body names a task that may be another by now). */
    atomic_int in_body;
    /* A device manager started it: staging its inputs ahead is over
     * (sched/upcoming.h). Set by the manager, read by any thread. */
    atomic_int dev_started;
    /* Handed to a device manager before its last input, a tile received
     * from another rank, landed (devmgr/devgate.c); NULL: not gated. */
    struct weft_devgate *gate;
    /* A graph's task: the indices it was made for, by which messages name
     * it (util/tname.h); nidx 0 for an inserted task. */
    int nidx;
    int idx[WEFT_TNAME_MAX_IDX];
    int nflows;
    weft_flow_t flow[WEFT_MAX_FLOWS];
    int nvalues;
    uint16_t value_off[WEFT_MAX_VALUES], value_len[WEFT_MAX_VALUES];
    unsigned char values[WEFT_MAX_VALUES * WEFT_MAX_VALUE_BYTES];
    void *workspace; /* per-task scratch on its device, set by the device */
    size_t workspace_bytes;
    void *stream; /* device stream handle while it runs */
    void *blas, *solver;
    void *action;         /* runtime action argument (comm layer) */
    weft_body_fn body_fn; /* the body a device launch runs (through the exec layer) */
    int body_rc;          /* what the body returned (or the injected failure) */
    int body_ran;         /* the body's own code ran (or task_skip pretended it did): the
                             stats count a task run only then (not one whose inputs failed
                             to arrive, nor an injected failure), and a failed one may have
                             changed the bytes it writes (api/recover.c) */
    int cancelled;        /* a version it reads was not produced: it ends without running */
    /* A batch's first task carries the batch while its launch runs. */
    struct weft_task *const *batch;
    int nbatch;
    weft_batch_fn batch_fn;

    atomic_int ndeps; /* unfinished predecessors + 1 while inserting */
    atomic_int refs;
    weft_spin_t lock; /* guards done and the successor list */
    int done;
    weft_vec_t succ;                  /* struct weft_task *, first in succ_inline */
    struct weft_task *succ_inline[4]; /* most tasks have few successors: no malloc */
    struct weft_task *next;           /* free list / queue link */
    struct weft_task_pool *pool;
    /* The first error line a thread logged while it staged its inputs, ran
     * its body or completed it (util/log.h): its failure record's cause. */
    weft_log_cause_t cause;
};

typedef struct weft_task weft_task_t;

/* Recycles task structures: one thread (the inserting one) allocates, any
 * thread frees. Freed tasks go onto a lock-free stack that the allocating
 * thread takes whole when its private list runs dry (taking the whole stack
 * at once is what makes the plain CAS push safe from ABA). */
typedef struct weft_task_pool {
    _Atomic(weft_task_t *) returned;
    weft_task_t *local;
    struct weft_task_slab *slabs; /* where the structures come from (sched/task_slab.h) */
    atomic_llong live;            /* tasks allocated and not freed (runtime metadata) */
    size_t made;                  /* structures made and not freed: live or cached (owner) */
    size_t trim_idle;             /* made when a trim last freed nothing (owner) */
} weft_task_pool_t;

void weft_task_pool_init(weft_task_pool_t *p);
/* Frees the cached structures; every task of the pool must be gone. */
void weft_task_pool_fini(weft_task_pool_t *p);

/* Frees the slabs all of whose structures are cached, but the one being
 * carved, while more than `keep` are made (without slabs, under
 * AddressSanitizer: the cached structures past the first `keep`); owner
 * thread only. Made structures may stay above keep (a slab with one live
 * task, or the slab being carved) or fall below it (a slab is freed whole).
 * The cache otherwise stays at the largest number of tasks ever alive
 * at once (a long chain inserted far ahead of its workers: 76k tasks,
 * 117 MB, kept to weft_fini). */
void weft_task_pool_trim(weft_task_pool_t *p, size_t keep);

/* From the pool (NULL: plain malloc/free); owner thread only. */
weft_task_t *weft_task_alloc(weft_task_pool_t *pool);

/* How messages name t: "gemm(4,2,1)" or "gemm #12" (util/tname.h). */
static inline weft_tname_t weft_task_name(const weft_task_t *t)
{
    return weft_tname(t->cls->name, (unsigned long long)t->seq, t->idx, t->nidx);
}

/* The mark of a thread that runs t's body (util/inbody.h). */
static inline weft_inbody_t weft_task_inbody(weft_task_t *t)
{
    return (weft_inbody_t){.cls = t->cls->name,
                           .seq = (unsigned long long)t->seq,
                           .idx = t->idx,
                           .nidx = t->nidx,
                           .misuse = &t->misuse};
}

/* First flow index that names the same data as flow i: a task may list a
 * tile twice, and must then use one copy and publish one new version. */
static inline int weft_task_first_flow_of(const weft_task_t *t, int i)
{
    for (int j = 0; j < i; j++)
        if (t->flow[j].data == t->flow[i].data) return j;
    return i;
}

/* What t's end leaves in the copy a flow used (weft_data_publish): its new
 * version when t wrote it and succeeded (ok), no version's bytes when its
 * body ran on it to write and failed, nothing otherwise. */
static inline weft_publish_t weft_task_publish_what(const weft_task_t *t, int writes, int ok)
{
    if (!writes) return WEFT_PUBLISH_READ;
    return ok ? WEFT_PUBLISH_WRITTEN : t->body_ran ? WEFT_PUBLISH_SPOILED : WEFT_PUBLISH_READ;
}
/* A task may name one data in several flows (the same tile as an input and
 * the output): it then uses one copy of the data and publishes one version,
 * and what reads or writes that copy (the stage-in to a device, the
 * publication of a write, the failure's lost marks) looks at the first of
 * those flows. Each of them therefore takes the union of their R/W modes: a
 * task that writes the data in any flow writes it, one that reads it in any
 * flow reads it. Both front-ends apply it to every task they keep
 * (insertion after lowering WEFT_REDUX flows; a graph's tasks as they are
 * parsed, on every rank that parses them); a flow with another mode bit
 * (WEFT_REDUX) is left as it is. */
void weft_task_merge_repeated_flows(weft_task_t *t);
void weft_task_retain(weft_task_t *t);
/* Drops a reference; the last one releases the data references and frees. */
void weft_task_unref(weft_task_t *t);

/* Makes `succ` wait for `pred` unless pred is already done. Returns 1 if an
 * edge was added. Called while succ is being inserted. */
int weft_task_add_edge(weft_task_t *pred, weft_task_t *succ);

/* 1 once weft_task_complete marked t done: an edge from it adds nothing. */
int weft_task_is_done(weft_task_t *t);
/* Marks t done and calls ready(arg, s) for each successor s whose last
 * predecessor this was. */
typedef void (*weft_task_ready_fn)(void *arg, weft_task_t *ready);
void weft_task_complete(weft_task_t *t, weft_task_ready_fn ready, void *arg);

/* Drops the insertion guard of t; returns 1 when t has no pending
 * predecessors and must be scheduled by the caller. */
int weft_task_insert_done(weft_task_t *t);

#endif
