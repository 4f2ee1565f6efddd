/* What a body sees of its task. Called on the thread running the body.
 * Every index and size is checked (a compare, always on): a bad one is
 * logged with the task's name, the call returns NULL or 0, and the task is
 * marked so that its completion is an error whatever the body returns. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sched/task.h"
#include "util/inbody.h"
#include "util/log.h"

/* Logs line as t's error: on a thread its body started (an OpenMP
 * team's, a pthread of its own) outside the body's cause span, so the
 * line is offered to t's cause directly (the failure line had read "failed:
 * invalid argument" without the call's words). */
static void task_line(const weft_task_t *t, const char *line)
{
    weft_error("%s", line);
    if (!weft_inbody_in_task()) weft_log_cause_offer(&((weft_task_t *)t)->cause, line);
}

/* Logs the misuse and marks t as failed. */
static void misuse(const weft_task_t *t, const char *call, const char *what, int index, int count)
{
    char line[WEFT_LOG_LINE];
    snprintf(line, sizeof line, "task %s: %s(%d): %s (the task has %d): the task fails",
             weft_task_name(t).text, call, index, what, count);
    task_line(t, line);
    atomic_fetch_or(&((weft_task_t *)t)->misuse, 1);
}

/* Logs an accessor's NULL task; inside a body, the task running fails
 * (it passed the NULL: a body that went on as if nothing happened read
 * nothing, and returning 0 made its task a success). */
static void null_task(const char *call)
{
    weft_error("%s: NULL task%s", call,
               weft_inbody_fail_task() ? ": the task whose body called it fails" : "");
}

/* Whether t is a task: a NULL one is named, as by every accessor. */
static int is_task(const weft_task_t *t, const char *call)
{
    if (!t) null_task(call);
    return t != NULL;
}

/* Flow `flow` of t, or NULL after logging. */
static const weft_flow_t *flow_of(const weft_task_t *t, int flow, const char *call)
{
    if (!t) {
        null_task(call);
        return NULL;
    }
    if (flow < 0 || flow >= t->nflows) {
        misuse(t, call, "no such data flow", flow, t->nflows);
        return NULL;
    }
    return &t->flow[flow];
}

/* Value `i` of t checked, or -1 after logging. */
static int value_index(const weft_task_t *t, int i, const char *call)
{
    if (!t) {
        null_task(call);
        return -1;
    }
    if (i < 0 || i >= t->nvalues) {
        misuse(t, call, "no such value", i, t->nvalues);
        return -1;
    }
    return i;
}

void *weft_task_ptr(const weft_task_t *t, int flow)
{
    const weft_flow_t *f = flow_of(t, flow, "weft_task_ptr");
    return f && f->copy ? f->copy->ptr : NULL;
}

int64_t weft_task_ld(const weft_task_t *t, int flow)
{
    const weft_flow_t *f = flow_of(t, flow, "weft_task_ld");
    return f && f->copy ? f->copy->ld : 0;
}

int weft_task_rows(const weft_task_t *t, int flow)
{
    const weft_flow_t *f = flow_of(t, flow, "weft_task_rows");
    return f ? f->data->rows : 0;
}

int weft_task_cols(const weft_task_t *t, int flow)
{
    const weft_flow_t *f = flow_of(t, flow, "weft_task_cols");
    return f ? f->data->cols : 0;
}

weft_dtype_t weft_task_type(const weft_task_t *t, int flow)
{
    const weft_flow_t *f = flow_of(t, flow, "weft_task_type");
    return f ? f->data->type : WEFT_BYTE;
}

size_t weft_task_elem_size(const weft_task_t *t, int flow)
{
    const weft_flow_t *f = flow_of(t, flow, "weft_task_elem_size");
    return f ? f->data->elem : 0;
}

int weft_task_nflows(const weft_task_t *t)
{
    return is_task(t, "weft_task_nflows") ? t->nflows : 0;
}

int weft_task_nvalues(const weft_task_t *t)
{
    return is_task(t, "weft_task_nvalues") ? t->nvalues : 0;
}

size_t weft_task_value_size(const weft_task_t *t, int i)
{
    return value_index(t, i, "weft_task_value_size") < 0 ? 0 : t->value_len[i];
}

int weft_task_value_get(const weft_task_t *t, int i, void *out, size_t bytes)
{
    if (value_index(t, i, "weft_task_value_get") < 0) return WEFT_ERR_INVALID;
    if (bytes != t->value_len[i] || (!out && bytes)) {
        weft_error("task %s: weft_task_value_get(%d): %zu bytes asked for a value of %u "
                   "bytes%s: the task fails",
                   weft_task_name(t).text, i, bytes, (unsigned)t->value_len[i],
                   out ? "" : " into NULL");
        atomic_fetch_or(&((weft_task_t *)t)->misuse, 1);
        return WEFT_ERR_INVALID;
    }
    memcpy(out, t->values + t->value_off[i], bytes);
    return WEFT_SUCCESS;
}

void weft_task_value(const weft_task_t *t, int i, void *out)
{
    if (value_index(t, i, "weft_task_value") < 0) return;
    if (!out) {
        misuse(t, "weft_task_value", "NULL destination", i, t->nvalues);
        return;
    }
    memcpy(out, t->values + t->value_off[i], t->value_len[i]);
}

const weft_task_class_t *weft_task_class(const weft_task_t *t)
{
    return is_task(t, "weft_task_class") ? t->cls : NULL;
}
int weft_task_device(const weft_task_t *t)
{
    return is_task(t, "weft_task_device") ? t->device : -1;
}
void *weft_task_stream(const weft_task_t *t)
{
    return is_task(t, "weft_task_stream") ? t->stream : NULL;
}
void *weft_task_blas_handle(const weft_task_t *t)
{
    return is_task(t, "weft_task_blas_handle") ? t->blas : NULL;
}
void *weft_task_solver_handle(const weft_task_t *t)
{
    return is_task(t, "weft_task_solver_handle") ? t->solver : NULL;
}
void *weft_task_workspace(const weft_task_t *t, size_t bytes)
{
    return is_task(t, "weft_task_workspace") && bytes && bytes <= t->workspace_bytes ? t->workspace
                                                                                     : NULL;
}

void weft_task_error(const weft_task_t *t, const char *fmt, ...)
{
    if (!t) {
        null_task("weft_task_error");
        return;
    }
    /* Outside a body, only on a thread the body started, while it runs:
     * a pointer kept past the body names a task that is gone, or another
     * one by now (task structures are reused); the thread that made the
     * context starts no such thread (t is not read there). */
    int in_task = weft_inbody_in_task();
    if (!in_task &&
        (weft_inbody_contexts_made() > 0 || !atomic_load(&((weft_task_t *)t)->in_body))) {
        weft_error("weft_task_error called outside a task body and while its task's body does "
                   "not run: only a body (or a thread it started, while it runs) may say why its "
                   "task fails (the call is refused)");
        return;
    }
    /* Inside a body, a task whose body does not run is another one (one
     * that ended, its pointer kept): nothing failed and the words were
     * lost; the calling body's task fails instead. */
    if (in_task && !atomic_load(&((weft_task_t *)t)->in_body)) {
        weft_error("weft_task_error called from a body with another task, whose body does not "
                   "run (a pointer kept past it)%s",
                   weft_inbody_fail_task() ? ": the task whose body called it fails" : "");
        return;
    }
    /* Still a task that says it fails, with no words of why. */
    if (!fmt) fmt = "weft_task_error called with a NULL format";
    char text[WEFT_LOG_CAUSE * 2], line[WEFT_LOG_LINE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    /* Inside the body's cause span this line, unless weft logged one
     * first, is what every rank's failure line says of the task; from a
     * thread the body started it is offered to the cause (task_line). The
     * call was refused there, so a failure said by an OpenMP team's thread
     * was dropped and the run succeeded. The task is the caller's to keep
     * alive: its body has not returned. */
    snprintf(line, sizeof line, "task %s: %s", weft_task_name(t).text, text);
    task_line(t, line);
    /* It says why the task fails: a body that then returns 0 fails it too
     * (an error line in a run that succeeded, before), as a task failure,
     * not a misuse ("invalid argument" sent its user looking for one). */
    atomic_fetch_or(&((weft_task_t *)t)->misuse, 2);
}
