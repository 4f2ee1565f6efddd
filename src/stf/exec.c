#include "stf/exec.h"

#include "sched/sched.h"
#include "stf/context.h"
#include "stf/taskpool.h"
#include "util/log.h"

void weft_exec_ready(void *arg, weft_task_t *t)
{
    weft_context_t *ctx = arg;
    weft_sched_push(ctx->sched, t, weft_sched_self());
}

/* First flow index that names the same data as flow i: a task may list a
 * tile twice, and must then use one copy and publish one new version. */
static int first_flow_of(const weft_task_t *t, int i)
{
    for (int j = 0; j < i; j++)
        if (t->flow[j].data == t->flow[i].data) return j;
    return i;
}

/* The host copy a CPU body uses for flow i, created for a written tile
 * that has no host memory yet (a NEW tile's first writer). */
static int host_flow_copy(weft_task_t *t, int i)
{
    weft_flow_t *f = &t->flow[i];
    weft_data_t *d = f->data;
    weft_data_lock(d);
    weft_data_copy_t *c = d->copies[0];
    if (!c && (f->mode & WEFT_W)) {
        void *p = weft_host_alloc(d->bytes);
        if (p) c = weft_data_copy_attach(d, 0, p, d->rows, WEFT_MEM_RUNTIME, weft_host_free, NULL);
        if (!c) weft_host_free(NULL, p, d->bytes);
    }
    int ok = c && (!(f->mode & WEFT_R) || (c->version == d->version && c->state != WEFT_COPY_INVALID));
    if (ok) weft_data_copy_reader_acquire_locked(c);
    weft_data_unlock(d);
    if (!ok) {
        weft_error("task %s #%llu: no host copy at the newest version of data %llu",
                   t->cls->name, (unsigned long long)t->seq, (unsigned long long)d->key);
        return WEFT_ERR_INTERNAL;
    }
    f->copy = c;
    return WEFT_SUCCESS;
}

static void publish_flows(weft_task_t *t, int ran)
{
    for (int i = 0; i < t->nflows; i++) {
        weft_flow_t *f = &t->flow[i];
        if (!f->copy) continue;
        weft_data_t *d = f->data;
        weft_data_lock(d);
        weft_data_copy_reader_release_locked(f->copy);
        if (ran && (f->mode & WEFT_W) && first_flow_of(t, i) == i) weft_data_written_locked(d, f->copy->device);
        weft_data_unlock(d);
    }
}

static int run_body_on_host(weft_context_t *ctx, weft_task_t *t)
{
    int rc = WEFT_SUCCESS;
    for (int i = 0; i < t->nflows && rc == WEFT_SUCCESS; i++) rc = host_flow_copy(t, i);
    weft_body_fn body = t->cls->body[WEFT_DEV_CPU];
    if (rc == WEFT_SUCCESS && !body) {
        weft_error("task %s has no CPU body", t->cls->name);
        rc = WEFT_ERR_INTERNAL;
    }
    if (rc == WEFT_SUCCESS && body(t) != 0) {
        weft_error("task %s #%llu failed", t->cls->name, (unsigned long long)t->seq);
        rc = WEFT_ERR_TASK;
    }
    publish_flows(t, rc == WEFT_SUCCESS);
    return rc;
}

void weft_exec_task(void *arg, weft_task_t *t, int worker)
{
    weft_context_t *ctx = arg;
    (void)worker;
    int rc = run_body_on_host(ctx, t);
    if (rc != WEFT_SUCCESS) weft_context_fail(ctx, rc);
    weft_taskpool_t *tp = t->tp;
    atomic_fetch_add_explicit(&tp->nrun, 1, memory_order_relaxed);
    weft_task_complete(t, weft_exec_ready, ctx);
    weft_task_unref(t);
    weft_taskpool_task_done(tp);
}
