/* The PTG builder's state for one weft_ptg_insert (docs/PTG.md): this
 * rank's tasks, the versions they read and write, and the SEND/RECV tasks
 * those imply. Lives only for the call: what remains are tasks. */
#ifndef WEFT_PTG_PTG_H
#define WEFT_PTG_PTG_H

#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "ptg/ptgmap.h"
#include "sched/task.h"
#include "stf/taskpool.h"
#include "util/vec.h"
#include "weft/ptg.h"

/* One version of one data as this rank sees it: the output of flow `flow`
 * of a task (its key), or the data's version from before the graph (key
 * class -1). */
typedef struct weft_ptg_ver {
    weft_ptg_ref_t key;
    weft_data_t *data;   /* NULL until known (a version only chased through for its label) */
    weft_task_t *task;   /* what makes it here: the local producer or the RECV; NULL: memory */
    weft_task_t *writer; /* the local task or RECV that replaces it here, NULL: none */
    uint32_t label;      /* its depth in the graph (1: the first write); transfers match on it */
    int full;            /* listed and the transfers are set */
    int listed;          /* consumers on this rank, per the producer's list (-1: not checked) */
    int named;           /* local tasks that name it as their producer */
    int matched;         /* of those, the ones its producer lists (b->expect) */
    size_t users;        /* head of its local readers and SENDs in b->links, SIZE_MAX: none */
    size_t canon;        /* the record of the version itself: this one, or for a version
                            named through a forwarder, its writer's (or the initial one) */
    int remote;          /* made (or passed on) by another rank */
    int remote_noread;   /* made on another rank and only replaced here so far: no RECV */
    int remote_writers;  /* consumers on other ranks that write it (a version has one) */
    int remade;          /* made here by a task built after a RECV of it (ptgxfer.c) */
    size_t recvs;        /* head of its RECVs here in b->links (canonical records), SIZE_MAX */
} weft_ptg_ver_t;

typedef struct weft_ptg_link {
    weft_task_t *task;
    size_t next;
} weft_ptg_link_t;

/* A SEND of a version that a local forwarder passes on, and what it
 * waits for unless the version turns out to be made here (ptgorder.c). */
typedef struct weft_ptg_fwd_send {
    weft_task_t *send;
    weft_task_t *after; /* the RECV of the forwarder's path, or the forwarder */
    size_t canon;       /* the version's record */
} weft_ptg_fwd_send_t;

/* One transfer this rank takes part in, as it sees it (ptgends.c). */
typedef struct weft_ptg_end {
    weft_ptg_ref_t p, c; /* producer and consumer, their flows included */
    int prank, crank;    /* where this rank's functions run each */
    uint64_t key;        /* the data: the flow's of the task this rank runs */
    int producer;        /* 1: this rank runs p; 0: it runs c */
} weft_ptg_end_t;

#define WEFT_PTG_LIMBS 4   /* a 64-bit sum in 16-bit parts, added across ranks */
#define WEFT_PTG_MOMENTS 2 /* sums of a task's identity x compared: of x and of x^2 */

typedef struct weft_ptg_build {
    weft_taskpool_t *tp;
    weft_context_t *ctx;
    const weft_ptg_t *g;
    int me;
    weft_ptgmap_t tasks;  /* task reference (flow -1) -> index in local */
    weft_vec_t local;     /* weft_task_t *: this rank's body tasks, in enumeration order */
    weft_vec_t selfs;     /* weft_ptg_ref_t: their references, alike */
    weft_vec_t actions;   /* weft_task_t *: the SENDs and RECVs made */
    weft_ptgmap_t xfers;  /* (canonical version, peer, direction) -> index in actions */
    weft_ptgmap_t vers;   /* version key -> index in vervec */
    weft_vec_t vervec;    /* weft_ptg_ver_t */
    weft_vec_t links;     /* weft_ptg_link_t */
    weft_ptgmap_t expect; /* local consumer flow -> the version a producer on another rank
                             lists it for */
    weft_vec_t refs;      /* weft_ptg_ref_t scratch for consumer lists */
    size_t refs_room;     /* the room the next consumers call gets first (its last list's
                             length, at least 16): each entry is marked unwritten first */
    long long walked;
    long long nsends, nrecvs; /* of a dropped graph */
    long long *points;        /* per class: its tasks, then the ranks' tasks made (2 x nclasses),
                                 then the transfers' sum in WEFT_PTG_LIMBS parts, then per
                                 moment and class the made tasks' identities in
                                 WEFT_PTG_LIMBS parts */
    uint64_t *ids;            /* per moment and class: its tasks' identities summed, then the
                                 made ones' */
    weft_vec_t ends;          /* weft_ptg_end_t: every transfer this rank takes part in */
    weft_vec_t fwd_sends;     /* weft_ptg_fwd_send_t: forwarders' SENDs, ordered at the end */
    uint64_t ends_sum;        /* their hashes, + as producer, - as consumer */
} weft_ptg_build_t;

/* The SEND (send 1) to peer or RECV from it of the version whose record is
 * canon, made earlier by another task's flow; NULL: none yet. */
weft_task_t *weft_ptg__xfer_find(const weft_ptg_build_t *b, size_t canon, int peer, int send);
/* Notes the last of b->actions as that transfer. */
int weft_ptg__xfer_note(weft_ptg_build_t *b, size_t canon, int peer, int send)
    __attribute__((warn_unused_result));
/* The RECV that brings version vi of d (flow p->flow of a task of prank)
 * for local reader t: the one another task of prank passing the same
 * version needed, or a new one, its number as prank numbers it. */
/* p (a local writer of d, its n consumers in b->refs) does not leave the
 * final version of d away from d's owner (ptgfinal.c); else logged. */
int weft_ptg__check_final(weft_ptg_build_t *b, const weft_ptg_ref_t *p, const weft_data_t *d,
                          size_t n);
/* The RECVs of canonical version ci made before its local producer was
 * built only meet their senders: the bytes are made here. */
void weft_ptg__recvs_discard(weft_ptg_build_t *b, size_t ci);
int weft_ptg__recv_version(weft_ptg_build_t *b, size_t vi, const weft_ptg_ref_t *p, int prank,
                           weft_task_t *t, weft_data_t *d) __attribute__((warn_unused_result));

static inline weft_ptg_ver_t *weft_ptg__ver(const weft_ptg_build_t *b, size_t i)
{
    return (weft_ptg_ver_t *)weft_vec_at(&b->vervec, i);
}

static inline int weft_ptg__same_ref(const weft_ptg_ref_t *a, const weft_ptg_ref_t *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

/* a and b name the same task, whatever their flows. */
static inline int weft_ptg__same_task(const weft_ptg_ref_t *a, const weft_ptg_ref_t *b)
{
    weft_ptg_ref_t x = *a;
    x.flow = b->flow;
    return weft_ptg__same_ref(&x, b);
}

/* ptgcons.c. p's consumers of flow p->flow into b->refs, *n of them;
 * refused (logged) when its function misbehaves or lists one twice. */
int weft_ptg__consumers_of(weft_ptg_build_t *b, const weft_ptg_ref_t *p, size_t *n);

/* ptgchain.c. The record of key, made empty when absent; *out its index. */
int weft_ptg__ver_get(weft_ptg_build_t *b, const weft_ptg_ref_t *key, size_t *out);
/* 0: the version from before the graph; 1: *p wrote it; 2: *p read it and
 * passes it on from its rank (a forwarder); -1 after logging. */
int weft_ptg__producer_of(weft_ptg_build_t *b, const weft_ptg_ref_t *r, weft_ptg_ref_t *p);
/* Through forwarders to the task that wrote the version r's flow reads:
 * *w and 1, or 0 for the version from before the graph; -1 after logging. */
int weft_ptg__writer_of(weft_ptg_build_t *b, const weft_ptg_ref_t *r, weft_ptg_ref_t *w);
/* The depth of r's output, kept in r's version record. */
int weft_ptg__label_of(weft_ptg_build_t *b, const weft_ptg_ref_t *r, uint32_t *label);

/* pred before succ (neither released yet); WEFT_ERR_NOMEM when the edge
 * could not be kept. */
static inline int weft_ptg__edge(weft_task_t *pred, weft_task_t *succ)
{
    return pred == succ || weft_task_add_edge(pred, succ) ? WEFT_SUCCESS : WEFT_ERR_NOMEM;
}

/* The number a version of d at depth `label` takes on every rank:
 * d's net_version plus its depth (ptgsettle.c says why). */
int weft_ptg__version_number(const weft_ptg_build_t *b, const weft_ptg_ref_t *r,
                             const weft_data_t *d, uint32_t label, uint32_t *out);
/* r's name as error lines give it ("CLASS(i,j)"). */
void weft_ptg__ref_text(const weft_ptg_build_t *b, const weft_ptg_ref_t *r, char *buf, size_t n);
/* Where the builder fails: logs "ptg <class>(<indices>): <why>" and
 * returns WEFT_ERR_INVALID. */
int weft_ptg__fail(const weft_ptg_build_t *b, const weft_ptg_ref_t *r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* r names a task of the graph: its class exists and its indices are in the
 * class's space (else logged, as seen from `who`). */
int weft_ptg__check_ref(const weft_ptg_build_t *b, const weft_ptg_ref_t *who,
                        const weft_ptg_ref_t *r);
/* The rank that runs r's task, checked to be a rank. -1 after logging. */
int weft_ptg__rank(const weft_ptg_build_t *b, const weft_ptg_ref_t *r);
/* r's task parsed from its args function into w (no reference taken), the
 * flows of a data it names more than once given the union of their modes
 * (weft_task_merge_repeated_flows); *exec (exec not NULL): the rank its
 * arguments place it on, as insertion places it (from the flows before
 * that merge). */
int weft_ptg__parse(const weft_ptg_build_t *b, const weft_ptg_ref_t *r, weft_task_t *w, int *exec);
/* Whether r's rank enumerates r (its class's local_range for that rank
 * holds its indices); 0 after logging. */
int weft_ptg__enumerated_by(const weft_ptg_build_t *b, const weft_ptg_ref_t *r, int rank);
/* The local task of r (flow ignored), NULL when this rank has none. */
weft_task_t *weft_ptg__local(const weft_ptg_build_t *b, const weft_ptg_ref_t *r);
/* r with its unused indices zeroed. */
weft_ptg_ref_t weft_ptg__norm(const weft_ptg_build_t *b, weft_ptg_ref_t r);
/* What weft writes into the references a producer or consumers function
 * is given before the call, so that an entry the function counted but did
 * not write is refused (it read what an earlier call left there, another
 * task's consumer taken for this one's, or uninitialised memory). */
#define WEFT_PTG_UNWRITTEN INT_MIN
static inline void weft_ptg__unwrite(weft_ptg_ref_t *r, size_t n)
{
    for (size_t i = 0; i < n; i++) r[i].cls = WEFT_PTG_UNWRITTEN;
}
/* Refuses p's consumers function, which returned `got` for `flow` but left
 * entry `entry` unwritten. Returns WEFT_ERR_INVALID. */
int weft_ptg__unwritten_consumer(const weft_ptg_build_t *b, const weft_ptg_ref_t *p, int got,
                                 int flow, int entry);

/* Flow i of local task t (reference self): the version it reads or
 * replaces, the one it writes, the transfers and edges these imply
 * (ptgflow.c). */
int weft_ptg__flow(weft_ptg_build_t *b, const weft_ptg_ref_t *self, weft_task_t *t, int i);
/* After every flow (ptgorder.c): the edges that put each data's versions
 * on this rank in order (a version waits for everything that used the one
 * before it here), the checks that each producer's list and its consumers
 * agree, and the cycle check. */
int weft_ptg__finish(weft_ptg_build_t *b);

/* ptgdry.c. The graph run dry across ranks (no body, no byte): tasks and
 * transfers that no rank's walk reaches wait on a cycle that crosses
 * ranks, named on every rank (WEFT_ERR_INVALID). Collective; skipped in
 * simulation and on one rank (check_acyclic's walk sees it all). */
int weft_ptg__dry_run(weft_ptg_build_t *b);

/* Notes a transfer from p (on prank) to c (on crank) of data d, seen by
 * this rank as the producer's (producer 1) or the consumer's (ptgends.c).
 * WEFT_ERR_NOMEM when it could not be kept. */
int weft_ptg__note_end(weft_ptg_build_t *b, const weft_ptg_ref_t *p, const weft_ptg_ref_t *c,
                       int prank, int crank, const weft_data_t *d, int producer);
/* A 64-bit sum in parts that add up across ranks (MPI_SUM of long long),
 * and the sum those parts make. The transfers' notes (ends_sum) total 0
 * when both ends see every transfer alike. */
void weft_ptg__to_limbs(uint64_t s, long long limbs[WEFT_PTG_LIMBS]);
uint64_t weft_ptg__limbs_total(const long long limbs[WEFT_PTG_LIMBS]);
/* After a total other than 0: every rank logs how each end sees the first
 * transfer seen differently. Collective. */
void weft_ptg__ends_report(const weft_ptg_build_t *b);

/* What every rank must have passed alike (ptghash.c): each class's name and
 * dimensions and the ranges of its index space in loop order, the first
 * 65536 of the graph (g checked sound). points (NULL: not asked, and
 * ids too), g->nclasses of them: each class's number of tasks, -1 for a
 * class whose ranges the limit cut short; ids, WEFT_PTG_MOMENTS x
 * g->nclasses: moment m of class c's tasks' identities (weft_ptg__task_ids)
 * summed at [m * nclasses + c]. */
uint64_t weft_ptg__graph_hash(const weft_ptg_t *g, long long *points, uint64_t *ids);
/* Numbers for task idx of class cls, alike on every rank (its identity x
 * and x^2): the ranks' sums over the tasks they made must add up to the
 * index space's. */
void weft_ptg__task_ids(int cls, int ndims, const int *idx, uint64_t id[WEFT_PTG_MOMENTS]);
/* After an agreement found the graphs' hashes different: every rank logs
 * the first class head or range where they differ, as each rank sees it.
 * Collective; valid: this rank's graph is sound (else nothing is
 * compared). */
void weft_ptg__graph_report(weft_context_t *ctx, const weft_ptg_t *g, int valid);

#endif
