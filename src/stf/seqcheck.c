/* The sequence check: each rank logs what it inserted and created, and
 * the ranks compare the running hashes at the next agreement. */
#include "stf/seqcheck.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "stf/agree.h"
#include "util/log.h"

static uint64_t fold(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdULL;
}

uint64_t weft_seqcheck_hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

void weft_seqlog_init(weft_seqlog_t *l)
{
    *l = (weft_seqlog_t){0};
    weft_vec_init(&l->log, sizeof(uint64_t), 256);
    weft_vec_init(&l->name, sizeof(const char *), 256);
    weft_vec_init(&l->detail, WEFT_SEQ_DETAIL, 256);
}

/* The hash always moves, so ranks compare all they did; the entry itself
 * is kept to name a divergence, and counted as lost when memory lacks. */
static int seqlog_add(weft_seqlog_t *l, uint64_t entry, const char *name, const char *detail)
{
    l->hash = fold(l->hash, entry);
    size_t n = l->log.n;
    int rc = weft_vec_reserve(&l->log, n + 1);
    if (rc == WEFT_SUCCESS) rc = weft_vec_reserve(&l->name, n + 1);
    if (rc == WEFT_SUCCESS && detail) rc = weft_vec_reserve(&l->detail, n + 1);
    if (rc != WEFT_SUCCESS) {
        l->lost++;
        return WEFT_ERR_NOMEM;
    }
    /* Room for all three is reserved: these pushes cannot fail. */
    rc = weft_vec_push(&l->log, &l->hash);
    if (rc == WEFT_SUCCESS) rc = weft_vec_push(&l->name, &name);
    if (rc == WEFT_SUCCESS && detail) {
        char text[WEFT_SEQ_DETAIL];
        snprintf(text, sizeof text, "%s", detail);
        rc = weft_vec_push(&l->detail, text);
    }
    return rc;
}

static void seqlog_clear(weft_seqlog_t *l)
{
    weft_vec_clear(&l->log);
    weft_vec_clear(&l->name);
    weft_vec_clear(&l->detail);
    l->hash = 0;
    l->lost = 0;
}

void weft_seqlog_free(weft_seqlog_t *l)
{
    weft_vec_fini(&l->log);
    weft_vec_fini(&l->name);
    weft_vec_fini(&l->detail);
    l->hash = 0;
    l->lost = 0;
}

int weft_seqcheck_log(weft_taskpool_t *tp, const weft_task_t *t, int exec_rank)
{
    uint64_t h = fold(weft_seqcheck_hash_str(t->cls->name), (uint64_t)exec_rank);
    for (int i = 0; i < t->nflows; i++) {
        const weft_data_t *d = t->flow[i].data;
        h = fold(h, d->key * 4 + (uint64_t)t->flow[i].mode);
        h = fold(h, (uint64_t)d->owner_rank);
        h = fold(h, ((uint64_t)d->rows << 32) ^ ((uint64_t)d->cols << 2) ^ (uint64_t)d->type);
    }
    return seqlog_add(&tp->seq, h, t->cls->name, NULL);
}

void weft_seqcheck_call(weft_context_t *ctx, const char *fmt, ...)
{
    char text[WEFT_SEQ_DETAIL];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (seqlog_add(&ctx->calls, weft_seqcheck_hash_str(text), NULL, text) != WEFT_SUCCESS)
        weft_warn("out of memory keeping '%s' for the check across ranks", text);
}

/* Rank 0 finds the first position where any rank's running hash differs
 * from its own and which ranks differ there; every rank learns both. */
static long first_divergence(weft_context_t *ctx, const weft_seqlog_t *l, int *differs)
{
    long n = (long)l->log.n, maxn = 0;
    MPI_Allreduce(&n, &maxn, 1, MPI_LONG, MPI_MAX, ctx->comm);
    size_t row = (size_t)maxn + 1;
    uint64_t *mine = calloc(row, sizeof *mine);
    uint64_t *all = ctx->rank == 0 ? calloc(row * (size_t)ctx->nranks, sizeof *all) : NULL;
    if (!mine || (ctx->rank == 0 && !all)) {
        weft_error("out of memory comparing the ranks' sequences: ending the run");
        MPI_Abort(ctx->comm, 1);
    }
    if (n) memcpy(mine, l->log.data, sizeof *mine * (size_t)n);
    MPI_Gather(mine, (int)row, MPI_UINT64_T, all, (int)row, MPI_UINT64_T, 0, ctx->comm);
    long first = maxn;
    for (int r = 1; ctx->rank == 0 && r < ctx->nranks; r++)
        for (long k = 0; k < first; k++)
            if (all[(size_t)r * row + (size_t)k] != all[k]) {
                first = k;
                break;
            }
    for (int r = 0; ctx->rank == 0 && r < ctx->nranks; r++)
        differs[r] = first < maxn && all[(size_t)r * row + (size_t)first] != all[first];
    MPI_Bcast(&first, 1, MPI_LONG, 0, ctx->comm);
    MPI_Bcast(differs, ctx->nranks, MPI_INT, 0, ctx->comm);
    free(mine);
    free(all);
    return first;
}

static void list_ranks(const int *differs, int nranks, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int r = 0; r < nranks && len + 16 < n; r++)
        if (differs[r]) len += (size_t)snprintf(buf + len, n - len, len ? ",%d" : "%d", r);
}

/* what: "task" or "data creation"; subject: the taskpool's words. */
static int report_divergence(weft_context_t *ctx, const weft_seqlog_t *l, const char *subject,
                             const char *verb, const char *what)
{
    int *differs = calloc((size_t)ctx->nranks, sizeof *differs);
    if (!differs) {
        weft_error("out of memory comparing the ranks' sequences: ending the run");
        MPI_Abort(ctx->comm, 1);
    }
    long k = first_divergence(ctx, l, differs);
    char ranks[256];
    list_ranks(differs, ctx->nranks, ranks, sizeof ranks);
    size_t at = (size_t)k;
    const char *mine = at >= l->log.n     ? NULL
                       : at < l->detail.n ? (const char *)weft_vec_at(&l->detail, at)
                                          : *(const char **)weft_vec_at(&l->name, at);
    if (mine)
        weft_error("%s: ranks %s different %ss; first divergent %s is #%ld, which this rank %s "
                   "as '%s' (ranks differing there from rank 0: %s)",
                   subject, verb, what, what, k, verb, mine, ranks);
    else
        weft_error("%s: ranks %s different %ss; first divergent %s is #%ld, which this rank never "
                   "%s (it %s %ld; ranks differing there from rank 0: %s)",
                   subject, verb, what, what, k, verb, verb, (long)l->log.n, ranks);
    free(differs);
    return WEFT_ERR_MISMATCH;
}

/* The agreement and, when the ranks are at the same point with different
 * histories, the first difference named (collectives all ranks enter,
 * since all saw the same outcome). */
static int check(weft_context_t *ctx, weft_agree_vote_t *v, weft_taskpool_t *tp)
{
    v->call_hash = ctx->calls.hash;
    v->ncalls = (long)ctx->calls.log.n + ctx->calls.lost;
    weft_agree_outcome_t out = {0};
    int rc = weft_agree(ctx, v, &out);
    /* An MPI failure leaves the outcome unknown: no further collective. */
    if (rc == WEFT_ERR_MPI) return rc;
    if (rc == WEFT_SUCCESS && !out.same_calls)
        rc = report_divergence(ctx, &ctx->calls, v->where, "made", "data creation");
    if (out.same_point && tp && !out.same_tasks) {
        char subject[96];
        snprintf(subject, sizeof subject, "taskpool %s", tp->name);
        int trc = report_divergence(ctx, &tp->seq, subject, "inserted", "task");
        if (rc == WEFT_SUCCESS) rc = trc;
    }
    if (rc == WEFT_SUCCESS) {
        seqlog_clear(&ctx->calls);
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
        .ntasks = (long)tp->seq.log.n + tp->seq.lost,
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

void weft_seqcheck_reset(weft_taskpool_t *tp) { seqlog_clear(&tp->seq); }
