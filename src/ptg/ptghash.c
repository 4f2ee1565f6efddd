/* What the ranks compare of a graph (docs/PTG.md): each class's name and
 * dimensions and the ranges its index space gives, walked in the order of
 * its nested loops (every range of every dimension but the innermost's
 * indices, up to PTG_HASH_RANGES in all), and, when the ranks differ, the
 * first range where they do, named on every rank. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context/coll.h"
#include "ptg/ptg.h"
#include "stf/seqcheck.h"
#include "util/hash.h"
#include "util/log.h"

/* Ranges hashed a graph at most: a graph whose every rank builds only its
 * own tasks (local_range) still pays only these calls for the check. */
#define PTG_HASH_RANGES 65536
#define PTG_RANGE_TEXT 160

/* One item of the walk: a class's head (dim -1: its name hash in lo,
 * ndims in hi) or the range lo..hi of dimension dim given idx[0 .. dim-1]. */
typedef struct {
    int cls, dim, lo, hi;
    int idx[WEFT_PTG_MAX_DIMS];
} range_item_t;

typedef void range_fn(void *acc, const range_item_t *it);

static uint64_t item_hash(uint64_t h, const range_item_t *it)
{
    const uint64_t f[] = {(uint64_t)(uint32_t)it->cls, (uint64_t)(uint32_t)it->dim,
                          (uint64_t)(uint32_t)it->lo, (uint64_t)(uint32_t)it->hi};
    return weft_hash_words(h, f, sizeof f / sizeof f[0]);
}

/* Dimension d's range given idx[0 .. d-1] (the rest 0), then the ranges
 * under each of its indices, while *left lasts; a range it could not walk
 * makes *left -1 (0 only says the last one was used: a class that ended
 * there was whole, and its count was dropped). */
static void walk_dim(const weft_ptg_t *g, int c, int *idx, int d, long *left, range_fn *fn,
                     void *acc)
{
    const weft_ptg_class_t *k = &g->classes[c];
    if (*left <= 0) {
        *left = -1;
        return;
    }
    (*left)--;
    int lo, hi;
    k->range(idx, d, &lo, &hi, g->arg);
    if (hi < lo) lo = 0, hi = -1; /* every empty range alike */
    range_item_t it = {.cls = c, .dim = d, .lo = lo, .hi = hi};
    memcpy(it.idx, idx, sizeof it.idx);
    fn(acc, &it);
    if (d == k->ndims - 1) return; /* the innermost indices have no ranges under them */
    for (long i = lo; i <= hi && *left >= 0; i++) {
        idx[d] = (int)i;
        walk_dim(g, c, idx, d + 1, left, fn, acc);
    }
    idx[d] = 0;
}

/* Class c's head, then its ranges in nested-loop order. */
static void walk_class(const weft_ptg_t *g, int c, long *left, range_fn *fn, void *acc)
{
    const weft_ptg_class_t *k = &g->classes[c];
    range_item_t head = {.cls = c, .dim = -1, .hi = k->ndims};
    head.lo = (int)(uint32_t)weft_seqcheck_hash_str(k->task->name);
    fn(acc, &head);
    int idx[WEFT_PTG_MAX_DIMS] = {0};
    walk_dim(g, c, idx, 0, left, fn, acc);
}

static void walk(const weft_ptg_t *g, range_fn *fn, void *acc)
{
    long left = PTG_HASH_RANGES;
    for (int c = 0; c < g->nclasses; c++) walk_class(g, c, &left, fn, acc);
}

/* A task's identity is a * i + b, i its innermost index and a (odd) and
 * b hashes of its class and outer indices: an innermost range's sum then
 * has a closed form, and two tasks of one range never cancel (a odd). */
static void id_line(int cls, int dim, const int *idx, uint64_t *a, uint64_t *b)
{
    uint64_t w[WEFT_PTG_MAX_DIMS + 1];
    w[0] = (uint64_t)(uint32_t)cls;
    for (int d = 0; d < dim; d++) w[d + 1] = (uint64_t)(uint32_t)idx[d];
    *a = weft_hash_words(WEFT_HASH_INIT, w, (size_t)dim + 1) | 1;
    *b = weft_hash_words(*a, w, (size_t)dim + 1);
}

void weft_ptg__task_ids(int cls, int ndims, const int *idx, uint64_t id[WEFT_PTG_MOMENTS])
{
    uint64_t a, b;
    id_line(cls, ndims - 1, idx, &a, &b);
    id[0] = a * (uint64_t)(int64_t)idx[ndims - 1] + b;
    id[1] = id[0] * id[0];
}

/* Sum of j and of j^2 over j = 0 .. n-1, mod 2^64: each division is made
 * on the factor it divides exactly, before the products wrap. */
static void power_sums(int64_t n, uint64_t *s1, uint64_t *s2)
{
    int64_t f[3] = {n - 1, n, 2 * n - 1};
    int k2 = f[0] % 2 == 0 ? 0 : 1;
    *s1 = (uint64_t)(f[k2] / 2) * (uint64_t)f[1 - k2];
    f[k2] /= 2;
    for (int k = 0; k < 3; k++)
        if (f[k] % 3 == 0) {
            f[k] /= 3;
            break;
        }
    *s2 = (uint64_t)f[0] * (uint64_t)f[1] * (uint64_t)f[2];
}

/* The identities of the tasks of innermost range lo..hi, summed: of
 * x = a i + b and of x^2 (two tasks swapped between ranges, say {1, 2}
 * made twice for {0, 3}, keep the first sum, not the second). */
static void range_ids(const range_item_t *it, uint64_t sum[WEFT_PTG_MOMENTS])
{
    uint64_t a, b, j1, j2;
    id_line(it->cls, it->dim, it->idx, &a, &b);
    int64_t n = (int64_t)it->hi - it->lo + 1;
    power_sums(n, &j1, &j2);
    /* i = lo + j: x = a j + c with c = a lo + b. */
    uint64_t c = a * (uint64_t)(int64_t)it->lo + b, un = (uint64_t)n;
    sum[0] = a * j1 + c * un;
    sum[1] = a * a * j2 + 2 * a * c * j1 + c * c * un;
}

/* The hash, and each class's count of tasks (points of its index space:
 * the sizes of its innermost ranges) and their identities' sum from the
 * same walk. */
typedef struct {
    uint64_t h;
    const weft_ptg_t *g;
    long long *points;
    uint64_t *ids;
} hash_acc_t;

static void fold_item(void *acc, const range_item_t *it)
{
    hash_acc_t *a = acc;
    a->h = item_hash(a->h, it);
    if (a->points && it->dim == a->g->classes[it->cls].ndims - 1 && it->hi >= it->lo) {
        a->points[it->cls] += (long long)it->hi - it->lo + 1;
        uint64_t sum[WEFT_PTG_MOMENTS];
        range_ids(it, sum);
        for (int m = 0; m < WEFT_PTG_MOMENTS; m++)
            a->ids[(size_t)m * (size_t)a->g->nclasses + (size_t)it->cls] += sum[m];
    }
}

uint64_t weft_ptg__graph_hash(const weft_ptg_t *g, long long *points, uint64_t *ids)
{
    hash_acc_t acc = {.h = WEFT_HASH_INIT, .g = g, .points = points, .ids = ids};
    long left = PTG_HASH_RANGES;
    for (int c = 0; c < g->nclasses; c++) {
        if (points) {
            points[c] = 0;
            for (int m = 0; m < WEFT_PTG_MOMENTS; m++) ids[m * g->nclasses + c] = 0;
        }
        walk_class(g, c, &left, fold_item, &acc);
        /* The limit cut this class short: its count is unknown. */
        if (points && left < 0) points[c] = -1;
    }
    return acc.h;
}

/* The items and their running hashes, for the report. */
typedef struct {
    range_item_t *items;
    uint64_t *run;
    long n, cap;
    uint64_t h;
} range_log_t;

static void keep_item(void *acc, const range_item_t *it)
{
    range_log_t *l = acc;
    l->h = item_hash(l->h, it);
    if (l->n == l->cap) {
        long cap = l->cap ? 2 * l->cap : 256;
        range_item_t *items = realloc(l->items, (size_t)cap * sizeof *items);
        if (items) l->items = items;
        uint64_t *run = realloc(l->run, (size_t)cap * sizeof *run);
        if (run) l->run = run;
        if (!items || !run) return; /* the report stops at what was kept */
        l->cap = cap;
    }
    l->items[l->n] = *it;
    l->run[l->n++] = l->h;
}

/* The running hash after item p, >= 0, or -1 past the last kept. */
static int64_t range_hash_at(const void *arg, long p)
{
    const range_log_t *l = arg;
    return p < l->n ? (int64_t)(l->run[p] >> 1) : -1;
}

static void item_text(const weft_ptg_t *g, const range_log_t *l, long p, char *buf, size_t n)
{
    if (p >= l->n) {
        snprintf(buf, n, "no item #%ld: its graph ends after %ld", p, l->n);
        return;
    }
    const range_item_t *it = &l->items[p];
    const weft_ptg_class_t *k = &g->classes[it->cls];
    if (it->dim < 0) {
        snprintf(buf, n, "class #%d is %.40s with %d dimension%s", it->cls, k->task->name, it->hi,
                 it->hi == 1 ? "" : "s");
        return;
    }
    size_t len = (size_t)snprintf(buf, n, "class %.40s: index %d ", k->task->name, it->dim);
    for (int d = 0; d < it->dim && len < n; d++)
        len += (size_t)snprintf(buf + len, n - len, "%s%d", d ? "," : "under (", it->idx[d]);
    if (len < n && it->dim > 0) len += (size_t)snprintf(buf + len, n - len, ") ");
    if (len < n)
        snprintf(buf + len, n - len, it->hi < it->lo ? "is empty" : "ranges %d..%d", it->lo,
                 it->hi);
}

/* The words of a report's collectives, in their messages. */
static const char graphs_comparing[] = "comparing the ranks' graphs";

/* Every rank logs each rank's item at p (rank 0's and those that differ
 * from it, at most 16). Collective. */
static void log_each_rank(weft_context_t *ctx, const weft_ptg_t *g, const range_log_t *l, long p)
{
    char mine[PTG_RANGE_TEXT] = ""; /* all of it goes to every rank */
    item_text(g, l, p, mine, sizeof mine);
    char *all = weft_seqcheck_gather_text(ctx, mine, PTG_RANGE_TEXT, graphs_comparing);
    if (!all) return;
    for (int r = 0, shown = 0; r < ctx->nranks && shown < 16; r++) {
        const char *e = all + (size_t)r * PTG_RANGE_TEXT;
        if (r > 0 && strcmp(e, all) == 0) continue;
        weft_error("  rank %d: %s", r, e);
        shown++;
    }
    free(all);
}

void weft_ptg__graph_report(weft_context_t *ctx, const weft_ptg_t *g, int valid)
{
    int all_valid = valid;
    if (weft_coll_all(ctx, &all_valid, graphs_comparing) != WEFT_SUCCESS) return;
    if (!all_valid) return; /* a refused graph: its rank's message says why */
    range_log_t l = {.h = WEFT_HASH_INIT};
    walk(g, keep_item, &l);
    long lo = weft_seqcheck_first_difference(ctx, l.n, range_hash_at, &l, NULL, graphs_comparing);
    if (lo < 0) {
        free(l.items);
        free(l.run);
        return; /* its collective said so */
    }
    weft_error("weft_ptg_insert: the ranks' graphs first differ at item #%ld of their index "
               "spaces (class heads and ranges, in loop order):",
               lo);
    log_each_rank(ctx, g, &l, lo);
    free(l.items);
    free(l.run);
}
