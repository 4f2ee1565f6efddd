/* The growable array of util/vec.h: growth by doubling (out of the owner's
 * buffer on the first one) and removal. */
#include "util/vec.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

int weft_vec__grow(weft_vec_t *v, size_t want)
{
    /* An element size of 0 means weft_vec_init was never called. */
    assert(v->elem > 0);
    size_t cap = v->cap ? v->cap : v->first_cap;
    while (cap < want) cap *= 2;
    /* The owner's buffer is not ours to realloc: leave it with a copy. */
    int in_buf = v->buf && v->data == v->buf;
    void *p = in_buf ? malloc(cap * v->elem) : realloc(v->data, cap * v->elem);
    if (!p) return WEFT_ERR_NOMEM;
    if (in_buf) memcpy(p, v->buf, v->n * v->elem);
    v->data = p;
    v->cap = cap;
    return WEFT_SUCCESS;
}

void weft_vec_remove(weft_vec_t *v, size_t i)
{
    assert(i < v->n);
    char *at = weft_vec_at(v, i);
    memmove(at, at + v->elem, (v->n - i - 1) * v->elem);
    v->n--;
}

void weft_vec_swap_remove(weft_vec_t *v, size_t i)
{
    assert(i < v->n);
    v->n--;
    if (i != v->n) memcpy(weft_vec_at(v, i), weft_vec_at(v, v->n), v->elem);
}

void weft_vec_fini(weft_vec_t *v)
{
    if (v->data != v->buf) free(v->data);
    v->data = v->buf;
    v->n = 0;
    v->cap = v->buf ? v->first_cap : 0;
}
