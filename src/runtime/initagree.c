/* The agreement that ends each step of weft_init, and the parameters that
 * must be equal on every rank, compared at its first step
 * (lifecycle.h: weft_runtime_init_agree). */
#include <stdio.h>

#include "context/coll.h"
#include "params/params.h"
#include "runtime/lifecycle.h"
#include "stf/agree.h"
#include "stf/seqcheck.h"
#include "util/fault.h"
#include "util/log.h"

/* Parameters every rank must share: the receiver of a transfer sizes its
 * eager buffers and staged chunks by its own values, every rank inserts
 * the same partial-result tasks of a reduction (redux_lanes), the
 * ranks' view of which of them share a node (comm_node_split), and the
 * collectives of a mismatch report (seqcheck_detail: a rank without it
 * would skip a gather the others make). */
static const char *const must_match[] = {"comm_eager_limit", "comm_staged_chunk",
                                         "comm_mpi_piece",   "redux_lanes",
                                         "comm_node_split",  "seqcheck_detail"};

/* fault_inject's mpi_coll rules of this rank (into text, n bytes) and
 * their hash, halved to stay positive once negated: such a rule fails a
 * collective on its rank alone unless every rank has it, and the others
 * then waited in the next collective for ever (a per-rank value, from an
 * MPMD command line or the environment, passed the parser's refusal of
 * mpi_coll:N@RANK). */
static long long coll_rules(const weft_context_t *ctx, char *text, size_t n)
{
    weft_fault_site_rules(ctx->fault, WEFT_FAULT_MPI_COLL, text, n);
    return (long long)(weft_seqcheck_hash_str(text) >> 1);
}

/* Those values in words into desc, and the hash the ranks compare. */
static uint64_t must_match_hash(const weft_context_t *ctx, char *desc, size_t n)
{
    size_t len = 0;
    desc[0] = '\0';
    for (size_t i = 0; i < sizeof must_match / sizeof must_match[0] && len < n; i++) {
        const weft_param_def_t *def = weft_params_find(must_match[i]);
        char num[24];
        snprintf(num, sizeof num, "%lld", (long long)weft_params_int(ctx->params, must_match[i]));
        /* An enum in the words the user typed (comm_node_split=rank, not 1). */
        const char *value =
            def && def->kind == WEFT_PARAM_ENUM ? weft_params_str(ctx->params, must_match[i]) : num;
        len +=
            (size_t)snprintf(desc + len, n - len, "%s%s=%s;", i ? " " : "", must_match[i], value);
    }
    char rules[200];
    (void)coll_rules(ctx, rules, sizeof rules);
    if (len < n) snprintf(desc + len, n - len, " fault_inject's mpi_coll rules=%s;", rules);
    return weft_seqcheck_hash_str(desc);
}

/* After the ranks found their must_match values differ (every rank knows
 * it, so every rank calls this collective): the parameters that differ,
 * named with their range over the ranks. */
static void name_must_match(weft_context_t *ctx)
{
    enum { N = sizeof must_match / sizeof must_match[0] + 1 }; /* the last: mpi_coll rules */
    long long v[2 * N];
    char rules[200];
    for (int i = 0; i < N; i++) {
        v[i] = i < N - 1 ? (long long)weft_params_int(ctx->params, must_match[i])
                         : coll_rules(ctx, rules, sizeof rules);
        v[N + i] = -v[i];
    }
    int rc = MPI_Allreduce(MPI_IN_PLACE, v, 2 * N, MPI_LONG_LONG, MPI_MAX, ctx->comm);
    char where[64];
    snprintf(where, sizeof where, "%s: naming the parameters that differ", ctx->init_call);
    if (weft_coll_check(ctx, rc, where) != WEFT_SUCCESS) return;
    if (v[N - 1] != -v[2 * N - 1])
        weft_error("%s: fault_inject's mpi_coll rules differ between ranks (here '%s'): an "
                   "mpi_coll rule fails a collective that every rank makes, so every rank must "
                   "have it (the others would wait in the next collective for ever)",
                   ctx->init_call, rules);
    for (int i = 0; i < N - 1; i++) {
        if (v[i] == -v[N + i]) continue;
        const weft_param_def_t *def = weft_params_find(must_match[i]);
        if (def && def->kind == WEFT_PARAM_ENUM) /* its words, not their numbers */
            weft_error("%s: %s differs between ranks (here %s): give every rank the same value",
                       ctx->init_call, must_match[i], weft_params_str(ctx->params, must_match[i]));
        else
            weft_error("%s: %s differs between ranks (from %lld to %lld; here %lld): give every "
                       "rank the same value",
                       ctx->init_call, must_match[i], -v[N + i], v[i],
                       (long long)weft_params_int(ctx->params, must_match[i]));
    }
}

int weft_runtime_init_agree(weft_context_t *ctx, int step, const char *what, int rc)
{
    weft_agree_vote_t v = {.point = WEFT_AGREE_INIT, .ordinal = step, .status = rc};
    snprintf(v.where, sizeof v.where, "%s (step %d: %s)", ctx->init_call, step, what);
    char values[512] = ""; /* every must_match value: a cut one would not be compared */
    if (step == 1 && rc == WEFT_SUCCESS) {
        v.call_hash = must_match_hash(ctx, values, sizeof values);
        v.ncalls = 1;
    }
    weft_agree_outcome_t out = {0};
    int arc = weft_agree(ctx, &v, &out);
    if (arc == WEFT_SUCCESS && !out.same_calls) {
        weft_error("%s failed: the ranks were given different values of parameters that must be "
                   "equal on every rank; this rank has %s",
                   ctx->init_call, values);
        name_must_match(ctx);
        return WEFT_ERR_PARAM;
    }
    if (arc == WEFT_SUCCESS) return WEFT_SUCCESS;
    char own[WEFT_LOG_LINE] = "";
    if (rc != WEFT_SUCCESS) weft_log_last_error(own, sizeof own);
    /* The lowest failing rank's words, on every rank, whatever its status:
     * a rank that failed with WEFT_ERR_MPI (MPI started without
     * MPI_THREAD_MULTIPLE there) was taken for a failed agreement, and the
     * ranks that had not failed said only "MPI error", those that had
     * their own rank. Without them (the agreement's own collective
     * failed), this rank's own words, else the status. */
    if (out.failed_rank >= 0 && out.failed_msg[0])
        weft_error("%s failed on rank %d: %s", ctx->init_call, out.failed_rank, out.failed_msg);
    else if (own[0])
        weft_error("%s failed on rank %d: %s", ctx->init_call, ctx->rank, own);
    else
        weft_error("%s failed (%s): %s", ctx->init_call, what, weft_strerror(arc));
    return arc;
}
