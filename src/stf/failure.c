/* Failed and cancelled tasks: what a failure marks lost, the first
 * failure described, and its exchange between ranks at the wait. */
#include "stf/failure.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "comm/comm.h"
#include "context/coll.h"
#include "device/registry.h"
#include "stf/agree.h"
#include "stf/taskpool.h"
#include "util/log.h"

static int writes(const weft_task_t *t, int i)
{
    /* A RECV that only meets its sender (comm.h) leaves the data alone. */
    if (t->kind == WEFT_TASK_RECV && ((const weft_comm_action_t *)t->action)->discard) return 0;
    return (t->flow[i].mode & WEFT_W) && weft_task_first_flow_of(t, i) == i;
}

/* Whether a flow of that mode on d (under its lock) reads a lost version:
 * d is lost, or it is a voided partial read, not added to, or a partial
 * whose init task failed, whatever the flow: nothing to add into (its
 * contributions used to run, into no contents or the last reduction's). */
static int input_lost(const weft_data_t *d, int mode)
{
    if (d->lost || (d->partial_void & WEFT_PARTIAL_NO_INIT)) return 1;
    return d->partial_void && !(mode & WEFT_W);
}

int weft_failure_inputs_lost(const weft_task_t *t, const weft_data_t *except)
{
    int lost = 0;
    for (int i = 0; i < t->nflows && !lost; i++) {
        weft_data_t *d = t->flow[i].data;
        if (!(t->flow[i].mode & WEFT_R) || d == except) continue;
        weft_data_lock(d);
        lost = input_lost(d, t->flow[i].mode);
        weft_data_unlock(d);
    }
    return lost;
}

int weft_failure_check_inputs(weft_task_t *t)
{
    if (!t->cancelled) t->cancelled = weft_failure_inputs_lost(t, NULL);
    return t->cancelled;
}

/* Appends "data K, L <verb>" for t's flows of the mode asked, after a
 * comma when something precedes it in the parentheses. */
static size_t list_flows(const weft_task_t *t, int written, char *buf, size_t len, size_t n)
{
    int k = 0;
    const char *lead = buf[len - 1] == '(' ? "data " : ", data ";
    for (int i = 0; i < t->nflows && len < n; i++) {
        if (weft_task_first_flow_of(t, i) != i || ((t->flow[i].mode & WEFT_W) != 0) != written)
            continue;
        const weft_data_t *d = t->flow[i].data;
        len += (size_t)snprintf(buf + len, n - len, "%s%llu", k++ ? ", " : lead,
                                (unsigned long long)d->key);
        /* A partial is weft's own data: the user knows the one it reduces. */
        if (d->partial_of && len < n)
            len += (size_t)snprintf(buf + len, n - len, " [a partial of data %llu's reduction]",
                                    (unsigned long long)(d->partial_of - 1));
    }
    if (k && len < n) len += (size_t)snprintf(buf + len, n - len, written ? " written" : " read");
    return len;
}

/* A read flow's data that has no contents: a NEW data that no task wrote
 * and no initialiser fills (its first writer failed in an earlier
 * taskpool), what failed the task before its body ran. */
static const weft_data_t *empty_input(const weft_task_t *t)
{
    for (int i = 0; i < t->nflows; i++) {
        weft_data_t *d = t->flow[i].data;
        if (!(t->flow[i].mode & WEFT_R) || !(d->flags & WEFT_DATA_NEW) ||
            (d->flags & WEFT_DATA_INIT))
            continue;
        weft_data_lock(d);
        int empty = d->version == 0 && weft_data_valid_copies_locked(d) == 0;
        weft_data_unlock(d);
        if (empty) return d;
    }
    return NULL;
}

/* The words of t's cause (the first error line logged for it, util/log.h)
 * that its failure line does not say already: without "task NAME" and a
 * "failed" that follows; NULL when nothing is left. */
static const char *cause_words(const weft_task_t *t, const char *line)
{
    const char *c = weft_log_cause_text(&t->cause);
    if (!c) return NULL;
    weft_tname_t name = weft_task_name(t);
    size_t k = strlen(name.text);
    if (strncmp(c, "task ", 5) == 0 && strncmp(c + 5, name.text, k) == 0 &&
        strchr(": ", c[5 + k])) {
        c += 5 + k;
        c += strspn(c, ": ");
        if (strncmp(c, "failed: ", 8) == 0) c += 8;
    }
    return *c && !strstr(line, c) ? c : NULL;
}

/* The cause that only the running rank logged, appended to its failure
 * line, which every rank logs at the wait (they said "invalid argument"
 * or "internal error" alone). */
static void append_cause(const weft_task_t *t, char *buf, size_t n)
{
    const weft_data_t *d = t->body_rc == 0 ? empty_input(t) : NULL;
    size_t len = strlen(buf);
    if (len >= n) return;
    const char *words = d ? NULL : cause_words(t, buf);
    if (d)
        snprintf(buf + len, n - len,
                 ": data %llu has no contents: the task that was to write it first failed",
                 (unsigned long long)d->key);
    else if (words)
        snprintf(buf + len, n - len, ": %s", words);
}

/* "receive of data 7 v2 from rank 1 failed: WHY": WHY the words of the
 * first error line its comm thread logged about it: its own line ("receive
 * of data 7 v2 from rank 1: the device copy of a chunk failed (internal
 * error)", comm/xfer.c) less the part said already, or the line of what
 * failed under it (a device copy's), else the status's. */
static void describe_transfer(const weft_task_t *t, int rc, char *buf, size_t n)
{
    const weft_comm_action_t *a = t->action;
    int send = t->kind == WEFT_TASK_SEND;
    int len = snprintf(buf, n, "%s of data %llu v%u %s rank %d", send ? "send" : "receive",
                       (unsigned long long)t->flow[0].data->key, a->version, send ? "to" : "from",
                       a->peer);
    if (len < 0 || (size_t)len >= n) return;
    const char *c = weft_log_cause_text(&t->cause);
    const char *why = !c ? weft_strerror(rc)
                      : strncmp(c, buf, (size_t)len) == 0 && strncmp(c + len, ": ", 2) == 0
                          ? c + len + 2
                          : c;
    snprintf(buf + len, n - (size_t)len, " failed: %s", why);
}

/* "task gemm #12 returned -42 (data 7 written, data 3, 5 read)". */
static void describe(const weft_task_t *t, int rc, char *buf, size_t n)
{
    size_t len;
    if (t->kind != WEFT_TASK_BODY) {
        describe_transfer(t, rc, buf, n);
        return;
    }
    const weft_devices_t *ds = t->tp->ctx->devices;
    if (rc == WEFT_ERR_DEVICE && ds && t->device > 0 && t->device <= ds->n &&
        weft_device_is_broken(ds->dev[t->device]))
        len = (size_t)snprintf(buf, n, "task %s failed on device %s: %s (", weft_task_name(t).text,
                               ds->dev[t->device]->name, weft_strerror(rc));
    else if (t->body_rc != 0)
        len = (size_t)snprintf(buf, n, "task %s returned %d (", weft_task_name(t).text, t->body_rc);
    else if (atomic_load(&t->misuse) == 2) /* weft_task_error alone: the cause says why */
        len =
            (size_t)snprintf(buf, n, "task %s failed by weft_task_error (", weft_task_name(t).text);
    else
        len = (size_t)snprintf(buf, n, "task %s failed: %s (", weft_task_name(t).text,
                               weft_strerror(rc));
    if (len < n) len = list_flows(t, 1, buf, len, n);
    if (len < n) len = list_flows(t, 0, buf, len, n);
    if (len < n && buf[len - 1] == '(') len += (size_t)snprintf(buf + len, n - len, "no data");
    if (len + 2 <= n) memcpy(buf + len, ")", 2);
    append_cause(t, buf, n);
}

/* Under d's lock, t's body failed after it may have changed the copy of
 * d it was given (the one where t ran). When another copy on this rank
 * holds the same version (the host's, when the body ran on a device), the
 * version lives on there and only the changed copy goes; 1 when there is
 * none (before, the host's intact copy went with the device's). */
static int changed_only_copy_locked(weft_data_t *d, const weft_task_t *t)
{
    weft_data_copy_t *mine =
        t->device >= 0 && t->device < WEFT_MAX_DEVICES ? d->copies[t->device] : NULL;
    for (int i = 0; i < WEFT_MAX_DEVICES; i++) {
        weft_data_copy_t *c = d->copies[i];
        if (!c || c == mine || !weft_data_copy_is_newest_locked(d, c)) continue;
        if (mine) mine->state = WEFT_COPY_INVALID;
        weft_data_fix_owner_locked(d);
        return 0;
    }
    return 1;
}

/* Under d's lock: whether a copy here still holds d's version whole. A
 * receive that failed before its bytes came (its activation lost, its
 * post refused) left the copy it was to replace untouched; one whose bytes
 * were landing marked that copy not intact (weft_data_copy_arriving_locked).
 * Before, any failed receive said the version gone: the owner's intact
 * user memory was reported as "no good version is left" (a stranger's
 * comm_alloc:2 on 2 ranks), though the data kept its right value. */
static int version_whole_here_locked(weft_data_t *d)
{
    for (int i = 0; i < WEFT_MAX_DEVICES; i++) {
        const weft_data_copy_t *c = d->copies[i];
        if (c && c->intact && weft_data_copy_is_newest_locked(d, c)) return 1;
    }
    return 0;
}

void weft_failure_task_end(weft_context_t *ctx, weft_task_t *t, int rc)
{
    for (int i = 0; i < t->nflows; i++) {
        if (!writes(t, i)) continue;
        weft_data_t *d = t->flow[i].data;
        weft_data_lock(d);
        /* A contribution to a reduction that failed in its body or was
         * cancelled voids its partial, which stays usable: the next task
         * dealt that partial (lanes go in turn) runs for its other flows.
         * Before, it was cancelled with them, so which tasks ran depended
         * on the ranks and redux_lanes. */
        int voids =
            d->partial_of && rc != WEFT_SUCCESS && (rc == WEFT_ERR_CANCELLED || t->body_rc != 0);
        d->partial_void |= voids ? WEFT_PARTIAL_VOID : 0;
        /* A partial's init writes it without reading it. Done, the partial
         * is good again: it stayed void until the wait, and a later
         * reduction's combine in the taskpool was cancelled whole once a
         * contribution was dealt the lane (a fuzzer's finding). Failed,
         * whatever the partial held before, from an earlier reduction, is
         * no start: kept apart from a void, which a cancelled contribution
         * adds, so that the next contribution does not take the partial
         * for one to add into. */
        if (!(t->flow[i].mode & WEFT_R) && rc == WEFT_SUCCESS)
            d->partial_void = 0;
        else if (!(t->flow[i].mode & WEFT_R) && d->partial_of)
            d->partial_void |= WEFT_PARTIAL_NO_INIT;
        d->lost = rc != WEFT_SUCCESS && !voids;
        /* Whether the version last read here is gone from this rank's
         * bytes: a successful write makes a good one; a cancelled write,
         * an injected failure and an input that never arrived touch
         * nothing, so what an earlier failure here left stays said (a
         * cancelled follow-up cleared it, and the owner passed a failed
         * body's bytes on as good). */
        if (rc == WEFT_SUCCESS)
            d->lost_bytes = 0;
        else if (!voids && rc != WEFT_ERR_CANCELLED &&
                 (t->kind != WEFT_TASK_BODY ? !version_whole_here_locked(d)
                                            : t->body_ran && changed_only_copy_locked(d, t)))
            d->lost_bytes = 1;
        /* Alone, this rank knows it (on several, the wait's recovery tells
         * every rank alike: api/recover.c). */
        if (rc != WEFT_SUCCESS && ctx->nranks == 1 && (d->flags & WEFT_DATA_NEW) && d->version == 0)
            d->flags |= WEFT_DATA_FIRST_FAILED;
        weft_data_unlock(d);
    }
    if (rc == WEFT_SUCCESS) return;
    weft_failure_rec_t *rec = &t->tp->fail;
    if (rc == WEFT_ERR_CANCELLED) {
        atomic_fetch_add(&rec->ncancelled, 1);
        if (t->kind != WEFT_TASK_BODY) atomic_fetch_add(&rec->ncancelled_xfer, 1);
        atomic_fetch_add(&ctx->tasks_cancelled, 1);
        return;
    }
    atomic_fetch_add(&rec->nfailed, 1);
    atomic_fetch_add(&ctx->tasks_failed, 1);
    weft_context_fail(ctx, WEFT_ERR_TASK);
    int body = t->kind == WEFT_TASK_BODY;
    if (!atomic_exchange(body ? &rec->claimed : &rec->claimed_xfer, 1)) {
        rec->status = WEFT_ERR_TASK;
        describe(t, rc, body ? rec->what : rec->what_xfer, sizeof rec->what);
    }
}

void weft_failure_note(weft_taskpool_t *tp, int status, const char *what)
{
    weft_failure_rec_t *rec = &tp->fail;
    atomic_fetch_add(&rec->nfailed, 1);
    /* No weft_context_fail here: the exchange that follows gives every
     * rank the same status (the first failing rank's), so that weft_fini
     * returns the same on every rank. */
    if (!rec->noted) {
        rec->noted = 1;
        rec->note_status = status;
        snprintf(rec->note_what, sizeof rec->note_what, "%s", what);
    }
}

/* The first failing rank's words and status, in one broadcast from it:
 * an MPI error can be one rank's alone, and a rank that then skipped a
 * second broadcast would leave the others in it. One that fails diverges
 * ctx (coll.c) and none follows: the words the others got are unknown
 * (the root keeps its own), and the status, which becomes the wait's
 * return, is WEFT_ERR_MPI on every rank that saw the error. */
static void pass_first_on(weft_context_t *ctx, weft_failure_rec_t *rec, int first,
                          const char *where)
{
    if (weft_coll_share_failure(ctx, first, &rec->status, rec->what, sizeof rec->what, where) ==
        WEFT_SUCCESS)
        return;
    if (ctx->rank != first)
        snprintf(rec->what, sizeof rec->what, "(MPI failed passing the first failure on)");
    rec->status = WEFT_ERR_MPI;
}

int weft_failure_exchange(weft_taskpool_t *tp)
{
    weft_context_t *ctx = tp->ctx;
    weft_failure_rec_t *rec = &tp->fail;
    /* The lowest rank with a failed task, else the lowest with a note: a
     * note of the wait is often a consequence of a task's failure on
     * another rank (a good version lost with that rank's device cannot
     * come home), and named first it hid the cause. */
    int R = ctx->nranks, body_failed = atomic_load(&rec->claimed);
    int task_failed = body_failed || atomic_load(&rec->claimed_xfer);
    if (!body_failed && task_failed) memcpy(rec->what, rec->what_xfer, sizeof rec->what);
    int first = task_failed ? ctx->rank : rec->noted ? R + ctx->rank : INT_MAX;
    if (!task_failed && rec->noted) { /* what this rank would send */
        memcpy(rec->what, rec->note_what, sizeof rec->what);
        rec->status = rec->note_status;
    }
    /* A simulation's failure is its own: its rank is not an MPI rank. */
    int shared = R > 1 && !ctx->sim && !ctx->diverged;
    /* A collective MPI failed leaves the ranks' views unknown: this rank's
     * own failure is named, and no collective follows (a broadcast from a
     * root the others did not pick would not match). */
    char where[96];
    snprintf(where, sizeof where, "weft_taskpool_wait of taskpool '%.40s' (its failures)",
             tp->name);
    int own = first;
    if (shared && weft_agree_allreduce(ctx, &first, 1, MPI_INT, MPI_MIN, where) != WEFT_SUCCESS) {
        weft_context_diverge(ctx, WEFT_ERR_MPI);
        shared = 0;
        first = own; /* what MPI left there is no rank's answer: a rank named with no words */
    }
    if (first != INT_MAX && first >= R) first -= R;
    int rc = WEFT_SUCCESS;
    if (first != INT_MAX) {
        if (shared) pass_first_on(ctx, rec, first, where);
        rec->what[sizeof rec->what - 1] = '\0';
        /* The user inserted the tasks, not the transfers weft added. */
        long nx = (long)atomic_load(&rec->ncancelled_xfer);
        long nc = (long)atomic_load(&rec->ncancelled) - nx;
        char xfers[48] = "";
        if (nx > 0) snprintf(xfers, sizeof xfers, " (and %ld transfer%s)", nx, nx == 1 ? "" : "s");
        weft_error("taskpool %s failed: rank %d: %s; %ld task%s cancelled here%s", tp->name, first,
                   rec->what, nc, nc == 1 ? "" : "s", xfers);
        rc = rec->status != WEFT_SUCCESS ? rec->status : WEFT_ERR_TASK;
        weft_context_fail(ctx, rc);
    }
    for (size_t i = 0; i < tp->touched.n; i++) {
        weft_data_t *d = weft_taskpool_touched(tp, i);
        weft_data_lock(d);
        d->lost = 0;
        d->lost_bytes = 0;
        d->partial_void = 0;
        weft_data_unlock(d);
    }
    atomic_store(&rec->claimed, 0);
    atomic_store(&rec->claimed_xfer, 0);
    rec->noted = 0;
    atomic_store(&rec->nfailed, 0);
    atomic_store(&rec->ncancelled, 0);
    atomic_store(&rec->ncancelled_xfer, 0);
    /* The wait began in step (a diverged context returns at its start): a
     * collective of this wait failed in MPI, which this wait reports
     * rather than the next one, and on every rank alike: a rank whose own
     * task failed returned WEFT_ERR_TASK where the others returned
     * WEFT_ERR_MPI, and a program retrying on the one took other branches
     * there. Its own failure stays named above. */
    if (ctx->diverged) rc = WEFT_ERR_MPI;
    return rc;
}
