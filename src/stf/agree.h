/* The agreement between ranks: one collective that every rank enters at
 * each point where the ranks must be in step (after each step of
 * weft_init, at the start of weft_taskpool_wait and of weft_fini). Ranks
 * that reached different points, or the same point with different
 * histories or a failure, meet in it all the same and all find out, so a
 * divergence becomes an error on every rank instead of a hang. */
#ifndef WEFT_STF_AGREE_H
#define WEFT_STF_AGREE_H

#include <stdint.h>

#include "context/context.h"
#include "util/log.h"

typedef enum weft_agree_point {
    WEFT_AGREE_INIT = 1, /* after a step of weft_init; ordinal: the step */
    WEFT_AGREE_WAIT = 2, /* start of weft_taskpool_wait; ordinal: the taskpool's number */
    WEFT_AGREE_FINI = 3, /* start of weft_fini; ordinal: the taskpools made */
    /* start of weft_matrix_gather / weft_matrix_scatter (collections) */
    WEFT_AGREE_COLLECT = 4,
    /* end of weft_ptg_insert's build (ptg/); ordinal: the taskpool's number */
    WEFT_AGREE_PTG = 5,
    /* the application's MPI_Finalize before weft_fini (runtime/mpiend.c) */
    WEFT_AGREE_MPI_END = 6,
} weft_agree_point_t;

#define WEFT_AGREE_WHERE 96

/* What one rank brings to an agreement. */
typedef struct weft_agree_vote {
    weft_agree_point_t point;
    long ordinal;
    int status;         /* this rank's outcome so far, 0 when fine */
    uint64_t task_hash; /* the taskpool's insertion sequence (WAIT) */
    long ntasks;
    uint64_t call_hash; /* a second thing the caller compares (weft_init's parameters) */
    long ncalls;
    char where[WEFT_AGREE_WHERE]; /* the point in words, for the report */
} weft_agree_vote_t;

/* What every rank learns from it (the same on every rank). */
typedef struct weft_agree_outcome {
    int failed_rank; /* lowest rank with a non-zero status, -1 if none */
    int failed_status;
    char failed_msg[WEFT_LOG_LINE]; /* that rank's last error message */
    int same_point;                 /* point, ordinal and agreement count equal everywhere */
    int same_tasks, same_calls;     /* hashes and counts equal everywhere */
    int same_made;                  /* the data creations (ctx->calls) too */
} weft_agree_outcome_t;

/* One agreement posted and not yet complete. weft_agree is begin, wait,
 * end; runtime/mpiend.c begins one in every live context of the process
 * and ends each as its request completes, so that the other ranks may
 * reach the contexts' agreements in any order. */
#define WEFT_AGREE_NFIELDS 13
typedef struct weft_agree_op {
    weft_context_t *ctx;
    weft_agree_vote_t vote;
    int64_t sent[2 * WEFT_AGREE_NFIELDS], got[2 * WEFT_AGREE_NFIELDS];
    MPI_Request req; /* MPI_REQUEST_NULL in a simulation (nothing to wait for) */
    int ended;       /* weft_agree_end_each's mark */
} weft_agree_op_t;

/* Posts op's reduction (the vote is copied). WEFT_ERR_MPI, named, when
 * MPI refuses it. */
int weft_agree_begin(weft_context_t *ctx, const weft_agree_vote_t *mine, weft_agree_op_t *op)
    __attribute__((warn_unused_result));

/* After op->req completed: what weft_agree returns, with its reports and
 * collectives. */
int weft_agree_end(weft_agree_op_t *op, weft_agree_outcome_t *out)
    __attribute__((warn_unused_result));

/* Ends each of the n begun ops as its request completes, in whatever order
 * the other ranks reach them; their reports are logged as weft_agree logs
 * them and their statuses dropped: for a rank that leaves, whose outcome
 * is the others' to act on (runtime/mpiend.c). */
void weft_agree_end_each(weft_agree_op_t *ops, int n);

/* Collective over ctx->comm. Fills out; when the ranks are at different
 * points, logs on every rank where each rank is; when their data creations
 * since the last check differ, logs the first difference on every rank
 * (and returns WEFT_ERR_MISMATCH). Returns WEFT_SUCCESS when
 * every rank is at the same point with status 0, WEFT_ERR_MISMATCH when
 * the points differ (whatever a rank's status: the ranks are out of step),
 * else the failed status when a rank failed; WEFT_ERR_MPI when MPI failed. With watchdog_s set, a
 * rank kept waiting in it that long says so. */
int weft_agree(weft_context_t *ctx, const weft_agree_vote_t *mine, weft_agree_outcome_t *out)
    __attribute__((warn_unused_result));

/* MPI_Allreduce in place over ctx->comm, watched as an agreement is: a
 * rank kept waiting watchdog_s says where (the collectives of a wait after
 * its tasks, where a rank still running a long task left the others
 * silent). WEFT_SUCCESS, or WEFT_ERR_MPI after naming where (also when
 * fault_inject's mpi_coll fails it: context/coll.h). */
int weft_agree_allreduce(weft_context_t *ctx, void *buf, int count, MPI_Datatype type, MPI_Op op,
                         const char *where) __attribute__((warn_unused_result));

#endif
