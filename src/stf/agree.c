/* One MPI_Allreduce (MAX) of a fixed vector holding each field and its
 * negation, so that every rank learns both the largest and the smallest
 * value of each field: a field whose two ends differ is a disagreement.
 * Only when something differs do the ranks, all knowing it, enter one
 * more collective to learn who failed or where each rank is. */
#include "stf/agree.h"

#include <stdlib.h>
#include <string.h>

#include "context/coll.h"
#include "stf/seqcheck.h"
#include "stf/watchdog.h"
#include "util/clock.h"
#include "util/ending.h"

enum {
    AG_POINT,
    AG_ORDINAL,
    AG_NAGREE,
    AG_TASK_HI,
    AG_TASK_LO,
    AG_NTASKS,
    AG_CALL_HI,
    AG_CALL_LO,
    AG_NCALLS,
    AG_MADE_HI, /* the context's data creations since the last check (ctx->calls) */
    AG_MADE_LO,
    AG_NMADE,
    AG_FAILRANK, /* the rank when its status is not 0, else nranks: its min names the failure */
    AG_FIELDS
};
_Static_assert(AG_FIELDS == WEFT_AGREE_NFIELDS, "agree.h sizes the vectors");

static void encode(const weft_context_t *ctx, const weft_agree_vote_t *v, int64_t *out)
{
    int64_t f[AG_FIELDS] = {
        [AG_POINT] = v->point,
        [AG_ORDINAL] = v->ordinal,
        [AG_NAGREE] = ctx->nagree,
        [AG_TASK_HI] = (int64_t)(v->task_hash >> 32),
        [AG_TASK_LO] = (int64_t)(v->task_hash & 0xffffffffu),
        [AG_NTASKS] = v->ntasks,
        [AG_CALL_HI] = (int64_t)(v->call_hash >> 32),
        [AG_CALL_LO] = (int64_t)(v->call_hash & 0xffffffffu),
        [AG_NCALLS] = v->ncalls,
        [AG_MADE_HI] = (int64_t)(ctx->calls.hash >> 32),
        [AG_MADE_LO] = (int64_t)(ctx->calls.hash & 0xffffffffu),
        [AG_NMADE] = weft_seqlog_count(&ctx->calls) + ctx->calls.lost,
        [AG_FAILRANK] = v->status != WEFT_SUCCESS ? ctx->rank : ctx->nranks,
    };
    for (int k = 0; k < AG_FIELDS; k++) {
        out[k] = f[k];
        out[AG_FIELDS + k] = -f[k];
    }
}

static int same(const int64_t *r, int k) { return r[k] == -r[AG_FIELDS + k]; }

/* Between tests of a request: past the first thousand, a 100 us nap, so
 * that the ranks waited for may have the core. */
static void nap_after(long spins)
{
    if (spins > 1000) {
        struct timespec nap = {0, 100000};
        nanosleep(&nap, NULL);
    }
}

/* Completes the collective; ranks arrive at their own pace, so with
 * watchdog_s set a rank kept waiting says where it waits, once. */
static int agree_complete(weft_context_t *ctx, MPI_Request *req, const char *where)
{
    int64_t wd = ctx->params ? weft_params_int(ctx->params, "watchdog_s") : 0;
    double t0 = weft_clock_s();
    int reported = 0;
    for (long spins = 0;; spins++) {
        int done = 0;
        int trc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (trc != MPI_SUCCESS) return weft_coll_failed_end(ctx, where, trc);
        if (done) return WEFT_SUCCESS;
        nap_after(spins);
        double waited = weft_clock_s() - t0;
        if (wd > 0 && !reported && waited >= (double)wd) {
            int level = weft_watchdog_level(ctx);
            weft_log(level, -1,
                     "stall: %s: waited %.0f s for every rank to reach this point (a rank "
                     "still runs code of its own, waits in a collective of another context "
                     "or of the application, or stopped before it)",
                     where, waited);
            reported = 1;
            if (level == WEFT_LOG_ERROR) weft_watchdog_abort(ctx); /* watchdog_abort */
        }
    }
}

int weft_agree_allreduce(weft_context_t *ctx, void *buf, int count, MPI_Datatype type, MPI_Op op,
                         const char *where)
{
    MPI_Request req;
    int src = MPI_Iallreduce(MPI_IN_PLACE, buf, count, type, op, ctx->comm, &req);
    if (src != MPI_SUCCESS) return weft_coll_failed_end(ctx, where, src);
    int rc = agree_complete(ctx, &req, where);
    /* Where fault_inject's mpi_coll can fail it, as the collectives that
     * follow it are (context/coll.c). */
    return rc == WEFT_SUCCESS ? weft_coll_check(ctx, MPI_SUCCESS, where) : rc;
}

/* Every rank learns the failing rank's status and its own words. */
static int share_failure(weft_context_t *ctx, const weft_agree_vote_t *mine,
                         weft_agree_outcome_t *out)
{
    out->failed_status = mine->status;
    out->failed_msg[0] = '\0';
    if (ctx->rank == out->failed_rank) {
        weft_log_last_error(out->failed_msg, sizeof out->failed_msg);
        if (!out->failed_msg[0])
            snprintf(out->failed_msg, sizeof out->failed_msg, "%s", weft_strerror(mine->status));
    }
    return weft_coll_share_failure(ctx, out->failed_rank, &out->failed_status, out->failed_msg,
                                   sizeof out->failed_msg, mine->where);
}

/* "0,2-3": the ranks whose point reads the same as rank r0's. */
static void rank_list(const char *all, int nranks, int r0, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int r = r0; r < nranks && len + 24 < n; r++) {
        if (strcmp(all + (size_t)r * WEFT_AGREE_WHERE, all + (size_t)r0 * WEFT_AGREE_WHERE))
            continue;
        int e = r;
        while (e + 1 < nranks && !strcmp(all + (size_t)(e + 1) * WEFT_AGREE_WHERE,
                                         all + (size_t)r0 * WEFT_AGREE_WHERE))
            e++;
        len += (size_t)snprintf(buf + len, n - len, len ? ",%d" : "%d", r);
        if (e > r) len += (size_t)snprintf(buf + len, n - len, "-%d", e);
        r = e;
    }
}

/* Whether every rank's point reads the same but for the taskpool's number
 * (seqcheck.c's "(taskpool #N)"): the same line of the program, in
 * taskpools that some ranks numbered otherwise. */
static int same_but_taskpool(const char *all, int nranks)
{
    const char *mark = " (taskpool #", *end0 = strstr(all, mark);
    if (!end0) return 0;
    size_t len = (size_t)(end0 - all);
    for (int r = 1; r < nranks; r++) {
        const char *w = all + (size_t)r * WEFT_AGREE_WHERE, *end = strstr(w, mark);
        if (!end || (size_t)(end - w) != len || strncmp(w, all, len)) return 0;
    }
    return 1;
}

/* The ranks reached different points: each says where every rank is. */
static int report_points(weft_context_t *ctx, const weft_agree_vote_t *mine)
{
    char *all = calloc((size_t)ctx->nranks, WEFT_AGREE_WHERE);
    if (!all) {
        /* The others are already in the gather: ending the job beats a hang. */
        weft_error("out of memory naming the points the ranks reached: ending the run");
        weft_abort_job(ctx->comm, 1);
    }
    int rc = MPI_Allgather(mine->where, WEFT_AGREE_WHERE, MPI_CHAR, all, WEFT_AGREE_WHERE, MPI_CHAR,
                           ctx->comm);
    if (weft_coll_check(ctx, rc, mine->where) != WEFT_SUCCESS) {
        free(all);
        return WEFT_ERR_MPI;
    }
    weft_error("ranks are out of step: they reached different points of the program "
               "(this rank is in %s)",
               mine->where);
    char ranks[256];
    for (int r = 0; r < ctx->nranks; r++) {
        int first = 1;
        for (int q = 0; q < r && first; q++)
            first = strcmp(all + (size_t)q * WEFT_AGREE_WHERE, all + (size_t)r * WEFT_AGREE_WHERE);
        if (!first) continue;
        rank_list(all, ctx->nranks, r, ranks, sizeof ranks);
        weft_error("  rank %s: in %s", ranks, all + (size_t)r * WEFT_AGREE_WHERE);
    }
    if (same_but_taskpool(all, ctx->nranks))
        weft_error("  the same call in taskpools the ranks numbered otherwise: they created "
                   "different numbers of taskpools before it (every rank creates the same "
                   "taskpools in the same order, those it frees at once included)");
    free(all);
    return WEFT_SUCCESS;
}

/* A simulation is one process: it agrees with itself, and its failure is
 * its own (its rank is not an MPI rank, so no collective names it). */
static int agree_alone(weft_context_t *ctx, const weft_agree_vote_t *mine,
                       weft_agree_outcome_t *out)
{
    ctx->nagree++;
    *out = (weft_agree_outcome_t){.failed_rank = mine->status != WEFT_SUCCESS ? ctx->rank : -1,
                                  .failed_status = mine->status,
                                  .same_point = 1,
                                  .same_tasks = 1,
                                  .same_calls = 1,
                                  .same_made = 1};
    if (mine->status == WEFT_SUCCESS) return WEFT_SUCCESS;
    weft_log_last_error(out->failed_msg, sizeof out->failed_msg);
    return mine->status;
}

int weft_agree_begin(weft_context_t *ctx, const weft_agree_vote_t *mine, weft_agree_op_t *op)
{
    op->ctx = ctx;
    op->vote = *mine;
    op->req = MPI_REQUEST_NULL;
    if (ctx->sim) return WEFT_SUCCESS;
    encode(ctx, mine, op->sent);
    int src =
        MPI_Iallreduce(op->sent, op->got, 2 * AG_FIELDS, MPI_INT64_T, MPI_MAX, ctx->comm, &op->req);
    return src == MPI_SUCCESS ? WEFT_SUCCESS : weft_coll_failed_end(ctx, mine->where, src);
}

void weft_agree_end_each(weft_agree_op_t *ops, int n)
{
    int left = n;
    for (int i = 0; i < n; i++) ops[i].ended = 0;
    for (long spins = 0; left > 0; spins++) {
        for (int i = 0; i < n; i++) {
            int done = 0;
            if (ops[i].ended) continue;
            int trc = MPI_Test(&ops[i].req, &done, MPI_STATUS_IGNORE);
            if (trc != MPI_SUCCESS) {
                done = weft_coll_failed_end(ops[i].ctx, ops[i].vote.where, trc) != WEFT_SUCCESS;
            } else if (done) {
                weft_agree_outcome_t out;
                int dropped = weft_agree_end(&ops[i], &out);
                (void)dropped;
            }
            if (done) ops[i].ended = 1, left--;
        }
        nap_after(spins);
    }
}

int weft_agree(weft_context_t *ctx, const weft_agree_vote_t *mine, weft_agree_outcome_t *out)
{
    if (ctx->sim) return agree_alone(ctx, mine, out);
    weft_agree_op_t op;
    int rc = weft_agree_begin(ctx, mine, &op);
    if (rc == WEFT_SUCCESS) rc = agree_complete(ctx, &op.req, mine->where);
    return rc == WEFT_SUCCESS ? weft_agree_end(&op, out) : rc;
}

int weft_agree_end(weft_agree_op_t *op, weft_agree_outcome_t *out)
{
    weft_context_t *ctx = op->ctx;
    const weft_agree_vote_t *mine = &op->vote;
    if (ctx->sim) return agree_alone(ctx, mine, out);
    const int64_t *r = op->got;
    int rc;
    ctx->nagree++;
    int64_t failrank = -r[AG_FIELDS + AG_FAILRANK];
    *out = (weft_agree_outcome_t){
        .failed_rank = failrank < ctx->nranks ? (int)failrank : -1,
        .same_point = same(r, AG_POINT) && same(r, AG_ORDINAL) && same(r, AG_NAGREE),
        .same_tasks = same(r, AG_TASK_HI) && same(r, AG_TASK_LO) && same(r, AG_NTASKS),
        .same_calls = same(r, AG_CALL_HI) && same(r, AG_CALL_LO) && same(r, AG_NCALLS),
        .same_made = same(r, AG_MADE_HI) && same(r, AG_MADE_LO) && same(r, AG_NMADE),
    };
    /* Every rank saw the same reduction, so all enter the same collectives. */
    if (out->failed_rank >= 0 && (rc = share_failure(ctx, mine, out)) != WEFT_SUCCESS) return rc;
    if (!out->same_point && (rc = report_points(ctx, mine)) != WEFT_SUCCESS) return rc;
    /* Every agreement compares the creations: one refused on some ranks
     * is named, with its reason, whatever collective comes next (a rank
     * whose matrix was refused skips a gather of it and reaches another
     * point: the refusal is why). */
    if (!out->same_made) return weft_seqcheck_report_made(ctx, mine->where);
    /* Ranks at different points are out of step, whatever else failed:
     * the status says so and stops their collectives. A rank that failed
     * here for a reason of its own and returned that reason went on to
     * its next collective, where the others never came (a stranger's
     * gather with a NULL buffer while the other rank was in weft_fini). */
    if (!out->same_point) return WEFT_ERR_MISMATCH;
    if (out->failed_rank >= 0) return out->failed_status;
    return WEFT_SUCCESS;
}
