/* A graph's task references while weft_ptg_insert builds (ptgbuild.c):
 * their names in error lines, their checks against the index spaces, the
 * rank and arguments the class functions give them, the local task a
 * reference names. */
#include <stdarg.h>
#include <stdio.h>

#include "ptg/ptg.h"
#include "stf/insert.h"
#include "stf/remote.h"
#include "util/log.h"
#include "util/tname.h"

#define PTG_MAX_ARGS 64

void weft_ptg__ref_text(const weft_ptg_build_t *b, const weft_ptg_ref_t *r, char *buf, size_t n)
{
    const weft_ptg_t *g = b->g;
    if (r->cls < 0 || r->cls >= g->nclasses) {
        snprintf(buf, n, "class #%d", r->cls);
        return;
    }
    const weft_ptg_class_t *k = &g->classes[r->cls];
    /* As the runtime's lines name the task once it exists. */
    snprintf(buf, n, "%s", weft_tname(k->task->name, 0, r->idx, k->ndims).text);
}

int weft_ptg__fail(const weft_ptg_build_t *b, const weft_ptg_ref_t *r, const char *fmt, ...)
{
    char who[160], why[400];
    weft_ptg__ref_text(b, r, who, sizeof who);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    weft_error("weft_ptg_insert: task %s: %s", who, why);
    return WEFT_ERR_INVALID;
}

weft_ptg_ref_t weft_ptg__norm(const weft_ptg_build_t *b, weft_ptg_ref_t r)
{
    if (r.cls >= 0 && r.cls < b->g->nclasses)
        for (int d = b->g->classes[r.cls].ndims; d < WEFT_PTG_MAX_DIMS; d++) r.idx[d] = 0;
    return r;
}

int weft_ptg__check_ref(const weft_ptg_build_t *b, const weft_ptg_ref_t *who,
                        const weft_ptg_ref_t *r)
{
    const weft_ptg_t *g = b->g;
    if (r->cls < 0 || r->cls >= g->nclasses)
        return weft_ptg__fail(b, who, "names a task of class #%d: the graph has classes 0..%d",
                              r->cls, g->nclasses - 1);
    /* Every edge passes here: the name is formatted only for an error. */
    char name[160];
    if (r->flow < 0 || r->flow >= WEFT_MAX_FLOWS) {
        weft_ptg__ref_text(b, r, name, sizeof name);
        return weft_ptg__fail(b, who, "names flow %d of %s: flows are 0..%d", r->flow, name,
                              WEFT_MAX_FLOWS - 1);
    }
    const weft_ptg_class_t *k = &g->classes[r->cls];
    for (int d = 0; d < k->ndims; d++) {
        int lo, hi;
        k->range(r->idx, d, &lo, &hi, g->arg);
        if (r->idx[d] >= lo && r->idx[d] <= hi) continue;
        weft_ptg__ref_text(b, r, name, sizeof name);
        return weft_ptg__fail(b, who,
                              "names %s, which is not a task of the graph (index %d is %d, "
                              "outside %d..%d)",
                              name, d, r->idx[d], lo, hi);
    }
    return WEFT_SUCCESS;
}

int weft_ptg__rank(const weft_ptg_build_t *b, const weft_ptg_ref_t *r)
{
    int rank = b->g->classes[r->cls].rank(r->idx, b->g->arg);
    if (rank >= 0 && rank < b->ctx->nranks) return rank;
    weft_ptg__fail(b, r, "its rank function gives %d: ranks are 0..%d", rank, b->ctx->nranks - 1);
    return -1;
}

int weft_ptg__parse(const weft_ptg_build_t *b, const weft_ptg_ref_t *r, weft_task_t *w, int *exec)
{
    const weft_ptg_class_t *k = &b->g->classes[r->cls];
    weft_arg_t args[PTG_MAX_ARGS];
    int n = k->args(r->idx, args, PTG_MAX_ARGS, b->g->arg);
    if (n < 0 || n > PTG_MAX_ARGS)
        return weft_ptg__fail(b, r, "its args function returned %d: give 0..%d arguments", n,
                              PTG_MAX_ARGS);
    /* The parse's own line, caught on this thread (another thread's error
     * line may come between): the other ranks get its words through the
     * refusal. */
    weft_log_cause_t why;
    weft_log_cause_reset(&why);
    weft_log_cause_t *outer = weft_log_cause_enter(&why);
    int aff;
    int rc = weft_insert_parse(b->tp, k->task, args, n, w, &aff);
    weft_log_cause_leave(outer);
    if (rc != WEFT_SUCCESS) {
        const char *text = weft_log_cause_text(&why);
        return weft_ptg__fail(b, r, "its arguments are refused: %s", text ? text : "see above");
    }
    /* As insertion does: the rank from the flows as given (after the merge
     * below a data read then written, R X ... W X, is one RW flow at the
     * read's place, which moved the task to X's owner where insertion ran
     * it on the first written data's, and no rank function was accepted),
     * then every rank that parses the task sees its modes. */
    if (exec) *exec = w->on_rank >= 0 ? w->on_rank : weft_remote_exec_rank(w, aff);
    weft_task_merge_repeated_flows(w);
    return WEFT_SUCCESS;
}

weft_task_t *weft_ptg__local(const weft_ptg_build_t *b, const weft_ptg_ref_t *r)
{
    weft_ptg_ref_t key = *r;
    key.flow = -1;
    size_t i = weft_ptgmap_get(&b->tasks, &key);
    return i == SIZE_MAX ? NULL : *(weft_task_t **)weft_vec_at(&b->local, i);
}
