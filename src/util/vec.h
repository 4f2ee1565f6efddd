/* weft_vec_t: the one growable array of the runtime. Elements of one fixed
 * size sit contiguously in `data` (MPI_Testsome and the heap index it
 * directly); the array doubles when full, starting at a capacity chosen by
 * its owner, or in a small buffer of the owner's until that is full (a
 * task's successors: most tasks have few, and a malloc per task would show
 * in the task overhead). Not thread-safe: the owner locks. A zeroed
 * weft_vec_t is invalid until weft_vec_init gives it its element size. */
#ifndef WEFT_UTIL_VEC_H
#define WEFT_UTIL_VEC_H

#include <stddef.h>
#include <string.h>

#include "weft/weft.h"

typedef struct weft_vec {
    void *data;       /* cap elements, the first n in use; NULL before the first growth */
    size_t n;         /* elements in use */
    size_t cap;       /* elements allocated */
    size_t elem;      /* bytes of one element */
    size_t first_cap; /* elements allocated at the first growth, or in buf */
    void *buf;        /* the owner's first storage (never freed), or NULL */
} weft_vec_t;

/* Makes v empty, for elements of `elem` bytes; nothing is allocated until
 * the first push or reserve, which takes room for first_cap (at least 1). */
static inline void weft_vec_init(weft_vec_t *v, size_t elem, size_t first_cap)
{
    *v = (weft_vec_t){.elem = elem, .first_cap = first_cap ? first_cap : 1};
}

/* Makes v empty with the owner's buffer `buf` of nbuf elements as its
 * first storage: nothing is allocated until more are pushed. buf must live
 * as long as v. */
static inline void weft_vec_init_inline(weft_vec_t *v, size_t elem, void *buf, size_t nbuf)
{
    *v = (weft_vec_t){.data = buf, .cap = nbuf, .elem = elem, .first_cap = nbuf, .buf = buf};
}

/* The growth behind weft_vec_reserve: WEFT_SUCCESS or WEFT_ERR_NOMEM. */
int weft_vec__grow(weft_vec_t *v, size_t want) __attribute__((warn_unused_result));

/* Makes room for at least `want` elements (doubling from first_cap), so
 * that pushes up to that count cannot fail. WEFT_SUCCESS, or
 * WEFT_ERR_NOMEM with v unchanged. */
__attribute__((warn_unused_result)) static inline int weft_vec_reserve(weft_vec_t *v, size_t want)
{
    return want <= v->cap ? WEFT_SUCCESS : weft_vec__grow(v, want);
}

/* Element i (< n). The pointer is valid until the next growth. */
static inline void *weft_vec_at(const weft_vec_t *v, size_t i)
{
    return (char *)v->data + i * v->elem;
}

/* Appends a copy of the `elem` bytes at e. WEFT_SUCCESS, or WEFT_ERR_NOMEM
 * with v unchanged. */
__attribute__((warn_unused_result)) static inline int weft_vec_push(weft_vec_t *v, const void *e)
{
    if (weft_vec_reserve(v, v->n + 1) != WEFT_SUCCESS) return WEFT_ERR_NOMEM;
    memcpy(weft_vec_at(v, v->n), e, v->elem);
    v->n++;
    return WEFT_SUCCESS;
}

/* Removes element i, moving the later ones down one (keeps the order). */
void weft_vec_remove(weft_vec_t *v, size_t i);

/* Removes element i, putting the last one in its place (order not kept). */
void weft_vec_swap_remove(weft_vec_t *v, size_t i);

/* Empties v and keeps its memory for reuse. */
static inline void weft_vec_clear(weft_vec_t *v) { v->n = 0; }

/* Frees v's memory (not the owner's buffer); v is empty afterwards, back
 * to its first storage, and may be pushed to again. */
void weft_vec_fini(weft_vec_t *v);

#endif
