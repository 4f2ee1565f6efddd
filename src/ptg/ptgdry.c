/* The graph run dry across ranks before any task of it is released: each
 * rank walks its tasks and transfers in dependency order (Kahn's walk, as
 * check_acyclic does for one rank), and the ranks tell each other, round
 * after round, which transfers their walk reached. What no walk reaches
 * waits on a cycle that crosses ranks: a task that reads, through other
 * ranks, what it writes itself, or an in-place write waiting for a reader
 * whose input comes back through it. Each rank's walk sees only its own
 * edges, so such a graph was accepted everywhere and hung with no line.
 *
 * The waits modelled are the runtime's own, and only those that always
 * hold: a RECV ends after its SEND was posted (the activation); a SEND of
 * a tile past comm_eager_limit ends after its RECV started (the GET, sent
 * once the RECV's own predecessors ended). A smaller tile may travel
 * inside its activation, its SEND then over at once: that wait is left
 * out, so a graph refused here hangs when run. One round a hop of the
 * longest chain of transfers, three collectives a round. */
#include <stdint.h>
#include <stdlib.h>

#include "comm/comm.h"
#include "context/coll.h"
#include "ptg/ptg.h"
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
    long long eager_limit;
    int nomem; /* a push failed: the walk is not to be trusted */
} dry_t;

static const weft_comm_action_t *act_of(const weft_task_t *t) { return t->action; }

/* The map's key of a transfer of data key at version with peer: a SEND
 * (send 1) or a RECV. */
static weft_ptg_ref_t event_key(uint64_t key, uint32_t version, int peer, int send)
{
    weft_ptg_ref_t k = {.cls = -2, .flow = send};
    k.idx[0] = (int)(key & 0x7fffffffu);
    k.idx[1] = (int)(key >> 31);
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
 * (when ok: this rank's walk is sound). *sent: the events all ranks sent
 * (0: the walk is over); *failed: ranks that could not go on (all ranks
 * learn it alike). WEFT_SUCCESS or WEFT_ERR_MPI. */
static int exchange(dry_t *d, int ok, long long *sent, long long *failed)
{
    weft_context_t *ctx = d->b->ctx;
    int nr = ctx->nranks, rc = WEFT_ERR_MPI;
    const char *what = "weft_ptg_insert: the cycle walk's rounds";
    int *cnt = calloc((size_t)nr * 4, sizeof *cnt);
    long long mine = 0, in = 0, sums[2] = {0, 0};
    dry_event_t *sbuf = NULL;
    char *rbuf = NULL;
    int zero[1] = {0}, *scnt = cnt ? cnt : zero, *rcnt = cnt ? cnt + nr : zero;
    int *sdis = cnt ? cnt + 2 * nr : zero, *rdis = cnt ? cnt + 3 * nr : zero;
    if (!cnt) ok = 0;
    for (int p = 0; ok && p < nr; p++) {
        scnt[p] = (int)(d->out[p].n * sizeof(dry_event_t));
        sdis[p] = (int)(mine * (long long)sizeof(dry_event_t));
        mine += (long long)d->out[p].n;
    }
    /* Without counts this rank cannot take part in the exchange: its
     * failure is summed first, and no rank goes on to it. */
    sums[0] = ok ? mine : 0;
    sums[1] = !ok;
    if (ok) {
        if (weft_coll_check(ctx, MPI_Alltoall(scnt, 1, MPI_INT, rcnt, 1, MPI_INT, ctx->comm),
                            what) != WEFT_SUCCESS)
            goto out;
        for (int p = 0; p < nr; p++) {
            rdis[p] = (int)in;
            in += rcnt[p];
        }
        sbuf = malloc((size_t)(mine > 0 ? mine : 1) * sizeof *sbuf);
        rbuf = malloc((size_t)(in > 0 ? in : 1));
        sums[1] = !sbuf || !rbuf;
    } else {
        /* The peers' Alltoall is met with nothing to say (counts 0). */
        int *none = calloc((size_t)nr * 2, sizeof *none);
        int mpi = none ? MPI_Alltoall(none, 1, MPI_INT, none + nr, 1, MPI_INT, ctx->comm)
                       : MPI_Alltoall(MPI_IN_PLACE, 0, MPI_INT, NULL, 0, MPI_INT, ctx->comm);
        free(none);
        if (weft_coll_check(ctx, mpi, what) != WEFT_SUCCESS) goto out;
    }
    if (weft_coll_check(ctx,
                        MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_LONG_LONG, MPI_SUM, ctx->comm),
                        what) != WEFT_SUCCESS)
        goto out;
    *sent = sums[0];
    *failed = sums[1];
    rc = WEFT_SUCCESS;
    if (*failed > 0 || *sent == 0) goto out;
    for (int p = 0, at = 0; p < nr; at += (int)d->out[p].n, p++)
        for (size_t j = 0; j < d->out[p].n; j++)
            sbuf[at + (int)j] = *(dry_event_t *)weft_vec_at(&d->out[p], j);
    if (weft_coll_check(
            ctx, MPI_Alltoallv(sbuf, scnt, sdis, MPI_BYTE, rbuf, rcnt, rdis, MPI_BYTE, ctx->comm),
            what) != WEFT_SUCCESS) {
        rc = WEFT_ERR_MPI;
        goto out;
    }
    for (int p = 0; p < nr; p++) {
        d->out[p].n = 0;
        const dry_event_t *e = (const dry_event_t *)(rbuf + rdis[p]);
        for (int j = 0; j < rcnt[p] / (int)sizeof *e; j++) apply(d, p, &e[j]);
    }
out:
    free(sbuf);
    free(rbuf);
    free(cnt);
    return rc;
}

static int dry_init(dry_t *d, weft_ptg_build_t *b)
{
    *d = (dry_t){.b = b, .nlocal = b->local.n, .n = b->local.n + b->actions.n};
    weft_vec_init(&d->stack, sizeof(size_t), 64);
    weft_ptgmap_init(&d->ids);
    int nr = b->ctx->nranks;
    int64_t limit = 0;
    d->eager_limit = weft_param_get_int(b->ctx, "comm_eager_limit", &limit) == WEFT_SUCCESS
                         ? (long long)limit
                         : -1; /* unknown: every SEND may be eager (no wait kept) */
    d->nodes = calloc(d->n ? d->n : 1, sizeof *d->nodes);
    d->left = malloc((d->n ? d->n : 1) * sizeof *d->left);
    d->ended = calloc(d->n ? d->n : 1, 1);
    d->started = calloc(d->n ? d->n : 1, 1);
    d->remote = calloc(b->actions.n ? b->actions.n : 1, 1);
    d->out = calloc((size_t)nr, sizeof *d->out);
    if (!d->nodes || !d->left || !d->ended || !d->started || !d->remote || !d->out)
        return WEFT_ERR_NOMEM;
    for (int p = 0; p < nr; p++) weft_vec_init(&d->out[p], sizeof(dry_event_t), 16);
    for (size_t i = 0; i < d->n; i++) {
        weft_task_t *t = i < d->nlocal ? *(weft_task_t **)weft_vec_at(&b->local, i)
                                       : *(weft_task_t **)weft_vec_at(&b->actions, i - d->nlocal);
        d->nodes[i] = t;
        t->est_ns = (int64_t)i; /* the node of a successor (reset after) */
        d->left[i] = atomic_load(&t->ndeps) - 1;
        if (i >= d->nlocal)
            d->remote[i - d->nlocal] =
                t->kind == WEFT_TASK_RECV ||
                (d->eager_limit >= 0 && (long long)t->flow[0].data->bytes > d->eager_limit);
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
    for (size_t i = 0; d->nodes && i < d->n && d->nodes[i]; i++) d->nodes[i]->est_ns = 0;
    for (int p = 0; d->out && p < d->b->ctx->nranks; p++) weft_vec_fini(&d->out[p]);
    free(d->out);
    free(d->nodes);
    free(d->left);
    free(d->ended);
    free(d->started);
    free(d->remote);
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
    /* Out of memory on one rank is summed with the events: a rank that
     * stopped alone would leave its peers in the rounds' collectives. */
    int ok = dry_init(&d, b) == WEFT_SUCCESS, rc = WEFT_SUCCESS;
    long long sent = 1, failed = 0;
    while (sent > 0 && failed == 0) {
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
    if (rc == WEFT_SUCCESS && failed > 0) {
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
