/* The spans of user memory registered on this rank (data/span.h), in
 * POSIX's balanced search tree: glibc's is a red-black tree. */
#include "data/span.h"

#include <search.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/log.h"
#include "weft/weft.h"

size_t weft_span_bytes(int64_t rows, int64_t cols, int64_t ld, size_t elem)
{
    return (size_t)((cols - 1) * ld + rows) * elem;
}

/* Disjoint spans are ordered by address; two that overlap compare equal,
 * so a search for a new span finds a live one it overlaps, if any. */
static int span_cmp(const void *a, const void *b)
{
    const weft_span_t *x = a, *y = b;
    if (x->hi <= y->lo) return -1;
    if (y->hi <= x->lo) return 1;
    return 0;
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
     * to their first 150 characters (stf/seqcheck.c). */
    weft_error("%s: %s [%p, +%zu bytes) overlaps %s of %s [%p, +%zu bytes), not released: two "
               "live registrations of the same bytes break coherence (their tasks run at once "
               "and each wait writes its own version back); release %s first, or register "
               "disjoint memory",
               mine->call, me, (void *)mine->lo, (size_t)(mine->hi - mine->lo), other, live->call,
               (void *)live->lo, (size_t)(live->hi - live->lo), other);
}

/* A strided block (its columns apart in a larger array) is only checked:
 * the tiles of one array registered one by one, each with the array's
 * leading dimension, have interleaved spans and share no byte, so they
 * must not claim them. */
static int check_strided(weft_spans_t *s, const weft_span_t *mine, weft_span_t **out)
{
    void *node = tfind(mine, &s->root, span_cmp);
    if (node) {
        report_overlap(mine, *(weft_span_t **)node);
        return WEFT_ERR_INVALID;
    }
    *out = NULL;
    return WEFT_SUCCESS;
}

int weft_spans_claim(weft_spans_t *s, const void *ptr, size_t bytes, int solid, const char *call,
                     uint64_t key, uint64_t key_last, weft_span_t **out)
{
    if (!solid) {
        weft_span_t mine = {(uintptr_t)ptr, (uintptr_t)ptr + bytes, call, key, key_last};
        return check_strided(s, &mine, out);
    }
    weft_span_t *sp = malloc(sizeof *sp);
    if (!sp) {
        weft_error("%s: out of host memory noting the memory it registers", call);
        return WEFT_ERR_NOMEM;
    }
    *sp = (weft_span_t){(uintptr_t)ptr, (uintptr_t)ptr + bytes, call, key, key_last};
    void *node = tsearch(sp, &s->root, span_cmp);
    if (!node) {
        weft_error("%s: out of host memory noting the memory it registers", call);
        free(sp);
        return WEFT_ERR_NOMEM;
    }
    const weft_span_t *found = *(weft_span_t **)node;
    if (found != sp) {
        report_overlap(sp, found);
        free(sp);
        return WEFT_ERR_INVALID;
    }
    *out = sp;
    return WEFT_SUCCESS;
}

void weft_spans_release(weft_spans_t *s, weft_span_t *sp)
{
    if (!sp) return;
    tdelete(sp, &s->root, span_cmp);
    free(sp);
}

void weft_spans_fini(weft_spans_t *s)
{
    tdestroy(s->root, free);
    s->root = NULL;
}
