/* What the STF layer keeps per data (d->stf): the dependency records of
 * the insertion sequence (main thread only) and, across ranks, the remote
 * record. Created at the data's first insertion, freed with the data. */
#ifndef WEFT_STF_RECORD_H
#define WEFT_STF_RECORD_H

#include "stf/taskpool.h"
#include "util/vec.h"

struct weft_remote_rec;

typedef struct weft_stf_rec {
    struct weft_task *last_writer;  /* retained */
    weft_vec_t readers;             /* struct weft_task * since that writer, retained */
    uint64_t epoch;                 /* taskpool epoch that last touched it */
    struct weft_remote_rec *remote; /* stf/remote.c, NULL until a remote inference */
    struct weft_redux *redux;       /* stf/redux.c, NULL: no reduction set */
    long long remote_bytes;         /* its size */
    /* The taskpool whose graph (weft_ptg_insert) uses it, until that
     * taskpool's wait: a graph's tasks are not in last_writer/readers, so
     * this is what tells insertion and host access elsewhere that it is
     * busy. NULL: none. */
    struct weft_taskpool *graph;
    weft_meta_t *meta; /* where these bytes are counted */
    /* A task of the current taskpool wrote it: what last_writer told
     * before it may be let go once it ended (weft_taskpool_writer_set),
     * which depends on timing and would differ between ranks. */
    uint8_t written;
    uint8_t writer_queued; /* in its taskpool's tp->writers */
} weft_stf_rec_t;

/* d's record, NULL when no task was ever inserted with it. */
static inline weft_stf_rec_t *weft_stf_rec(const weft_data_t *d) { return d->stf; }

/* Reader i of r (i < r->readers.n). */
static inline struct weft_task *weft_stf_rec_reader(const weft_stf_rec_t *r, size_t i)
{
    return *(struct weft_task **)weft_vec_at(&r->readers, i);
}

/* d's record, created when absent (NULL: out of host memory). */
weft_stf_rec_t *weft_stf_rec_get(weft_data_t *d);

/* d's record, created when absent, after tp remembered d as touched
 * (once per taskpool epoch). NULL: out of host memory. */
weft_stf_rec_t *weft_stf_rec_touch(weft_taskpool_t *tp, weft_data_t *d);

/* Appends a reader (retained). */
int weft_stf_rec_push_reader(weft_stf_rec_t *r, weft_task_t *t) __attribute__((warn_unused_result));

/* Lets go of the last writer if it ended (a taskpool's queue of them,
 * weft_taskpool_writer_set, moves only as tiles are written: reads alone
 * afterwards left them) and of the readers that ended, in place (order
 * kept: the first names the busy taskpool): the next writer's edge from one would add
 * nothing (weft_task_add_edge), and each held its task's memory until the
 * taskpool's wait. A tile that many tasks read and none writes again (a
 * factorization's finished panel) kept them all: weft-potrf -N 180 -t 1
 * held every one of its 990,000 tasks, 1.6 GB. Called before the list
 * grows and by weft_taskpool_let_go. */
void weft_stf_rec_drop_ended(weft_stf_rec_t *r);
/* Lets go of r's last writer if it ended; 1 when it still runs (kept), 0
 * when r has none now. */
int weft_stf_rec_drop_writer(weft_stf_rec_t *r);

/* Drops the last writer and readers (end of a taskpool). */
void weft_stf_rec_reset(weft_stf_rec_t *r);

#endif
