/* The sequence check: each rank logs what it inserted and created, and
 * the ranks compare the running hashes at the next agreement. */
#include "stf/seqcheck.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context/coll.h"
#include "stf/agree.h"
#include "stf/taskrun.h"
#include "util/hash.h"
#include "util/ending.h"
#include "util/log.h"

/* The longest text of an entry named in a report. */
#define WEFT_SEQ_TEXT 128

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

/* What a task log keeps an entry under seqcheck_detail: the fields the
 * hash folds (weft_seqcheck_log), the first SEQ_TASK_FLOWS flows whole.
 * It begins with a kind, as a creation's record does, so that one
 * entry_text reads both. */
#define SEQ_TASK_FLOWS 4
typedef struct seq_task_rec {
    const weft_seqcall_kind_t *kind; /* &seq_task; NULL: a refusal (its note says it) */
    int32_t exec_rank, hint, nflows;
    int32_t own; /* weft added it (taskpool's inserting_own) */
    struct {
        uint64_t key;
        int32_t mode, owner, type, rows, cols;
    } flow[SEQ_TASK_FLOWS];
} seq_task_rec_t;

static const weft_seqcall_kind_t seq_task = {"task", NULL};

size_t weft_seqcheck_task_rec_size(void) { return sizeof(seq_task_rec_t); }

static const char *seq_mode_name(int mode)
{
    switch (mode & (WEFT_R | WEFT_W | WEFT_REDUX)) {
    case WEFT_R:
        return "R";
    case WEFT_W:
        return "W";
    case WEFT_RW:
        return "RW";
    case WEFT_REDUX:
        return "REDUX";
    default:
        return "?";
    }
}

/* name(on rank R, hint H: data K MODE ROWSxCOLS owner O type T; ...). */
static void describe_task(const seq_task_rec_t *r, const char *name, char *text, size_t n)
{
    int used =
        snprintf(text, n, "%s(on rank %d, hint %d", name ? name : "?", r->exec_rank, r->hint);
    for (int i = 0; i < r->nflows && i < SEQ_TASK_FLOWS && used > 0 && (size_t)used < n; i++)
        used += snprintf(text + used, n - (size_t)used, "%s data %llu %s %dx%d owner %d type %d",
                         i ? ";" : ":", (unsigned long long)r->flow[i].key,
                         seq_mode_name(r->flow[i].mode), r->flow[i].rows, r->flow[i].cols,
                         r->flow[i].owner, r->flow[i].type);
    if (used > 0 && (size_t)used < n)
        used += snprintf(text + used, n - (size_t)used, "%s)",
                         r->nflows > SEQ_TASK_FLOWS ? "; more flows not kept" : "");
    if (r->own && used > 0 && (size_t)used < n)
        snprintf(text + used, n - (size_t)used,
                 ", a task weft added for a WEFT_REDUX with the reduction's class (a "
                 "partial's init or a combine), not the program's");
}

static void task_record(const weft_task_t *t, int exec_rank, seq_task_rec_t *r)
{
    *r = (seq_task_rec_t){.kind = &seq_task,
                          .exec_rank = exec_rank,
                          .hint = t->device_hint,
                          .nflows = t->nflows,
                          .own = t->tp->inserting_own};
    for (int i = 0; i < t->nflows && i < SEQ_TASK_FLOWS; i++) {
        const weft_data_t *d = t->flow[i].data;
        r->flow[i].key = d->key;
        r->flow[i].mode = t->flow[i].mode;
        r->flow[i].owner = d->owner_rank;
        r->flow[i].type = (int32_t)d->type;
        r->flow[i].rows = (int32_t)d->rows;
        r->flow[i].cols = (int32_t)d->cols;
    }
}

int weft_seqcheck_log(weft_taskpool_t *tp, const weft_task_t *t, int exec_rank)
{
    /* Tasks of a class come in runs: its name is hashed once a run. The
     * class and its name, both: a class made on the stack by a helper, or
     * freed after a wait, comes back at the same address with another
     * name, and the old name's hash then hid a real divergence (or made
     * one of equal sequences). The cache goes at each wait too. */
    if (t->cls != tp->seq_cls || t->cls->name != tp->seq_cls_name) {
        tp->seq_cls = t->cls;
        tp->seq_cls_name = t->cls->name;
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
    if (tp->seq.rec.elem == 0) return seqlog_add(&tp->seq, h, t->cls->name, NULL);
    seq_task_rec_t rec;
    task_record(t, exec_rank, &rec);
    return seqlog_add(&tp->seq, h, t->cls->name, &rec);
}

static const weft_seqcall_kind_t seq_refused; /* a creation refused (below) */

/* The text of an entry of l: its refusal's words, its record described, or
 * its name. Returns 1 for a refusal. */
static int entry_text(const weft_seqlog_t *l, long k, char *text, size_t n)
{
    const char *note = weft_seqlog_note_at(l, k);
    const void *rec = weft_seqlog_rec(l, k);
    /* Both kinds of record begin with their kind (NULL: none kept). */
    const weft_seqcall_kind_t *kind = NULL;
    if (rec) memcpy(&kind, rec, sizeof kind);
    const weft_seqcall_t *c = kind && kind != &seq_task ? rec : NULL;
    const char *name = weft_seqlog_name(l, k);
    if (note == weft_seqlog_words_lost && c && c->kind == &seq_refused && k > 0 &&
        !weft_seqlog_note_at(l, k - 1)) {
        /* A creation refused: the call is the entry before. */
        char what[WEFT_SEQLOG_NOTE];
        entry_text(l, k - 1, what, sizeof what);
        snprintf(text, n, "%.160s (%s)", what, note);
    } else if (note == weft_seqlog_words_lost) {
        snprintf(text, n, "%s (%s)", name ? name : "a refusal", note);
    } else if (note)
        snprintf(text, n, "%s", note);
    else if (c)
        c->kind->describe(c->kind, c->arg, text, n);
    else if (kind == &seq_task)
        describe_task(rec, name, text, n);
    else
        snprintf(text, n, "%s", name ? name : "");
    return note != NULL;
}

/* Why this rank refused a call: the error line its check logged (a
 * creation clears the last one when it begins; status 0: the creation's
 * status is not known), or the status (out of memory, which logs nothing
 * of its own). */
static void refusal_reason(int status, char *text, size_t n)
{
    text[0] = '\0';
    if (status == WEFT_ERR_INVALID || status == WEFT_SUCCESS) weft_log_last_error(text, n);
    if (!text[0] && status == WEFT_SUCCESS) snprintf(text, n, "no error logged (out of memory?)");
    if (!text[0]) snprintf(text, n, "%s", weft_strerror(status));
}

/* Folds a refusal into l (the same on every rank that refuses: ranks that
 * refused alike stay in step), with detail (0: none) telling refusals of
 * different calls apart, and keeps its words with it. */
static void log_refusal(weft_context_t *ctx, weft_seqlog_t *l, const char *marker, const void *rec,
                        const char *what, int status, uint64_t detail)
{
    char reason[WEFT_SEQLOG_NOTE], note[WEFT_SEQLOG_NOTE];
    refusal_reason(status, reason, sizeof reason);
    /* The reason whole (a line of weft's is up to ~300 characters: at 150
     * the report cut it mid-word). */
    snprintf(note, sizeof note, "%.120s: %.380s", what, reason);
    if (seqlog_add(l, weft_seqcheck_hash_str(marker) ^ detail, marker, rec) == WEFT_SUCCESS)
        weft_seqlog_note(l, note, ctx->fault);
}

static void describe_refused(const weft_seqcall_kind_t *kind, const int64_t *arg, char *text,
                             size_t n)
{
    (void)arg;
    snprintf(text, n, "%s (its reason not kept: out of memory)", kind->name);
}

/* A refusal the log could not mark is described by its kind. */
static const weft_seqcall_kind_t seq_refused = {"a creation refused on this rank",
                                                describe_refused};

void weft_seqcheck_refused(weft_context_t *ctx)
{
    /* The call refused is the entry before: weft_seqcheck_call logged it
     * when the call began. */
    weft_seqlog_t *l = &ctx->calls;
    if (ctx->nranks < 2) return; /* nothing logged (weft_seqcheck_call) */
    char what[WEFT_SEQ_TEXT] = "a data creation";
    long n = weft_seqlog_count(l);
    if (n > 0) entry_text(l, n - 1, what, sizeof what);
    const weft_seqcall_t refused = {.kind = &seq_refused};
    log_refusal(ctx, l, seq_refused.name, &refused, what, WEFT_SUCCESS, 0);
}

/* A call refused with no entry of its own before it: a refusal of the
 * owner only (its devices), the other ranks logging nothing. */
static const weft_seqcall_kind_t seq_call_refused = {"a call refused on this rank",
                                                     describe_refused};

void weft_seqcheck_refused_call(weft_context_t *ctx, const char *what)
{
    if (ctx->nranks < 2) return;
    const weft_seqcall_t refused = {.kind = &seq_call_refused};
    /* The call's words are hashed in: two refusals of different calls (the
     * owner's alone, then one every rank made) no longer line up as one,
     * which named the wrong call. */
    log_refusal(ctx, &ctx->calls, seq_call_refused.name, &refused, what, WEFT_ERR_INVALID,
                weft_seqcheck_hash_str(what));
}

static void refused_task(weft_taskpool_t *tp, const char *cls_name, int status, uint64_t detail)
{
    tp->refused = 1;
    if (tp->ctx->nranks < 2) return;
    char what[WEFT_SEQ_TEXT];
    snprintf(what, sizeof what, "task %s", cls_name);
    log_refusal(tp->ctx, &tp->seq, "a task refused on this rank", NULL, what, status, detail);
}

void weft_seqcheck_refused_task(weft_taskpool_t *tp, const char *cls_name, int status)
{
    refused_task(tp, cls_name, status, 0);
}

void weft_seqcheck_refused_logged(weft_taskpool_t *tp, const char *cls_name, int status)
{
    /* The rank in the entry: ranks that all refused the task would agree,
     * and a wait would then wait for the transfers each had set up for it
     * before its refusal. */
    refused_task(tp, cls_name, status, (uint64_t)(tp->ctx->rank + 1) * 0x9e3779b97f4a7c15ULL);
}

void weft_seqcheck_call(weft_context_t *ctx, const weft_seqcall_kind_t *kind,
                        const int64_t arg[WEFT_SEQCALL_ARGS])
{
    /* Binary fields folded, no text: every rank pays this for every
     * creation of the run. Creations of a kind come in runs: its name is
     * hashed once a run. */
    weft_seqlog_t *l = &ctx->calls;
    /* A refusal of this call names the error it logs, not an older one. */
    weft_log_clear_last_error();
    /* One rank has no one to agree with, and no agreement would clear the
     * log: it grew for ever (70 B a creation, a loop of weft_data_new). */
    if (ctx->nranks < 2) return;
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

/* Whether position k differs between ranks: 1 or 0; -1 when the
 * collective failed in MPI (said, and the context diverged). */
static int differs_at(weft_context_t *ctx, weft_seqcheck_at_fn *at, const void *arg, long k,
                      const char *what)
{
    int64_t v = at(arg, k), in[2] = {v, -v}, out[2] = {0, 0};
    if (weft_coll_check(ctx, MPI_Allreduce(in, out, 2, MPI_INT64_T, MPI_MAX, ctx->comm), what))
        return -1;
    return out[0] != -out[1];
}

long weft_seqcheck_first_difference(weft_context_t *ctx, long n, weft_seqcheck_at_fn *at,
                                    const void *arg, long *maxn, const char *what)
{
    long most = 0;
    if (weft_coll_check(ctx, MPI_Allreduce(&n, &most, 1, MPI_LONG, MPI_MAX, ctx->comm), what))
        return -1;
    if (maxn) *maxn = most;
    long lo = 0, hi = most;
    while (lo < hi) {
        long mid = lo + (hi - lo) / 2;
        int d = differs_at(ctx, at, arg, mid, what);
        if (d < 0) return -1;
        if (d)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

char *weft_seqcheck_gather_text(weft_context_t *ctx, const char *mine, size_t width,
                                const char *what)
{
    char *all = malloc(width * (size_t)ctx->nranks);
    if (!all) {
        weft_error("out of memory %s: ending the run", what);
        weft_abort_job(ctx->comm, 1);
    }
    if (weft_coll_check(
            ctx, MPI_Allgather(mine, (int)width, MPI_CHAR, all, (int)width, MPI_CHAR, ctx->comm),
            what) != WEFT_SUCCESS) {
        free(all);
        return NULL;
    }
    return all;
}

static int64_t seqlog_hash_at(const void *arg, long k) { return weft_seqlog_at(arg, k); }

/* The first entry where the ranks' logs differ (weft_seqcheck_first_difference).
 * differs[r]: DIFFERS when rank r's entry there differs from rank 0's,
 * REFUSED when it is a refusal, ALONE too when that refusal is of a call
 * that logs no entry where it is accepted (weft_seqcheck_refused_call). */
enum { DIFFERS = 1, REFUSED = 2, ALONE = 4 };
/* The words of a report's collectives, in their messages. */
static const char seq_comparing[] = "comparing the ranks' sequences";

static long first_divergence(weft_context_t *ctx, const weft_seqlog_t *l, int *differs)
{
    long maxn;
    long lo = weft_seqcheck_first_difference(ctx, weft_seqlog_count(l), seqlog_hash_at, l, &maxn,
                                             seq_comparing);
    if (lo < 0) return -1;
    int64_t root = weft_seqlog_at(l, lo);
    if (weft_coll_check(ctx, MPI_Bcast(&root, 1, MPI_INT64_T, 0, ctx->comm), seq_comparing))
        return -1;
    int mine = (lo < maxn && weft_seqlog_at(l, lo) != root ? DIFFERS : 0) |
               (weft_seqlog_note_at(l, lo) ? REFUSED : 0) |
               (weft_seqlog_name(l, lo) == seq_call_refused.name ? ALONE : 0);
    if (weft_coll_check(ctx, MPI_Allgather(&mine, 1, MPI_INT, differs, 1, MPI_INT, ctx->comm),
                        seq_comparing))
        return -1;
    return lo;
}

static void list_ranks(const int *differs, int nranks, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int r = 0; r < nranks && len + 16 < n; r++)
        if (differs[r] & DIFFERS)
            len += (size_t)snprintf(buf + len, n - len, len ? ",%d" : "%d", r);
}

/* How a report names entries: "made" / "data creation", or "inserted" /
 * "task", and what a rank without the entry did wrong. */
typedef struct {
    const char *verb, *what, *absent;
    const char *accepted;   /* "" for tasks; for creations, where another rank refused */
    const char *next;       /* after a rank's entry #k there: the one after the call it accepted */
    const char *next_alone; /* the same where that call logs no entry (ALONE) */
} seq_words_t;

static const seq_words_t call_words = {
    "made",
    "data creation",
    "a creation made on some ranks only: every rank must make the same creations in the "
    "same order",
    " (it accepted the call refused there)",
    " (it accepted the call refused there, the entry before, and made this one next)",
    " (it accepted the call refused there, which makes no creation, and made this one next)"};
static const seq_words_t task_words = {
    "inserted",
    "task",
    "every rank must insert the same tasks in the same order; a refused insertion counts as "
    "none",
    "",
    "",
    ""};

/* Every rank logs what each rank made at position k, so that a creation
 * made on some ranks only (a weft_data_register inside "if (rank == 0)")
 * or a call refused on some ranks only (a NULL pointer on one rank, its
 * memory) is named, with the refusing rank's reason, on every rank, not
 * only on the ranks that made or refused it. Collective. At most 16 ranks
 * are listed: the first divergent ones are among them. */
static void log_each_rank(weft_context_t *ctx, const weft_seqlog_t *l, long k, const int *differs,
                          const seq_words_t *w)
{
    char mine[WEFT_SEQLOG_NOTE] = "";
    if (k >= 0 && k < weft_seqlog_count(l)) entry_text(l, k, mine, sizeof mine);
    char *all = weft_seqcheck_gather_text(ctx, mine, WEFT_SEQLOG_NOTE, seq_comparing);
    if (!all) return;
    int refusal = 0, alone = 0;
    for (int r = 0; r < ctx->nranks; r++) {
        refusal |= (differs[r] & REFUSED) != 0;
        alone |= (differs[r] & ALONE) != 0;
    }
    const char *next = !refusal ? "" : alone ? w->next_alone : w->next;
    for (int r = 0, shown = 0; r < ctx->nranks && shown < 16; r++) {
        if (r != 0 && !differs[r]) continue;
        const char *e = all + (size_t)r * WEFT_SEQLOG_NOTE;
        if (differs[r] & REFUSED)
            weft_error("  rank %d refused %s", r, e);
        else if (*e)
            weft_error("  rank %d %s #%ld as '%s'%s", r, w->verb, k, e, next);
        else if (refusal && *w->accepted)
            /* Not "made no data creation #1": it made the creation; only a
             * refusal logs an entry of its own. */
            weft_error("  rank %d accepted the call refused there, so it logged no entry #%ld", r,
                       k);
        else if (refusal)
            weft_error("  rank %d %s no %s #%ld", r, w->verb, w->what, k);
        else
            weft_error("  rank %d %s no %s #%ld (%s)", r, w->verb, w->what, k, w->absent);
        shown++;
    }
    free(all);
}

/* subject: the point's or the taskpool's words. each: log every rank's
 * entry (always when a rank refused there). */
static int report_divergence(weft_context_t *ctx, const weft_seqlog_t *l, const char *subject,
                             const seq_words_t *w, int each)
{
    int *differs = calloc((size_t)ctx->nranks, sizeof *differs);
    if (!differs) {
        weft_error("out of memory comparing the ranks' sequences: ending the run");
        weft_abort_job(ctx->comm, 1);
    }
    long k = first_divergence(ctx, l, differs);
    if (k < 0) {
        /* Its collective said why; the mismatch stands. */
        weft_error("%s: ranks %s different %ss; the first divergent one is not known", subject,
                   w->verb, w->what);
        free(differs);
        return WEFT_ERR_MISMATCH;
    }
    char ranks[256];
    list_ranks(differs, ctx->nranks, ranks, sizeof ranks);
    char mine[WEFT_SEQLOG_NOTE];
    int have = k < weft_seqlog_count(l), refused = have && entry_text(l, k, mine, sizeof mine);
    if (refused)
        weft_error("%s: ranks %s different %ss; first divergent %s is #%ld, where this rank "
                   "refused %s (ranks differing there from rank 0: %s)",
                   subject, w->verb, w->what, w->what, k, mine, ranks);
    else if (have)
        weft_error("%s: ranks %s different %ss; first divergent %s is #%ld, which this rank %s "
                   "as '%s' (ranks differing there from rank 0: %s)",
                   subject, w->verb, w->what, w->what, k, w->verb, mine, ranks);
    else
        weft_error("%s: ranks %s different %ss; first divergent %s is #%ld, which this rank never "
                   "%s (it %s %ld; ranks differing there from rank 0: %s)",
                   subject, w->verb, w->what, w->what, k, w->verb, w->verb, weft_seqlog_count(l),
                   ranks);
    /* Unless seqcheck_detail kept each task's fields (printed below, each
     * rank's), a task keeps only its class's name in the log (every rank
     * logs every task, docs/SCALE.md): say what else was compared. */
    if (have && !refused && w == &task_words && !ctx->seq_detail)
        weft_error("  a task is compared by its class, each flow's data, access mode, shape, "
                   "owner and type, the rank it runs on (its AFFINITY data's owner or "
                   "WEFT_ON_RANK) and its WEFT_DEVICE_HINT: one of them differs at #%ld "
                   "(--weft-seqcheck_detail=1 prints each rank's task there whole)",
                   k);
    if (w == &task_words && ctx->seq_detail) each = 1;
    for (int r = 0; r < ctx->nranks; r++) each |= (differs[r] & REFUSED) != 0;
    if (each) log_each_rank(ctx, l, k, differs, w);
    free(differs);
    return WEFT_ERR_MISMATCH;
}

int weft_seqcheck_report_made(weft_context_t *ctx, const char *where)
{
    return report_divergence(ctx, &ctx->calls, where, &call_words, 1);
}

/* The agreement and, when the ranks are at the same point with different
 * histories, the first difference named (collectives all ranks enter,
 * since all saw the same outcome). */
static int check(weft_context_t *ctx, weft_agree_vote_t *v, weft_taskpool_t *tp)
{
    /* The agreement compares the creations itself (and names the first
     * that differs). */
    weft_agree_outcome_t out = {0};
    int rc = weft_agree(ctx, v, &out);
    /* An MPI failure leaves the outcome unknown: no further collective
     * (the next wait's and weft_fini's agreements and barrier included). */
    if (rc == WEFT_ERR_MPI) {
        weft_taskrun_diverge(ctx, rc);
        return rc;
    }
    /* Not after a collective of the creations' report failed (it
     * diverged the context): no collective follows. */
    if (out.same_point && tp && !out.same_tasks && !ctx->diverged) {
        char subject[96];
        snprintf(subject, sizeof subject, "taskpool %s", tp->name);
        int trc = report_divergence(ctx, &tp->seq, subject, &task_words, 0);
        if (rc == WEFT_SUCCESS) rc = trc;
    }
    if (rc == WEFT_SUCCESS) {
        weft_seqlog_clear(&ctx->calls);
        return WEFT_SUCCESS;
    }
    /* No collective is safe any more: the ranks are not in step. The
     * bodies running return before the call that says so (a wait, a
     * graph's insertion, weft_fini). */
    weft_taskrun_diverge(ctx, rc);
    return rc;
}

/* tp's sequence and the creations compared at point (WAIT or PTG), where
 * the point's words are `where`. */
static int verify_pool(weft_taskpool_t *tp, weft_agree_point_t point, const char *where)
{
    weft_agree_vote_t v = {
        .point = point,
        .ordinal = tp->number,
        .task_hash = tp->seq.hash,
        .ntasks = weft_seqlog_count(&tp->seq) + tp->seq.lost,
    };
    snprintf(v.where, sizeof v.where, "%s '%.40s' (taskpool #%ld)", where, tp->name, tp->number);
    int rc = check(tp->ctx, &v, tp);
    if (rc != WEFT_SUCCESS) tp->mismatch = 1;
    return rc;
}

int weft_seqcheck_verify(weft_taskpool_t *tp)
{
    return verify_pool(tp, WEFT_AGREE_WAIT, "weft_taskpool_wait of taskpool");
}

int weft_seqcheck_graph(weft_taskpool_t *tp)
{
    return verify_pool(tp, WEFT_AGREE_PTG, "weft_ptg_insert into taskpool");
}

int weft_seqcheck_fini(weft_context_t *ctx)
{
    /* With the taskpools made: one made on some ranks only after their
     * last wait (every rank makes the same ones) is seen here or never. */
    weft_agree_vote_t v = {.point = WEFT_AGREE_FINI, .ordinal = ctx->taskpools_made};
    snprintf(v.where, sizeof v.where, "weft_fini (%ld taskpool%s made)", ctx->taskpools_made,
             ctx->taskpools_made == 1 ? "" : "s");
    return check(ctx, &v, NULL);
}

int weft_seqcheck_mpi_end_begin(weft_context_t *ctx, weft_agree_op_t *op)
{
    weft_agree_vote_t v = {.point = WEFT_AGREE_MPI_END, .status = WEFT_ERR_MPI};
    snprintf(v.where, sizeof v.where, "MPI_Finalize, called before weft_fini");
    /* Not check(): this rank's own error stays its own (the caller makes
     * it MPI's end), the outcome is the others' to act on. */
    return weft_agree_begin(ctx, &v, op);
}

void weft_seqcheck_reset(weft_taskpool_t *tp)
{
    weft_seqlog_clear(&tp->seq);
    tp->seq_cls = NULL;
    tp->seq_cls_name = NULL;
}
