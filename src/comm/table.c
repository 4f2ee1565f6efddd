/* The rendezvous table: each half of a rendezvous that waits for its other
 * half (weft_comm_pending_t), hashed by (peer, key, version, kind), and
 * what the stall watchdog prints of it. Entries are the callers' storage:
 * a task's action block, or an activation's own allocation. */
#include <stdlib.h>
#include <string.h>

#include "comm/comm_internal.h"
#include "util/log.h"

int weft_comm__expects_peer(const weft_comm_t *c)
{
    return c->npend[WEFT_COMM_PEND_RECV_TASK] + c->npend[WEFT_COMM_PEND_SEND] +
               c->npend[WEFT_COMM_PEND_FETCH] >
           0;
}

static weft_comm_pending_t **bucket(weft_comm_t *c, int peer, uint64_t key, uint32_t v, int kind)
{
    uint64_t h =
        key * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)v << 20) ^ ((uint64_t)peer << 8) ^ (uint64_t)kind;
    h ^= h >> 29;
    return &c->table[h % WEFT_COMM_BUCKETS];
}

weft_comm_pending_t *weft_comm__table_take(weft_comm_t *c, int kind, int peer, uint64_t key,
                                           uint32_t v)
{
    for (weft_comm_pending_t **pp = bucket(c, peer, key, v, kind); *pp; pp = &(*pp)->next) {
        weft_comm_pending_t *p = *pp;
        if (p->kind == kind && p->peer == peer && p->key == key && p->version == v) {
            *pp = p->next;
            c->npend[kind]--;
            return p;
        }
    }
    return NULL;
}

void weft_comm__table_put(weft_comm_t *c, weft_comm_pending_t *p, int kind, int peer, uint64_t key,
                          uint32_t v)
{
    p->kind = kind;
    p->peer = peer;
    p->key = key;
    p->version = v;
    weft_comm_pending_t **b = bucket(c, peer, key, v, kind);
    p->next = *b;
    *b = p;
    c->npend[kind]++;
}

void weft_comm__table_remove(weft_comm_t *c, weft_comm_pending_t *p)
{
    for (weft_comm_pending_t **pp = bucket(c, p->peer, p->key, p->version, p->kind); *pp;
         pp = &(*pp)->next)
        if (*pp == p) {
            *pp = p->next;
            c->npend[p->kind]--;
            return;
        }
}

void weft_comm__table_clear(weft_comm_t *c)
{
    for (int i = 0; i < WEFT_COMM_BUCKETS; i++) {
        while (c->table[i]) {
            weft_comm_pending_t *p = c->table[i];
            c->table[i] = p->next;
            /* The others live in their action block. */
            if (p->kind == WEFT_COMM_PEND_ACTIVATION) free(p);
        }
    }
    memset(c->npend, 0, sizeof c->npend);
}

void weft_comm__table_dump(weft_comm_t *c, int level)
{
    static const char *what[] = {
        "receive waits for the activation of", "activation arrived, no receive inserted yet for",
        "send waits for the GET (or DONE) of", "receive waits for the bytes of"};
    int n = 0;
    for (int i = 0; i < WEFT_COMM_BUCKETS; i++)
        for (weft_comm_pending_t *p = c->table[i]; p; p = p->next)
            if (n++ < 32)
                weft_log(level, -1, "stall: comm: %s data %llu v%u (peer rank %d)", what[p->kind],
                         (unsigned long long)p->key, p->version, p->peer);
    weft_log(level, -1,
             "stall: comm: %d rendezvous open, %d fetches in flight, %zu throttled, %zu sends "
             "waiting for a busy host copy, %zu device copies polled, %d receives waiting for "
             "another receive of their version to land",
             n, c->ndata_inflight, c->throttled.n, c->deferred.n, c->waits.n, c->nparked);
}

void weft_comm__fetch_listed(weft_comm_t *c, weft_comm_xfer_t *x, int listed)
{
    weft_comm_pending_t *p = &weft_comm__block(x->t)->p;
    const weft_data_t *d = x->t->flow[0].data;
    if (listed && !x->fetch_listed) {
        p->task = x->t;
        weft_comm__table_put(c, p, WEFT_COMM_PEND_FETCH, x->peer, d->key,
                             weft_comm__block(x->t)->act.version);
    } else if (!listed && x->fetch_listed) {
        weft_comm__table_remove(c, p);
    }
    x->fetch_listed = listed;
}
