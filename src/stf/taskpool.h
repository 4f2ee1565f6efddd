/* A taskpool: the tasks inserted between its creation and a wait, and the
 * data they touched (to reset dependency tracking and report leaks). */
#ifndef WEFT_STF_TASKPOOL_H
#define WEFT_STF_TASKPOOL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "context/context.h"
#include "stf/failure.h"
#include "context/seqlog.h"

struct weft_taskpool {
    uint32_t tag; /* util/handle.h: WEFT_HANDLE_TASKPOOL; first field */
    weft_context_t *ctx;
    char name[64];
    atomic_long pending;         /* inserted here and not completed */
    atomic_long hold_low;        /* pending an insertion held back waits for; 0: none */
    long hold_cap;               /* after a hold gave up (idle): the bound, doubled; 0: none */
    atomic_long nrun;            /* tasks run by this rank */
    atomic_long nended;          /* body tasks of this rank ended: run, failed or cancelled */
    long ninserted_local;        /* body tasks kept by this rank (main thread) */
    long ended_before;           /* ninserted_local when the last wait returned: the
                                    progress line counts the tasks since */
    _Atomic double flops_done;   /* estimated flops of the finished tasks */
    double t_first, last_gflops; /* first insertion since the last wait; its rate */
    int refused;                 /* an insertion refused since the last wait (main thread) */
    double cpu_first;            /* the inserting thread's CPU time then */
    double progress_due;         /* when rank 0's next progress line is due, for the
                                    insertion and the wait alike (main thread); 0: no
                                    line (progress off, another rank) */
    pthread_mutex_t lock;
    pthread_cond_t done;
    int waiting;
    uint64_t epoch;     /* tags data touched since the last wait */
    uint64_t wave;      /* the same, unique in the context (remote inference's views) */
    weft_vec_t touched; /* weft_data_t *, retained: read through weft_taskpool_touched */
    weft_vec_t writers; /* weft_data_t * (retained by touched) whose record holds a last
                           writer that may have ended, oldest first from writers_head */
    size_t writers_head;
    weft_seqlog_t seq;  /* insertion log for the cross-rank sequence check (nranks > 1) */
    const weft_task_class_t *seq_cls; /* the class last logged, its name, the name's hash */
    const char *seq_cls_name;
    uint64_t seq_cls_hash;
    int inserting_own;       /* the insertion under way is weft's own (a reduction's init or
                                fold, weft_insert_by_weft): its log entry says so */
    int mismatch;            /* the sequence check failed: tasks may never finish */
    int diverged_said;       /* an insertion refused for the divergence was said (main thread) */
    int ptg;                 /* a graph went in since the last wait (weft_ptg_settle) */
    long long let_go_at;     /* tasks alive past which the insertion lets go of the ended
                                readers of tp's data (weft_taskpool_let_go); 0 after a wait */
    long number;             /* creation order in the context, from 1 */
    weft_failure_rec_t fail; /* failed and cancelled tasks of the current wave */
    weft_vec_t redux;        /* weft_data_t *, retained: data with partial results not yet combined
                                (stf/redux.c) */
};
/* A call finds a handle's context where weft_handle_context looks for it. */
_Static_assert(offsetof(struct weft_taskpool, ctx) == offsetof(weft_handle_head_t, ctx),
               "the context of a handle follows its tag (context/context.h)");

/* The i-th data tp touched since the last wait (i < tp->touched.n). */
static inline weft_data_t *weft_taskpool_touched(const weft_taskpool_t *tp, size_t i)
{
    return *(weft_data_t **)weft_vec_at(&tp->touched, i);
}

/* Tasks inserted or refused since tp's last wait: whether a free or
 * weft_fini must wait for tp, and whether a graph may take its wave. A
 * refusal counts because it is an entry of the sequence the ranks compare,
 * as an insertion is: the answer is the same on every rank, also when one
 * rank refused what the others inserted, so every rank enters the same
 * collective (where the refusal is named) instead of some waiting and
 * others not. */
static inline int weft_taskpool_unwaited(const weft_taskpool_t *tp)
{
    /* refused: on one rank no sequence is kept, and a class refused by
     * every rank alike logs no entry; the outcome must not depend on it. */
    return tp->t_first > 0 || tp->refused || weft_seqlog_count(&tp->seq) > 0;
}

/* A task of tp finished (any thread): wakes the waiter on the last one. */
void weft_taskpool_task_done(weft_taskpool_t *tp);
/* Frees tp's memory only: no wait, no reset of the data it touched. */
void weft_taskpool_destroy(weft_taskpool_t *tp);
/* Blocks until every task of tp finished (main thread), the watchdog
 * looking at the wait when it is on. */
void weft_taskpool_wait_tasks(weft_taskpool_t *tp);
/* After an insertion (main thread): with more than sched_pending_max
 * tasks pending, returns once they fell to half of it, running ready
 * tasks meanwhile. Never a deadlock, on any number of ranks: every rank inserts
 * the same sequence, and a task depends only on tasks before it, so the
 * earliest task pending on any rank has every rank past it and its
 * predecessors ended, and runs (docs/ARCHITECTURE.md). When the sequences
 * may differ (a misuse) that does not hold: a hold that sees nothing
 * progress here for a second gives up and doubles the bound, so that the
 * wait can say so. */
void weft_taskpool_hold(weft_taskpool_t *tp);
/* Wakes a wait on tp to look at its conditions again (any thread). */
void weft_taskpool_wake(weft_taskpool_t *tp);
/* Every task is done: drops the dependency records of the data tp touched
 * and forgets them (main thread). */
void weft_taskpool_reset_tracking(weft_taskpool_t *tp);
/* Main thread, while inserting: lets go of the readers that ended in the
 * records of the data tp touched (weft_stf_rec_drop_ended) once the tasks
 * alive in the context pass tp->let_go_at, then sets it to twice what is
 * left, and at least that plus the larger of sched_window and the data
 * touched: the tasks a taskpool holds stay within a few times those it
 * has in flight, at O(1) a task. */
void weft_taskpool_let_go(weft_taskpool_t *tp);
/* Main thread, when an insertion made a task of tp d's last writer:
 * queues d once, then lets go of the last writers that ended of the two
 * oldest data queued (a record held its writer until the next write of
 * the data or tp's wait, so a taskpool that wrote each of 3 million tiles
 * once held 3 million ended tasks, 5 GB). One not ended goes to the back:
 * with two looked at for each one queued, the queue stays within about
 * twice the tasks in flight. Out of host memory: d keeps its writer until
 * its next write or the wait, as before. */
#define WEFT_TASKPOOL_WRITERS_KEPT 4096 /* queued before the queue is looked at */
void weft_taskpool_writer_set(weft_taskpool_t *tp, weft_data_t *d);
/* Remembers d as touched by tp (main thread); retains it once. */
int weft_taskpool_touch(weft_taskpool_t *tp, weft_data_t *d);

#endif
