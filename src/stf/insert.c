/* Task insertion (sequential task flow): parse the arguments, infer the
 * dependencies from the access modes in insertion order, release the task
 * when nothing precedes it. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/sched.h"
#include "sched/task.h"
#include "stf/insert.h"
#include "stf/record.h"
#include "stf/remote.h"
#include "stf/seqcheck.h"
#include "stf/taskpool.h"
#include "util/clock.h"
#include "util/log.h"

/* pos counts the task's arguments after the class from 1: a (mode, data)
 * pair, a (WEFT_VALUE, ptr, bytes) triple or a (WEFT_PRIORITY, int) pair
 * each make one. The handle is checked before anything is read from it:
 * a matrix, a released data or a stray pointer is refused, not retained. */
static int add_flow(weft_task_t *t, int tag, weft_data_t *d, int pos)
{
    const char *name = t->cls->name;
    char call[96];
    snprintf(call, sizeof call, "insert %s", name);
    if (!weft_handle_check(d, WEFT_HANDLE_DATA, call, pos)) return WEFT_ERR_INVALID;
    if (t->nflows == WEFT_MAX_FLOWS) {
        weft_error("insert %s: more than %d data arguments", name, WEFT_MAX_FLOWS);
        return WEFT_ERR_INVALID;
    }
    weft_flow_t *f = &t->flow[t->nflows++];
    f->data = d;
    f->mode = tag & WEFT_RW;
    f->copy = NULL;
    f->out_version = 0;
    weft_data__retain(d);
    return WEFT_SUCCESS;
}

static int add_value(weft_task_t *t, const void *ptr, size_t bytes, int pos)
{
    const char *name = t->cls->name;
    if (t->nvalues == WEFT_MAX_VALUES || bytes > WEFT_MAX_VALUE_BYTES || (!ptr && bytes)) {
        weft_error("insert %s: value argument %d: at most %d values of at most %d bytes", name, pos,
                   WEFT_MAX_VALUES, WEFT_MAX_VALUE_BYTES);
        return WEFT_ERR_INVALID;
    }
    int off = t->nvalues ? t->value_off[t->nvalues - 1] + t->value_len[t->nvalues - 1] : 0;
    memcpy(t->values + off, ptr, bytes);
    t->value_off[t->nvalues] = (uint16_t)off;
    t->value_len[t->nvalues] = (uint16_t)bytes;
    t->nvalues++;
    return WEFT_SUCCESS;
}

static int parse_args(weft_task_t *t, int *tags, va_list ap)
{
    for (int pos = 1;; pos++) {
        int tag = va_arg(ap, int);
        if (tag == 0) return WEFT_SUCCESS;
        int rc;
        if (tag == WEFT_VALUE) {
            const void *p = va_arg(ap, const void *);
            rc = add_value(t, p, va_arg(ap, size_t), pos);
        } else if (tag == WEFT_PRIORITY) {
            t->priority = va_arg(ap, int);
            rc = WEFT_SUCCESS;
        } else if ((tag & WEFT_RW) && !(tag & ~(WEFT_RW | WEFT_AFFINITY))) {
            if (t->nflows < WEFT_MAX_FLOWS) tags[t->nflows] = tag;
            rc = add_flow(t, tag, va_arg(ap, weft_data_t *), pos);
        } else {
            weft_error("insert %s: argument %d has unknown tag 0x%x (expected a mode, "
                       "WEFT_VALUE, WEFT_PRIORITY or 0 to end)",
                       t->cls->name, pos, tag);
            rc = WEFT_ERR_INVALID;
        }
        if (rc != WEFT_SUCCESS) return rc;
    }
}

static int check_flows(const weft_task_t *t)
{
    for (int i = 0; i < t->nflows; i++) {
        const weft_data_t *d = t->flow[i].data;
        const weft_stf_rec_t *rec = weft_stf_rec(d);
        int never_written = (d->flags & WEFT_DATA_NEW) && (!rec || !rec->last_writer) &&
                            d->version == 0 && weft_remote_version(d) == 0;
        if (never_written && (t->flow[i].mode & WEFT_R)) {
            weft_error("insert %s: reads NEW data %llu before any task wrote it", t->cls->name,
                       (unsigned long long)d->key);
            return WEFT_ERR_INVALID;
        }
        if (d->host_access) {
            weft_error("insert %s: data %llu is acquired by the host (weft_data_host_acquire): "
                       "call weft_data_host_release on it before inserting tasks that use it",
                       t->cls->name, (unsigned long long)d->key);
            return WEFT_ERR_INVALID;
        }
        if (d->ctx != t->tp->ctx) {
            weft_error("insert %s: data %llu belongs to another weft context than the taskpool",
                       t->cls->name, (unsigned long long)d->key);
            return WEFT_ERR_INVALID;
        }
    }
    return WEFT_SUCCESS;
}

/* Read after write: after the last writer. Write after read: after every
 * reader since that write (they follow the writer already). Write after
 * write: after the last writer when nobody read in between. */
static int infer_flow(weft_taskpool_t *tp, weft_task_t *t, weft_data_t *d, int mode)
{
    weft_stf_rec_t *rec = weft_stf_rec_touch(tp, d);
    if (!rec) return WEFT_ERR_NOMEM;
    if (!(mode & WEFT_W)) {
        if (rec->last_writer) weft_task_add_edge(rec->last_writer, t);
        return weft_stf_rec_push_reader(rec, t);
    }
    if (rec->readers.n > 0) {
        for (size_t r = 0; r < rec->readers.n; r++) {
            weft_task_t *reader = weft_stf_rec_reader(rec, r);
            weft_task_add_edge(reader, t);
            weft_task_unref(reader);
        }
        weft_vec_clear(&rec->readers);
    } else if (rec->last_writer) {
        weft_task_add_edge(rec->last_writer, t);
    }
    weft_task_retain(t);
    if (rec->last_writer) weft_task_unref(rec->last_writer);
    rec->last_writer = t;
    return WEFT_SUCCESS;
}

int weft_insert_local(weft_taskpool_t *tp, weft_task_t *t)
{
    weft_context_t *ctx = tp->ctx;
    int rc = WEFT_SUCCESS;
    t->seq = ctx->next_seq++;
    for (int i = 0; i < t->nflows && rc == WEFT_SUCCESS; i++)
        rc = infer_flow(tp, t, t->flow[i].data, t->flow[i].mode);
    if (rc != WEFT_SUCCESS) weft_error("insert %s: out of memory", t->cls->name);
    /* Even on failure the task is released so that nothing waits forever. */
    long pending = atomic_fetch_add_explicit(&tp->pending, 1, memory_order_relaxed) + 1;
    if (weft_task_insert_done(t)) ctx->ready(ctx, t);
    /* Far ahead of the workers: run ready tasks here for a while. Never
     * block: on several ranks the tasks that would unblock ours may need
     * insertions still to come. */
    if (pending > ctx->insert_window)
        while (atomic_load_explicit(&tp->pending, memory_order_relaxed) > ctx->insert_window / 2 &&
               weft_sched_help(ctx->sched)) {
        }
    return rc;
}

static int affinity_flow(int *tags, int n)
{
    for (int i = 0; i < n; i++)
        if (tags[i] & WEFT_AFFINITY) return i;
    return -1;
}

/* Distributed part: every rank updates the records; only the rank that
 * runs the task keeps it. Returns 1 when the task stays on this rank. */
static int distribute(weft_taskpool_t *tp, weft_task_t *t, int aff, int *rc)
{
    weft_context_t *ctx = tp->ctx;
    int exec_rank = weft_remote_exec_rank(t, aff);
    *rc = weft_seqcheck_log(tp, t, exec_rank);
    if (*rc == WEFT_SUCCESS) *rc = weft_remote_infer(tp, t, exec_rank);
    return exec_rank == ctx->rank;
}

int weft_insert_task(weft_taskpool_t *tp, const weft_task_class_t *cls, ...)
{
    if (!weft_handle_check(tp, WEFT_HANDLE_TASKPOOL, "weft_insert_task", 1))
        return WEFT_ERR_INVALID;
    if (!cls || !cls->name) {
        weft_error("argument 2 of weft_insert_task is %s: pass a weft_task_class_t with a name",
                   cls ? "a task class without a name" : "NULL");
        return WEFT_ERR_INVALID;
    }
    weft_task_t *t = weft_task_alloc(&tp->ctx->task_pool);
    if (!t) return WEFT_ERR_NOMEM;
    t->cls = cls;
    t->tp = tp;
    int tags[WEFT_MAX_FLOWS];
    va_list ap;
    va_start(ap, cls);
    int rc = parse_args(t, tags, ap);
    va_end(ap);
    if (rc == WEFT_SUCCESS) rc = check_flows(t);
    if (rc != WEFT_SUCCESS) {
        /* Refused: nothing inserted, so nothing for a wait to wait for. */
        weft_task_unref(t);
        return rc;
    }
    if (tp->t_first == 0) tp->t_first = weft_clock_s();
    t->device = 0;
    t->affinity = affinity_flow(tags, t->nflows);
    if (tp->ctx->nranks > 1 && !distribute(tp, t, affinity_flow(tags, t->nflows), &rc)) {
        weft_task_unref(t);
        return rc;
    }
    tp->ninserted_local++;
    int rc2 = weft_insert_local(tp, t);
    return rc != WEFT_SUCCESS ? rc : rc2;
}
