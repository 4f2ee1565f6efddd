/* The end of a rank's build (docs/PTG.md): the edges that put each data's
 * versions on this rank in the order of the graph, the checks that need
 * every flow seen, and the walk that finds cycles. */
#include <stdlib.h>

#include "ptg/ptg.h"

#define ver weft_ptg__ver

/* Everything that used version v here (what put it, its readers, its
 * SENDs, its next writer) finishes before `next` puts another version of
 * its data in place. */
static int after_users(weft_ptg_build_t *b, const weft_ptg_ver_t *v, weft_task_t *next)
{
    if (v->task && v->task != next && weft_ptg__edge(v->task, next) != WEFT_SUCCESS)
        return WEFT_ERR_NOMEM;
    if (v->writer && v->writer != next && weft_ptg__edge(v->writer, next) != WEFT_SUCCESS)
        return WEFT_ERR_NOMEM;
    for (size_t l = v->users; l != SIZE_MAX;) {
        const weft_ptg_link_t *k = weft_vec_at(&b->links, l);
        if (k->task != next && weft_ptg__edge(k->task, next) != WEFT_SUCCESS)
            return WEFT_ERR_NOMEM;
        l = k->next;
    }
    return WEFT_SUCCESS;
}

/* What puts v here (its producer, or each of its RECVs: the one that lands
 * it is known only when they run, ptgxfer.c) waits for every user of pv,
 * the nearest lower version held here. */
static int after_lower(weft_ptg_build_t *b, const weft_ptg_ver_t *pv, const weft_ptg_ver_t *v)
{
    if (v->task && pv->writer != v->task && after_users(b, pv, v->task) != WEFT_SUCCESS)
        return WEFT_ERR_NOMEM;
    for (size_t l = v->recvs; l != SIZE_MAX;) {
        const weft_ptg_link_t *k = weft_vec_at(&b->links, l);
        if (k->task != v->task && after_users(b, pv, k->task) != WEFT_SUCCESS)
            return WEFT_ERR_NOMEM;
        l = k->next;
    }
    return WEFT_SUCCESS;
}

/* A version of a data on this rank, for sorting by data then depth. */
typedef struct here {
    uint64_t key;
    uint32_t label;
    size_t vi;
} here_t;

static int cmp_here(const void *a, const void *b)
{
    const here_t *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->label > y->label) - (x->label < y->label);
}

/* Whether this rank holds v's bytes at some point: it made or received
 * it, or reads it (the version from before the graph, on its owner). */
static int has_bytes(const weft_ptg_ver_t *v) { return v->task || v->users != SIZE_MAX; }

/* The versions of each data that this rank holds, in depth order: each
 * one's making (its producer here, or its RECV) waits for everything that
 * used the nearest lower version held here, however many versions other
 * ranks made in between. One chain a data, since a version has one next
 * writer. */
static int order_versions(weft_ptg_build_t *b)
{
    weft_vec_t hs;
    weft_vec_init(&hs, sizeof(here_t), 64);
    for (size_t i = 0; i < b->vervec.n; i++) {
        const weft_ptg_ver_t *v = ver(b, i);
        if (v->canon != i || !v->data || !(has_bytes(v) || v->writer)) continue;
        here_t h = {.key = v->data->key, .label = v->label, .vi = i};
        if (weft_vec_push(&hs, &h) != WEFT_SUCCESS) {
            weft_vec_fini(&hs);
            return WEFT_ERR_NOMEM;
        }
    }
    if (hs.n > 1) qsort(hs.data, hs.n, sizeof(here_t), cmp_here);
    int rc = WEFT_SUCCESS;
    const here_t *all = hs.data;
    for (size_t k = 0, last = SIZE_MAX; k < hs.n && rc == WEFT_SUCCESS; k++) {
        if (last != SIZE_MAX && all[last].key != all[k].key) last = SIZE_MAX;
        /* Two versions of one data at one depth: two tasks replaced the
         * same version (on other ranks), and their results meet here. */
        if (k > 0 && all[k - 1].key == all[k].key && all[k - 1].label == all[k].label) {
            rc = weft_ptg__fail(b, &ver(b, all[k].vi)->key,
                                "its flow %d makes a version of data %llu at the depth of another "
                                "one this rank also holds: two tasks replaced the same version (a "
                                "version has one next writer)",
                                ver(b, all[k].vi)->key.flow, (unsigned long long)all[k].key);
            break;
        }
        const weft_ptg_ver_t *v = ver(b, all[k].vi);
        /* The usual case, the next version made here by the task that
         * replaced the previous one in place, was ordered by its writer's
         * edges already (weft_ptg__finish). */
        const weft_ptg_ver_t *pv = last != SIZE_MAX ? ver(b, all[last].vi) : NULL;
        if (pv) rc = after_lower(b, pv, v);
        if (has_bytes(v)) last = k;
    }
    weft_vec_fini(&hs);
    return rc;
}

/* Kahn's walk over this rank's new tasks (none is released yet, so each
 * one's ndeps - 1 counts its incoming edges; est_ns, unused before
 * placement, holds what is left of it). A task never reached waits on a
 * cycle: in-place writes that wait for readers that wait for them (a
 * version needs a copy the graph does not make) or producers that loop. */
static int check_acyclic(weft_ptg_build_t *b)
{
    weft_vec_t *sets[2] = {&b->local, &b->actions};
    weft_vec_t ready;
    weft_vec_init(&ready, sizeof(weft_task_t *), 64);
    size_t total = b->local.n + b->actions.n, seen = 0;
    for (int k = 0; k < 2; k++)
        for (size_t j = 0; j < sets[k]->n; j++) {
            weft_task_t *t = *(weft_task_t **)weft_vec_at(sets[k], j);
            t->est_ns = atomic_load(&t->ndeps) - 1;
            if (t->est_ns == 0 && weft_vec_push(&ready, &t) != WEFT_SUCCESS) goto nomem;
        }
    while (ready.n > 0) {
        weft_task_t *t = *(weft_task_t **)weft_vec_at(&ready, --ready.n);
        seen++;
        weft_task_t **succ = t->succ.data;
        for (size_t i = 0; i < t->succ.n; i++)
            if (--succ[i]->est_ns == 0 && weft_vec_push(&ready, &succ[i]) != WEFT_SUCCESS)
                goto nomem;
    }
    weft_vec_fini(&ready);
    size_t stuck = SIZE_MAX; /* the first local task left waiting */
    for (int k = 0; k < 2; k++)
        for (size_t j = 0; j < sets[k]->n; j++) {
            weft_task_t *t = *(weft_task_t **)weft_vec_at(sets[k], j);
            if (k == 0 && t->est_ns > 0 && stuck == SIZE_MAX) stuck = j;
            t->est_ns = 0;
        }
    if (seen == total) return WEFT_SUCCESS;
    return weft_ptg__fail(b, weft_vec_at(&b->selfs, stuck == SIZE_MAX ? 0 : stuck),
                          "it is among %zu of the %zu tasks and transfers of rank %d that wait "
                          "on a cycle: a task reads, through the versions other tasks make from "
                          "its own, what it writes itself, or in-place writes wait for readers "
                          "that wait for them (a version read while the next one is written "
                          "needs a copy the graph does not make: write the next version to "
                          "another data)",
                          total - seen, total, b->me);
nomem:
    weft_vec_fini(&ready);
    return WEFT_ERR_NOMEM;
}

/* What can only be judged once every flow was seen: each producer's list
 * of consumers on this rank against the tasks that name it, and one next
 * writer a version. */
static int check_versions(weft_ptg_build_t *b)
{
    for (size_t i = 0; i < b->vervec.n; i++) {
        const weft_ptg_ver_t *v = ver(b, i);
        if (v->full && v->listed >= 0 && v->listed != v->named)
            return weft_ptg__fail(b, &v->key,
                                  "its consumers function lists %d task(s) on rank %d for flow "
                                  "%d, but %d task(s) there name it as their producer",
                                  v->listed, b->me, v->key.flow, v->named);
        int writers = v->remote_writers + (ver(b, v->canon)->writer != NULL && v->canon == i);
        if (writers > 1)
            return weft_ptg__fail(b, &v->key,
                                  "the version its flow %d writes has %d next writers (its "
                                  "consumers write it on several ranks): a version has one",
                                  v->key.flow, writers);
    }
    return WEFT_SUCCESS;
}

/* Every user of a version made here after a RECV of it had been made
 * (ptgxfer.c) waits for its maker: users named before it waited for that
 * RECV alone, which moves no bytes. */
static int after_remade(weft_ptg_build_t *b, const weft_ptg_ver_t *v)
{
    for (size_t l = v->users; l != SIZE_MAX;) {
        const weft_ptg_link_t *k = weft_vec_at(&b->links, l);
        if (weft_ptg__edge(v->task, k->task) != WEFT_SUCCESS) return WEFT_ERR_NOMEM;
        l = k->next;
    }
    return WEFT_SUCCESS;
}

/* The SEND of a version a local forwarder passes on waits for the
 * version's bytes here: its local maker, when a task built after the
 * forwarder made it (the RECV of the forwarder's path then only meets its
 * sender, which may be waiting for this very SEND: rank 1 writes X, rank
 * 0 reads it and passes it back to a forwarder on rank 1, which passes it
 * to rank 0 again, a hang when rank 1 built the forwarder first), else
 * what fwd_after (ptgflow.c) found. */
static int order_fwd_sends(weft_ptg_build_t *b)
{
    for (size_t i = 0; i < b->fwd_sends.n; i++) {
        const weft_ptg_fwd_send_t *f = weft_vec_at(&b->fwd_sends, i);
        weft_task_t *maker = ver(b, f->canon)->task;
        int here = maker && maker->kind == WEFT_TASK_BODY;
        if (weft_ptg__edge(here ? maker : f->after, f->send) != WEFT_SUCCESS) return WEFT_ERR_NOMEM;
    }
    return WEFT_SUCCESS;
}

int weft_ptg__finish(weft_ptg_build_t *b)
{
    int rc = check_versions(b);
    if (rc == WEFT_SUCCESS) rc = order_fwd_sends(b);
    for (size_t i = 0; i < b->vervec.n && rc == WEFT_SUCCESS; i++) {
        const weft_ptg_ver_t *v = ver(b, i);
        if (v->remade) rc = after_remade(b, v);
        if (v->writer && rc == WEFT_SUCCESS) rc = after_users(b, v, v->writer);
    }
    if (rc == WEFT_SUCCESS) rc = order_versions(b);
    return rc == WEFT_SUCCESS ? check_acyclic(b) : rc;
}
