/* The sequence check: each rank logs what it inserted and created, and
 * the ranks compare the running hashes at the next agreement. */
#include "stf/seqcheck.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stf/agree.h"
#include "util/hash.h"
#include "util/log.h"

/* The longest text of an entry named in a report. */
#define WEFT_SEQ_TEXT 96

/* One multiply and a shift a word: every rank folds every flow of every
 * task of the run, so the mix is the cheapest that still spreads each
 * input bit over the high half, which the next word's product carries
 * down again. */
static inline uint64_t fold(uint64_t h, uint64_t v)
{
    h = (h ^ v) * 0x9e3779b97f4a7c15ULL;
    return h ^ (h >> 29);
}

uint64_t weft_seqcheck_hash_str(const char *s)
{
    uint64_t h = WEFT_HASH_INIT;
    for (; *s; s++) h = weft_hash_step(h, (unsigned char)*s);
    return h;
}

/* The hash always moves, so ranks compare all they did; the entry itself
 * is kept to name a divergence, and counted as lost when memory lacks. */
static int seqlog_add(weft_seqlog_t *l, uint64_t entry, const char *name, const void *rec)
{
    l->hash = fold(l->hash, entry);
    return weft_seqlog_push(l, name, rec);
}

int weft_seqcheck_log(weft_taskpool_t *tp, const weft_task_t *t, int exec_rank)
{
    /* Tasks of a class come in runs: its name is hashed once a run. */
    if (t->cls != tp->seq_cls) {
        tp->seq_cls = t->cls;
        tp->seq_cls_hash = weft_seqcheck_hash_str(t->cls->name);
    }
    uint64_t h = fold(tp->seq_cls_hash, (uint64_t)exec_rank);
    h = fold(h, (uint64_t)(t->device_hint + 1));
    /* Three words a flow, each field whole in one of them (a key below
     * 2^62, 32-bit shapes, owner and type). */
    for (int i = 0; i < t->nflows; i++) {
        const weft_data_t *d = t->flow[i].data;
        h = fold(h, d->key * 4 + (uint64_t)t->flow[i].mode);
        h = fold(h, ((uint64_t)(uint32_t)d->owner_rank << 32) | (uint32_t)d->type);
        h = fold(h, ((uint64_t)(uint32_t)d->rows << 32) | (uint32_t)d->cols);
    }
    return seqlog_add(&tp->seq, h, t->cls->name, NULL);
}

/* The text of an entry of l: its record described, or its name. */
static void entry_text(const weft_seqlog_t *l, long k, char *text, size_t n)
{
    const weft_seqcall_t *c = weft_seqlog_rec(l, k);
    const char *name = weft_seqlog_name(l, k);
    if (c)
        c->kind->describe(c->kind, c->arg, text, n);
    else
        snprintf(text, n, "%s", name ? name : "");
}

static void describe_refused(const weft_seqcall_kind_t *kind, const int64_t *arg, char *text,
                             size_t n)
{
    (void)arg;
    snprintf(text, n, "%s", kind->name);
}

static const weft_seqcall_kind_t seq_refused = {
    "a creation refused on this rank (NULL returned; its error above)", describe_refused};

void weft_seqcheck_refused(weft_context_t *ctx)
{
    const int64_t none[WEFT_SEQCALL_ARGS] = {0};
    weft_seqcheck_call(ctx, &seq_refused, none);
}

void weft_seqcheck_call(weft_context_t *ctx, const weft_seqcall_kind_t *kind,
                        const int64_t arg[WEFT_SEQCALL_ARGS])
{
    /* Binary fields folded, no text: every rank pays this for every
     * creation of the run. Creations of a kind come in runs: its name is
     * hashed once a run. */
    weft_seqlog_t *l = &ctx->calls;
    if (kind->name != l->hashed_name) {
        l->hashed_name = kind->name;
        l->name_hash = weft_seqcheck_hash_str(kind->name);
    }
    weft_seqcall_t c = {.kind = kind};
    uint64_t h = l->name_hash;
    for (int i = 0; i < WEFT_SEQCALL_ARGS; i++) {
        c.arg[i] = arg[i];
        h = fold(h, (uint64_t)arg[i]);
    }
    if (seqlog_add(l, h, kind->name, &c) != WEFT_SUCCESS) {
        char text[WEFT_SEQ_TEXT];
        kind->describe(kind, arg, text, sizeof text);
        weft_warn("out of memory keeping '%s' for the check across ranks", text);
    }
}

/* Whether entry k differs between ranks (a rank without it differs). */
static int differs_at(weft_context_t *ctx, const weft_seqlog_t *l, long k)
{
    int64_t v = weft_seqlog_at(l, k), in[2] = {v, -v}, out[2];
    MPI_Allreduce(in, out, 2, MPI_INT64_T, MPI_MAX, ctx->comm);
    return out[0] != -out[1];
}

/* The first entry where the ranks' running hashes differ, found by
 * bisection (once two hashes differ, every later one does): a few
 * allreduces of two numbers, never a gather of the logs, which at
 * thousands of ranks would not fit rank 0. differs[r]: rank r's entry
 * there differs from rank 0's. */
static long first_divergence(weft_context_t *ctx, const weft_seqlog_t *l, int *differs)
{
    long n = weft_seqlog_count(l), maxn = 0;
    MPI_Allreduce(&n, &maxn, 1, MPI_LONG, MPI_MAX, ctx->comm);
    long lo = 0, hi = maxn;
    while (lo < hi) {
        long mid = lo + (hi - lo) / 2;
        if (differs_at(ctx, l, mid))
            hi = mid;
        else
            lo = mid + 1;
    }
    int64_t root = weft_seqlog_at(l, lo);
    MPI_Bcast(&root, 1, MPI_INT64_T, 0, ctx->comm);
    int mine = lo < maxn && weft_seqlog_at(l, lo) != root;
    MPI_Allgather(&mine, 1, MPI_INT, differs, 1, MPI_INT, ctx->comm);
    return lo;
}

static void list_ranks(const int *differs, int nranks, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int r = 0; r < nranks && len + 16 < n; r++)
        if (differs[r]) len += (size_t)snprintf(buf + len, n - len, len ? ",%d" : "%d", r);
}

/* Every rank logs what each rank made at position k, so that a creation
 * made on some ranks only (a weft_data_register inside "if (rank == 0)")
 * is named on every rank, not only on the ranks that made it. Collective.
 * At most 16 ranks are listed: the first divergent ones are among them. */
static void log_each_rank(weft_context_t *ctx, const weft_seqlog_t *l, long k, const int *differs)
{
    char mine[WEFT_SEQ_TEXT] = "";
    if (k >= 0 && k < weft_seqlog_count(l)) entry_text(l, k, mine, sizeof mine);
    char *all = malloc((size_t)WEFT_SEQ_TEXT * (size_t)ctx->nranks);
    if (!all) {
        weft_error("out of memory comparing the ranks' sequences: ending the run");
        MPI_Abort(ctx->comm, 1);
    }
    MPI_Allgather(mine, WEFT_SEQ_TEXT, MPI_CHAR, all, WEFT_SEQ_TEXT, MPI_CHAR, ctx->comm);
    for (int r = 0, shown = 0; r < ctx->nranks && shown < 16; r++) {
        if (r != 0 && !differs[r]) continue;
        const char *e = all + (size_t)r * WEFT_SEQ_TEXT;
        if (*e)
            weft_error("  rank %d made #%ld as '%s'", r, k, e);
        else
            weft_error("  rank %d made no data creation #%ld (a creation made on some ranks only: "
                       "every rank must make the same creations in the same order)",
                       r, k);
        shown++;
    }
    free(all);
}

/* what: "task" or "data creation"; subject: the taskpool's words. */
static int report_divergence(weft_context_t *ctx, const weft_seqlog_t *l, const char *subject,
                             const char *verb, const char *what, int each)
{
    int *differs = calloc((size_t)ctx->nranks, sizeof *differs);
    if (!differs) {
        weft_error("out of memory comparing the ranks' sequences: ending the run");
        MPI_Abort(ctx->comm, 1);
    }
    long k = first_divergence(ctx, l, differs);
    char ranks[256];
    list_ranks(differs, ctx->nranks, ranks, sizeof ranks);
    char mine[WEFT_SEQ_TEXT];
    int have = k < weft_seqlog_count(l);
    if (have) entry_text(l, k, mine, sizeof mine);
    if (have)
        weft_error("%s: ranks %s different %ss; first divergent %s is #%ld, which this rank %s "
                   "as '%s' (ranks differing there from rank 0: %s)",
                   subject, verb, what, what, k, verb, mine, ranks);
    else
        weft_error("%s: ranks %s different %ss; first divergent %s is #%ld, which this rank never "
                   "%s (it %s %ld; ranks differing there from rank 0: %s)",
                   subject, verb, what, what, k, verb, verb, weft_seqlog_count(l), ranks);
    if (each) log_each_rank(ctx, l, k, differs);
    free(differs);
    return WEFT_ERR_MISMATCH;
}

/* The agreement and, when the ranks are at the same point with different
 * histories, the first difference named (collectives all ranks enter,
 * since all saw the same outcome). */
static int check(weft_context_t *ctx, weft_agree_vote_t *v, weft_taskpool_t *tp)
{
    v->call_hash = ctx->calls.hash;
    v->ncalls = weft_seqlog_count(&ctx->calls) + ctx->calls.lost;
    weft_agree_outcome_t out = {0};
    int rc = weft_agree(ctx, v, &out);
    /* An MPI failure leaves the outcome unknown: no further collective. */
    if (rc == WEFT_ERR_MPI) return rc;
    if (rc == WEFT_SUCCESS && !out.same_calls)
        rc = report_divergence(ctx, &ctx->calls, v->where, "made", "data creation", 1);
    if (out.same_point && tp && !out.same_tasks) {
        char subject[96];
        snprintf(subject, sizeof subject, "taskpool %s", tp->name);
        int trc = report_divergence(ctx, &tp->seq, subject, "inserted", "task", 0);
        if (rc == WEFT_SUCCESS) rc = trc;
    }
    if (rc == WEFT_SUCCESS) {
        weft_seqlog_clear(&ctx->calls);
        return WEFT_SUCCESS;
    }
    /* No collective is safe any more: the ranks are not in step. */
    ctx->diverged = 1;
    weft_context_fail(ctx, rc);
    return rc;
}

int weft_seqcheck_verify(weft_taskpool_t *tp)
{
    weft_agree_vote_t v = {
        .point = WEFT_AGREE_WAIT,
        .ordinal = tp->number,
        .task_hash = tp->seq.hash,
        .ntasks = weft_seqlog_count(&tp->seq) + tp->seq.lost,
    };
    snprintf(v.where, sizeof v.where, "weft_taskpool_wait of taskpool '%.40s' (taskpool #%ld)",
             tp->name, tp->number);
    int rc = check(tp->ctx, &v, tp);
    if (rc != WEFT_SUCCESS) tp->mismatch = 1;
    return rc;
}

int weft_seqcheck_fini(weft_context_t *ctx)
{
    weft_agree_vote_t v = {.point = WEFT_AGREE_FINI};
    snprintf(v.where, sizeof v.where, "weft_fini");
    return check(ctx, &v, NULL);
}

void weft_seqcheck_reset(weft_taskpool_t *tp) { weft_seqlog_clear(&tp->seq); }
