/* The blocks of user memory registered on this rank (data/span.h), in an
 * interval tree: a treap ordered by the envelope's first byte, each node
 * knowing the largest envelope end below it, so a search visits only the
 * subtrees that hold an envelope meeting the new one. Random priorities
 * keep it balanced in expectation whatever the order of registration. */
#include "data/span.h"

#include <stdio.h>
#include <stdlib.h>

#include "util/fault.h"
#include "util/log.h"
#include "weft/weft.h"

/* The tree's order: by lo, ties by address (each node is a key). */
static int before(const weft_span_t *a, const weft_span_t *b)
{
    return a->lo < b->lo || (a->lo == b->lo && (uintptr_t)a < (uintptr_t)b);
}

static uintptr_t max_hi(const weft_span_t *t) { return t ? t->max_hi : 0; }

static void update(weft_span_t *t)
{
    uintptr_t m = t->hi, l = max_hi(t->left), r = max_hi(t->right);
    t->max_hi = m > l ? (m > r ? m : r) : (l > r ? l : r);
}

/* Every node of a before every node of b. */
static weft_span_t *merge(weft_span_t *a, weft_span_t *b)
{
    if (!a) return b;
    if (!b) return a;
    if (a->prio > b->prio) {
        a->right = merge(a->right, b);
        update(a);
        return a;
    }
    b->left = merge(a, b->left);
    update(b);
    return b;
}

/* t's nodes before key into *l, the others into *r. */
static void split(weft_span_t *t, const weft_span_t *key, weft_span_t **l, weft_span_t **r)
{
    if (!t) {
        *l = *r = NULL;
    } else if (before(t, key)) {
        split(t->right, key, &t->right, r);
        update(t);
        *l = t;
    } else {
        split(t->left, key, l, &t->left);
        update(t);
        *r = t;
    }
}

static weft_span_t *erase(weft_span_t *t, const weft_span_t *sp)
{
    if (!t) return NULL;
    if (t == sp) return merge(t->left, t->right);
    if (before(sp, t))
        t->left = erase(t->left, sp);
    else
        t->right = erase(t->right, sp);
    update(t);
    return t;
}

/* The live block of lowest lo that shares a byte with mine, or NULL. */
static const weft_span_t *find(weft_spans_t *s, const weft_span_t *t, const weft_span_t *mine)
{
    if (!t || t->max_hi <= mine->lo) return NULL;
    const weft_span_t *f = find(s, t->left, mine);
    if (f) return f;
    if (t->lo >= mine->hi) return NULL; /* so is every lo to the right */
    if (t->hi > mine->lo) {
        s->tests++;
        if (weft_span_block_overlap(&t->blk, &mine->blk)) return t;
    }
    return find(s, t->right, mine);
}

/* "data 4" or "data 4..12" (a matrix's tiles). */
static void span_name(const weft_span_t *sp, char *text, size_t n)
{
    if (sp->key == sp->key_last)
        snprintf(text, n, "data %llu", (unsigned long long)sp->key);
    else
        snprintf(text, n, "data %llu..%llu", (unsigned long long)sp->key,
                 (unsigned long long)sp->key_last);
}

static void report_overlap(const weft_span_t *mine, const weft_span_t *live)
{
    char me[64], other[64];
    span_name(mine, me, sizeof me);
    span_name(live, other, sizeof other);
    /* Both names first: a refusal's words travel to the other ranks cut
     * to a note's 512 bytes (context/seqlog.h). */
    if (live->released) {
        weft_error("%s: %s [%p, +%zu bytes) overlaps %s of %s [%p, +%zu bytes), released but "
                   "still used by tasks not waited for: its bytes are free for a new "
                   "registration after the wait of the taskpool whose tasks use it; call "
                   "weft_taskpool_wait first, or register disjoint memory",
                   mine->call, me, (void *)mine->lo, (size_t)(mine->hi - mine->lo), other,
                   live->call, (void *)live->lo, (size_t)(live->hi - live->lo));
        return;
    }
    weft_error("%s: %s [%p, +%zu bytes) overlaps %s of %s [%p, +%zu bytes), not released: two "
               "live registrations of the same bytes break coherence (their tasks run at once "
               "and each wait writes its own version back); release %s first, or register "
               "disjoint memory",
               mine->call, me, (void *)mine->lo, (size_t)(mine->hi - mine->lo), other, live->call,
               (void *)live->lo, (size_t)(live->hi - live->lo), other);
}

/* splitmix64's finalizer: the claim count spread into a priority. */
static uint64_t spread(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

int weft_spans_claim(weft_spans_t *s, const weft_span_block_t *blk, const char *call, uint64_t key,
                     uint64_t key_last, weft_span_t **out)
{
    weft_span_t mine = {.blk = *blk, .call = call, .key = key, .key_last = key_last};
    mine.lo = blk->base;
    /* A leading dimension or size no memory has would wrap the envelope and
     * break the tree's order: refused (weft_span_block saturates those). */
    uint64_t reach;
    if (__builtin_mul_overflow(blk->ncols - 1, blk->ld, &reach) ||
        __builtin_add_overflow(reach, blk->col, &reach) ||
        __builtin_add_overflow(blk->base, reach, &mine.hi)) {
        /* A saturated stride is no byte count to show (ld = INT64_MAX read
         * as "18446744073709551615 bytes apart"). */
        char apart[48];
        if (blk->ld == UINT64_MAX)
            snprintf(apart, sizeof apart, "more than 2^64 bytes apart");
        else
            snprintf(apart, sizeof apart, "%llu bytes apart", (unsigned long long)blk->ld);
        weft_error("%s: data %llu: its memory (%llu columns, %s, from %p) runs past the end of "
                   "the address space: check its ld and sizes",
                   call, (unsigned long long)key, (unsigned long long)blk->ncols, apart,
                   (void *)blk->base);
        return WEFT_ERR_INVALID;
    }
    char what[96];
    if (s->weft_owned && s->weft_owned(s->weft_owned_arg, mine.lo, mine.hi, what, sizeof what)) {
        char name[64];
        span_name(&mine, name, sizeof name);
        weft_error("%s: %s [%p, +%zu bytes) lies in memory weft allocated itself (%s), which it "
                   "moves, reuses and frees on its own (a pointer from weft_data_host_ptr or a "
                   "task body shows a copy weft manages); register memory the application "
                   "allocated",
                   call, name, (void *)mine.lo, (size_t)(mine.hi - mine.lo), what);
        return WEFT_ERR_INVALID;
    }
    const weft_span_t *live = find(s, s->root, &mine);
    if (live) {
        report_overlap(&mine, live);
        return WEFT_ERR_INVALID;
    }
    weft_span_t *sp =
        weft_fault_hit(s->fault, WEFT_FAULT_SPAN_ALLOC, NULL) ? NULL : malloc(sizeof *sp);
    if (!sp) {
        char name[64];
        span_name(&mine, name, sizeof name);
        weft_error("%s: %s: out of host memory noting the memory it registers: refused", call,
                   name);
        return WEFT_ERR_NOMEM;
    }
    *sp = mine;
    sp->max_hi = sp->hi;
    sp->prio = spread(++s->made);
    weft_span_t *l, *r;
    split(s->root, sp, &l, &r);
    s->root = merge(merge(l, sp), r);
    *out = sp;
    return WEFT_SUCCESS;
}

void weft_spans_release(weft_spans_t *s, weft_span_t *sp)
{
    if (!sp) return;
    s->root = erase(s->root, sp);
    free(sp);
}

void weft_spans_release_all(weft_spans_t *s, weft_span_t *sp)
{
    while (sp) {
        weft_span_t *next = sp->more;
        weft_spans_release(s, sp);
        sp = next;
    }
}

static void destroy(weft_span_t *t)
{
    if (!t) return;
    destroy(t->left);
    destroy(t->right);
    free(t);
}

void weft_spans_fini(weft_spans_t *s)
{
    destroy(s->root);
    s->root = NULL;
}
