/* What a body sees of its task. Called on the thread running the body. */
#include <assert.h>
#include <string.h>

#include "sched/task.h"

void *weft_task_ptr(const weft_task_t *t, int flow)
{
    assert(flow >= 0 && flow < t->nflows && t->flow[flow].copy);
    return t->flow[flow].copy->ptr;
}

int64_t weft_task_ld(const weft_task_t *t, int flow)
{
    assert(flow >= 0 && flow < t->nflows && t->flow[flow].copy);
    return t->flow[flow].copy->ld;
}

int weft_task_rows(const weft_task_t *t, int flow) { return t->flow[flow].data->rows; }
int weft_task_cols(const weft_task_t *t, int flow) { return t->flow[flow].data->cols; }

void weft_task_value(const weft_task_t *t, int i, void *out)
{
    assert(i >= 0 && i < t->nvalues);
    memcpy(out, t->values + t->value_off[i], t->value_len[i]);
}

const weft_task_class_t *weft_task_class(const weft_task_t *t) { return t->cls; }
int weft_task_device(const weft_task_t *t) { return t->device; }
void *weft_task_stream(const weft_task_t *t) { return t->stream; }
void *weft_task_blas_handle(const weft_task_t *t) { return t->blas; }
void *weft_task_solver_handle(const weft_task_t *t) { return t->solver; }
void *weft_task_workspace(const weft_task_t *t, size_t bytes)
{
    return bytes && bytes <= t->workspace_bytes ? t->workspace : NULL;
}
