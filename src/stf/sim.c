/* Simulation mode: the setup that makes one process act as rank r of n,
 * the hold and retirement of the tasks it keeps, the scratch memory that
 * stands in for tiles, and the summary line. */
#include "stf/sim.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "comm/comm.h"
#include "stf/taskpool.h"
#include "util/log.h"

struct weft_sim {
    weft_task_t *head, *tail; /* released tasks held for the wait, through t->next */
    struct scratch *scratch;  /* weft_sim_scratch's newest, the largest */
};

/* A scratch block; the older, smaller ones stay behind it until the end:
 * a pointer the application holds (a tile acquired and not released, a
 * weft_data_host_ptr) keeps working when a larger tile's acquire needs a
 * larger block (freed, it was a use after free in the application's
 * next write). Each block at least doubles the one before: the blocks in
 * all are under twice the largest. */
struct scratch {
    struct scratch *older;
    size_t bytes;
    max_align_t mem[];
};

int weft_sim_setup(weft_context_t *ctx)
{
    int64_t n = weft_params_int(ctx->params, "sim_nranks");
    int64_t r = weft_params_int(ctx->params, "sim_rank");
    if (n == 0 && r != 0) {
        /* Alone it would be ignored: the run would be real, not the
         * simulation asked for. */
        weft_error("sim_rank=%lld without sim_nranks: a simulation needs both (sim_nranks=N "
                   "sim_rank=R); drop sim_rank for a real run",
                   (long long)r);
        return WEFT_ERR_PARAM;
    }
    if (n == 0) return WEFT_SUCCESS;
    if (ctx->nranks != 1) {
        weft_error("sim_nranks=%lld: a simulation is one process, but MPI started %d: run it "
                   "without mpiexec (or with -n 1)",
                   (long long)n, ctx->nranks);
        return WEFT_ERR_PARAM;
    }
    if (r >= n) {
        weft_error("sim_rank=%lld is not a rank of sim_nranks=%lld: give one in [0, %lld)",
                   (long long)r, (long long)n, (long long)n);
        return WEFT_ERR_PARAM;
    }
    /* Every simulated rank on one node: only the comm engine, which a
     * simulation does not start, reads it. */
    int *node_of = calloc((size_t)n, sizeof *node_of);
    struct weft_sim *s = calloc(1, sizeof *s);
    if (!node_of || !s) {
        free(node_of);
        free(s);
        weft_error("sim_nranks=%lld: out of host memory", (long long)n);
        return WEFT_ERR_NOMEM;
    }
    free(ctx->node_of);
    ctx->node_of = node_of;
    ctx->rank = (int)r;
    ctx->world_rank = (int)r; /* the simulated world's: its lines and trace file */
    ctx->nranks = (int)n;
    ctx->sim = s;
    weft_log_set_rank(ctx->rank);
    return WEFT_SUCCESS;
}

static void sim_ready(void *arg, weft_task_t *t)
{
    struct weft_sim *s = ((weft_context_t *)arg)->sim;
    t->next = NULL;
    if (s->tail)
        s->tail->next = t;
    else
        s->head = t;
    s->tail = t;
}

void weft_sim_take_ready(weft_context_t *ctx) { ctx->ready = sim_ready; }

/* What a run publishes, without a copy: the versions t's writes make (a
 * NEW tile is then written, and may be read). */
static void sim_publish(weft_task_t *t)
{
    /* A RECV of a version made here changes nothing (ptg/ptgxfer.c). */
    if (t->kind == WEFT_TASK_RECV && ((const weft_comm_action_t *)t->action)->discard) return;
    for (int i = 0; i < t->nflows; i++) {
        weft_flow_t *f = &t->flow[i];
        if (!(f->mode & WEFT_W) || weft_task_first_flow_of(t, i) != i) continue;
        weft_data_lock(f->data);
        uint32_t v = f->out_version;
        /* A RECV puts the version it names (each RECV of one version
         * alike); a task's 0 means one more than the last. */
        f->data->version = v || t->kind == WEFT_TASK_RECV ? v : f->data->version + 1;
        weft_data_unlock(f->data);
    }
}

/* A kept task ends as if its body (or transfer) had run: its successors
 * are released onto the same list. */
void weft_sim_drain(weft_context_t *ctx)
{
    struct weft_sim *s = ctx->sim;
    while (s->head) {
        weft_task_t *t = s->head;
        s->head = t->next;
        if (!s->head) s->tail = NULL;
        weft_taskpool_t *tp = t->tp;
        sim_publish(t);
        /* No engine ends it: its share of an arrival ends here. */
        if (t->kind == WEFT_TASK_RECV) weft_comm_arrival_leave(t->action);
        weft_task_complete(t, sim_ready, ctx);
        weft_task_unref(t);
        weft_taskpool_task_done(tp);
    }
}

void *weft_sim_scratch(weft_context_t *ctx, size_t bytes)
{
    struct weft_sim *s = ctx->sim;
    struct scratch *now = s->scratch;
    if (now && bytes <= now->bytes) return now->mem;
    if (now && bytes < 2 * now->bytes) bytes = 2 * now->bytes;
    if (bytes > SIZE_MAX - sizeof *now) return NULL;
    struct scratch *b = calloc(1, sizeof *b + bytes);
    if (!b) return NULL;
    b->older = now;
    b->bytes = bytes;
    s->scratch = b;
    return b->mem;
}

void weft_sim_report(weft_context_t *ctx)
{
    char graph[64] = "";
    if (ctx->ptg_build_s > 0)
        snprintf(graph, sizeof graph, ", of which graph build %.6f s", ctx->ptg_build_s);
    weft_log_summary("sim: rank %d of %d: walked %lld tasks, kept %lld, sends %lld, recvs %lld, "
                     "insert %.6f s, metadata %lld bytes%s",
                     ctx->rank, ctx->nranks, ctx->walked, ctx->kept, ctx->sends, ctx->recvs,
                     ctx->insert_s, ctx->meta.peak, graph);
}

void weft_sim_free(weft_context_t *ctx)
{
    if (!ctx->sim) return;
    for (struct scratch *b = ctx->sim->scratch, *older; b; b = older) {
        older = b->older;
        free(b);
    }
    free(ctx->sim);
    ctx->sim = NULL;
}
