/* The graph run dry across ranks before any task of it is released: each
 * rank walks its tasks and transfers in dependency order (Kahn's walk, as
 * check_acyclic does for one rank), and the ranks tell each other, round
 * after round, which transfers their walk reached. What no walk reaches
 * waits on a cycle that crosses ranks: a task that reads, through other
 * ranks, what it writes itself, or an in-place write waiting for a reader
 * whose input comes back through it. Each rank's walk sees only its own
 * edges, so such a graph was accepted everywhere and hung with no line.
 *
 * The waits modelled are the runtime's own: a RECV ends after its SEND
 * was posted (the activation); a SEND ends after its RECV started (the
 * GET, sent once the RECV's own predecessors ended) unless its tile may
 * travel inside the activation: one of at most comm_eager_limit bytes
 * that no device copy can be sent from. A graph refused here hangs when
 * run, or would with its tiles in device memory. One round a hop of the
 * longest chain of transfers, two collectives a round. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "comm/comm.h"
#include "context/coll.h"
#include "ptg/ptg.h"
#include "util/ending.h"
#include "util/fault.h"
#include "util/log.h"

enum { EV_POSTED, EV_STARTED }; /* a SEND's activation left; a RECV started */

typedef struct dry_event {
    uint64_t key;
    uint32_t version;
    int32_t kind;
} dry_event_t;

typedef struct dry {
    weft_ptg_build_t *b;
    size_t nlocal, n;
    weft_task_t **nodes;    /* this rank's tasks then its SENDs and RECVs */
    int64_t *left;          /* predecessors here not ended */
    unsigned char *remote;  /* the event from the peer a transfer still waits for */
    unsigned char *started; /* its predecessors here ended (a transfer told its peer) */
    unsigned char *ended;
    size_t nended;
    weft_vec_t stack;  /* size_t: nodes whose predecessors here ended */
    weft_vec_t *out;   /* dry_event_t, one vector a peer */
    weft_ptgmap_t ids; /* (key, version, peer, kind) -> node */
    int nomem; /* a push failed: the walk is not to be trusted */
    /* The exchange's buffers, made once: each transfer here sends one
     * event and receives at most one, so no round needs more, and no
     * allocation can fail on one rank between two collectives. */
    int *cnt; /* 3 a peer out (count, this rank's round total, whether it cannot go
                 on), 3 a peer in, then displacements and counts both ways */
    dry_event_t *sbuf, *rbuf;
    /* One event as an MPI type: counts and displacements in events, not
     * bytes, which overflowed int past 2^31 / 16 events in a round. */
    MPI_Datatype ev_type;
} dry_t;

static const weft_comm_action_t *act_of(const weft_task_t *t) { return t->action; }

/* The map's key of a transfer of data key at version with peer: a SEND
 * (send 1) or a RECV. */
static weft_ptg_ref_t event_key(uint64_t key, uint32_t version, int peer, int send)
{
    weft_ptg_ref_t k = {.cls = -2, .flow = send};
    k.idx[0] = (int)(uint32_t)key;
    k.idx[1] = (int)(uint32_t)(key >> 32);
    k.idx[2] = (int)version;
    k.idx[3] = peer;
    return k;
}

static void end_node(dry_t *d, size_t i);

/* Node i's predecessors here all ended: a transfer tells its peer, and
 * ends unless it waits for the peer. */
static void start_node(dry_t *d, size_t i)
{
    weft_task_t *t = d->nodes[i];
    d->started[i] = 1;
    if (i >= d->nlocal) {
        const weft_comm_action_t *a = act_of(t);
        dry_event_t e = {t->flow[0].data->key, a->version,
                         t->kind == WEFT_TASK_SEND ? EV_POSTED : EV_STARTED};
        if (weft_vec_push(&d->out[a->peer], &e) != WEFT_SUCCESS) d->nomem = 1;
    }
    if (i < d->nlocal || !d->remote[i - d->nlocal]) end_node(d, i);
}

static void end_node(dry_t *d, size_t i)
{
    d->ended[i] = 1;
    d->nended++;
    weft_task_t **succ = d->nodes[i]->succ.data;
    for (size_t s = 0; s < d->nodes[i]->succ.n; s++) {
        size_t j = (size_t)succ[s]->est_ns;
        if (--d->left[j] == 0 && weft_vec_push(&d->stack, &j) != WEFT_SUCCESS) d->nomem = 1;
    }
}

/* Walks what this rank can reach now (a push that failed sets nomem: the
 * node it lost would read as stuck). */
static void walk(dry_t *d)
{
    while (d->stack.n > 0) start_node(d, *(size_t *)weft_vec_at(&d->stack, --d->stack.n));
}

/* An event from peer: the transfer it names here no longer waits. */
static void apply(dry_t *d, int peer, const dry_event_t *e)
{
    /* The SEND's activation reaches a RECV here; the RECV's start a SEND. */
    weft_ptg_ref_t k = event_key(e->key, e->version, peer, e->kind == EV_STARTED);
    size_t i = weft_ptgmap_get(&d->ids, &k);
    if (i == SIZE_MAX || !d->remote[i - d->nlocal]) return;
    d->remote[i - d->nlocal] = 0;
    /* A transfer still on the stack ends when its walk starts it. */
    if (d->started[i] && !d->ended[i]) end_node(d, i);
}

/* One round: this rank's events to every peer and theirs applied here
 * (when ok: this rank's walk is sound). The Alltoall carries each pair's
 * count with the sender's total and whether it can go on, so every rank
 * learns alike *sent, the events all ranks sent (0: the walk is over),
 * and *failed, the ranks that cannot go on. WEFT_SUCCESS or WEFT_ERR_MPI. */
static int exchange(dry_t *d, int ok, long long *sent, long long *failed)
{
    weft_context_t *ctx = d->b->ctx;
    int nr = ctx->nranks;
    const char *what = "weft_ptg_insert: the cycle walk's rounds";
    int *out = d->cnt, *in = out + 3 * nr, *sdis = in + 3 * nr, *rdis = sdis + nr;
    int *scnt = rdis + nr, *rcnt = scnt + nr;
    long long mine = 0;
    for (int p = 0; p < nr; p++) mine += (long long)d->out[p].n;
    /* More than the buffers hold is a walk gone wrong, refused as one. */
    if (mine > (long long)d->b->actions.n) ok = 0;
    for (int p = 0; p < nr; p++) {
        out[3 * p] = ok ? (int)d->out[p].n : 0;
        out[3 * p + 1] = ok ? (int)mine : 0;
        out[3 * p + 2] = !ok;
    }
    if (weft_coll_check(ctx, MPI_Alltoall(out, 3, MPI_INT, in, 3, MPI_INT, ctx->comm), what) !=
        WEFT_SUCCESS)
        return WEFT_ERR_MPI;
    long long total = 0, bad = 0, arriving = 0;
    for (int p = 0; p < nr; p++) {
        total += in[3 * p + 1];
        bad += in[3 * p + 2];
        arriving += in[3 * p];
    }
    *sent = total;
    *failed = bad;
    if (bad > 0 || total == 0) return WEFT_SUCCESS;
    /* Each event received answers a transfer here (the ends of every
     * transfer were compared before: check_made), so rbuf holds them all;
     * more would be weft's broken invariant, and no rank could be told in
     * time (its peers are in the Alltoallv below). */
    if (arriving > (long long)d->b->actions.n) {
        weft_error("weft_ptg_insert: the cycle walk received %lld events for %zu transfers "
                   "(an internal error): ending the run",
                   arriving, d->b->actions.n);
        weft_abort_job(ctx->comm, 1);
    }
    int at = 0, got = 0;
    for (int p = 0; p < nr; p++) {
        scnt[p] = out[3 * p];
        sdis[p] = at;
        for (size_t j = 0; j < (size_t)out[3 * p]; j++)
            d->sbuf[at++] = *(dry_event_t *)weft_vec_at(&d->out[p], j);
        d->out[p].n = 0;
        rcnt[p] = in[3 * p];
        rdis[p] = got;
        got += in[3 * p];
    }
    if (weft_coll_check(ctx,
                        MPI_Alltoallv(d->sbuf, scnt, sdis, d->ev_type, d->rbuf, rcnt, rdis,
                                      d->ev_type, ctx->comm),
                        what) != WEFT_SUCCESS)
        return WEFT_ERR_MPI;
    for (int p = 0; ok && p < nr; p++) {
        const dry_event_t *e = d->rbuf + rdis[p];
        for (int j = 0; j < in[3 * p]; j++) apply(d, p, &e[j]);
    }
    return WEFT_SUCCESS;
}

static int dry_init(dry_t *d, weft_ptg_build_t *b)
{
    *d = (dry_t){
        .b = b, .nlocal = b->local.n, .n = b->local.n + b->actions.n, .ev_type = MPI_DATATYPE_NULL};
    weft_vec_init(&d->stack, sizeof(size_t), 64);
    /* The rounds count events in int (MPI's counts). */
    if (b->actions.n > (size_t)INT_MAX) {
        weft_error("weft_ptg_insert: %zu transfers on this rank, more than the cycle walk's "
                   "rounds can count (%d)",
                   b->actions.n, INT_MAX);
        return WEFT_ERR_INVALID;
    }
    if (weft_fault_hit(b->ctx->fault, WEFT_FAULT_PTG_WALK, NULL)) {
        weft_error("weft_ptg_insert: the cycle walk cannot start on this rank (fault_inject "
                   "ptg_walk)");
        return WEFT_ERR_INVALID;
    }
    if (MPI_Type_contiguous((int)sizeof(dry_event_t), MPI_BYTE, &d->ev_type) != MPI_SUCCESS ||
        MPI_Type_commit(&d->ev_type) != MPI_SUCCESS) {
        weft_error("weft_ptg_insert: the cycle walk's MPI type could not be made");
        return WEFT_ERR_MPI;
    }
    weft_ptgmap_init(&d->ids);
    int nr = b->ctx->nranks;
    d->nodes = calloc(d->n ? d->n : 1, sizeof *d->nodes);
    d->left = malloc((d->n ? d->n : 1) * sizeof *d->left);
    d->ended = calloc(d->n ? d->n : 1, 1);
    d->started = calloc(d->n ? d->n : 1, 1);
    d->remote = calloc(b->actions.n ? b->actions.n : 1, 1);
    d->out = calloc((size_t)nr, sizeof *d->out);
    d->cnt = calloc((size_t)nr * 10, sizeof *d->cnt);
    size_t nev = b->actions.n ? b->actions.n : 1;
    d->sbuf = malloc(nev * sizeof *d->sbuf);
    d->rbuf = malloc(nev * sizeof *d->rbuf);
    if (!d->nodes || !d->left || !d->ended || !d->started || !d->remote || !d->out || !d->cnt ||
        !d->sbuf || !d->rbuf)
        return WEFT_ERR_NOMEM;
    for (int p = 0; p < nr; p++) weft_vec_init(&d->out[p], sizeof(dry_event_t), 16);
    for (size_t i = 0; i < d->n; i++) {
        weft_task_t *t = i < d->nlocal ? *(weft_task_t **)weft_vec_at(&b->local, i)
                                       : *(weft_task_t **)weft_vec_at(&b->actions, i - d->nlocal);
        d->nodes[i] = t;
        t->est_ns = (int64_t)i; /* the node of a successor (reset after) */
        d->left[i] = atomic_load(&t->ndeps) - 1;
        if (i >= d->nlocal) /* a SEND may end without its RECV: one of an eager tile */
            d->remote[i - d->nlocal] =
                t->kind == WEFT_TASK_RECV ||
                (b->ctx->comm_engine &&
                 weft_comm_send_may_wait(b->ctx->comm_engine, t->flow[0].data));
    }
    for (size_t i = d->nlocal; i < d->n; i++) {
        const weft_task_t *t = d->nodes[i];
        weft_ptg_ref_t k = event_key(t->flow[0].data->key, act_of(t)->version, act_of(t)->peer,
                                     t->kind == WEFT_TASK_SEND);
        if (weft_ptgmap_put(&d->ids, &k, i) != WEFT_SUCCESS) return WEFT_ERR_NOMEM;
    }
    for (size_t i = 0; i < d->n; i++)
        if (d->left[i] == 0 && weft_vec_push(&d->stack, &i) != WEFT_SUCCESS) return WEFT_ERR_NOMEM;
    return WEFT_SUCCESS;
}

static void dry_fini(dry_t *d)
{
    if (d->ev_type != MPI_DATATYPE_NULL) MPI_Type_free(&d->ev_type);
    for (size_t i = 0; d->nodes && i < d->n && d->nodes[i]; i++) d->nodes[i]->est_ns = 0;
    for (int p = 0; d->out && p < d->b->ctx->nranks; p++) weft_vec_fini(&d->out[p]);
    free(d->out);
    free(d->nodes);
    free(d->left);
    free(d->ended);
    free(d->started);
    free(d->remote);
    free(d->cnt);
    free(d->sbuf);
    free(d->rbuf);
    weft_vec_fini(&d->stack);
    weft_ptgmap_fini(&d->ids);
}

/* The stuck tasks, named on every rank: the sum, and here one of this
 * rank's own (a task of the graph rather than a transfer). */
static int report(dry_t *d, long long stuck, long long total)
{
    weft_ptg_build_t *b = d->b;
    size_t mine = d->n - d->nended, first = SIZE_MAX;
    for (size_t i = 0; i < d->nlocal && first == SIZE_MAX; i++)
        if (!d->ended[i]) first = i;
    if (first != SIZE_MAX) {
        char name[160];
        weft_ptg__ref_text(b, weft_vec_at(&b->selfs, first), name, sizeof name);
        weft_error("weft_ptg_insert: task %s on rank %d never becomes ready (one of %zu tasks "
                   "and transfers there that wait on the cycle below, or after it)",
                   name, b->me, mine);
    }
    weft_error("weft_ptg_insert: %lld of the graph's %lld tasks and transfers wait on a cycle "
               "that crosses ranks: a task waits, through versions that other ranks make from "
               "its own, for itself, or an in-place write waits for a reader whose input comes "
               "back through it (write the next version to another data); no task of the graph "
               "runs",
               stuck, total);
    return WEFT_ERR_INVALID;
}

int weft_ptg__dry_run(weft_ptg_build_t *b)
{
    if (b->ctx->sim || b->ctx->nranks == 1) return WEFT_SUCCESS;
    dry_t d;
    /* Out of memory on one rank is agreed on before the rounds (whose
     * buffers it lacks), and in each round with the events: a rank that
     * stopped alone would leave its peers in the rounds' collectives. */
    int init_rc = dry_init(&d, b), ok = init_rc == WEFT_SUCCESS, rc = WEFT_SUCCESS;
    if (init_rc == WEFT_ERR_NOMEM)
        weft_error("weft_ptg_insert: out of host memory for the cycle walk's tables on this rank");
    /* A refusal that is no lack of memory (too many transfers to count,
     * the walk's MPI type) is not said as one: it was "out of host
     * memory" on every rank. */
    long long start[2] = {!ok, !ok && init_rc != WEFT_ERR_NOMEM};
    if (weft_coll_check(b->ctx,
                        MPI_Allreduce(MPI_IN_PLACE, start, 2, MPI_LONG_LONG, MPI_SUM, b->ctx->comm),
                        "weft_ptg_insert: the cycle walk's start") != WEFT_SUCCESS)
        rc = WEFT_ERR_MPI;
    long long sent = 1, failed = start[0];
    while (rc == WEFT_SUCCESS && sent > 0 && failed == 0) {
        if (ok) walk(&d);
        ok = ok && !d.nomem;
        rc = exchange(&d, ok, &sent, &failed);
        if (rc != WEFT_SUCCESS) break;
        ok = ok && !d.nomem;
    }
    long long counts[2] = {(long long)(d.n - d.nended), (long long)d.n};
    if (rc == WEFT_SUCCESS && failed == 0 &&
        weft_coll_check(
            b->ctx, MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_LONG_LONG, MPI_SUM, b->ctx->comm),
            "weft_ptg_insert: the cycle walk's count") != WEFT_SUCCESS)
        rc = WEFT_ERR_MPI;
    if (rc == WEFT_SUCCESS && start[1] > 0) {
        weft_error("weft_ptg_insert: the walk of the graph for cycles across ranks could not "
                   "start on %lld rank(s) (each said why)%s: no task of the graph runs",
                   start[1], start[0] > start[1] ? ", and others lacked host memory for it" : "");
        rc = WEFT_ERR_INVALID;
    } else if (rc == WEFT_SUCCESS && failed > 0) {
        weft_error("weft_ptg_insert: out of host memory on %lld rank(s) walking the graph for "
                   "cycles across ranks: no task of the graph runs",
                   failed);
        rc = WEFT_ERR_NOMEM;
    } else if (rc == WEFT_SUCCESS && counts[0] > 0) {
        rc = report(&d, counts[0], counts[1]);
    }
    dry_fini(&d);
    return rc;
}
