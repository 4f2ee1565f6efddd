/* The host memory of this rank's live registrations of user memory
 * (weft_data_register on the owner, weft_matrix_wrap, weft_vector_wrap):
 * dependencies are inferred per handle, not per address, so two live
 * handles of the same bytes would run their tasks at once and each wait
 * would write its own final version back. Each registration claims the
 * span of its memory, from its first byte to its last; a claim that
 * overlaps a live span is refused, naming both. The spans held are thus
 * disjoint, and a balanced tree ordered by address finds an overlap in
 * O(log n) (an overlap compares equal). Only solid blocks (one column,
 * or columns back to back: ld = rows) claim their span; a strided block
 * is checked against the solid ones and claims nothing, so the tiles of
 * one array registered one by one (each with the array's leading
 * dimension: interleaved spans, no byte shared) are taken, and an
 * overlap between two strided blocks is not seen. Main thread only. */
#ifndef WEFT_DATA_SPAN_H
#define WEFT_DATA_SPAN_H

#include <stddef.h>
#include <stdint.h>

typedef struct weft_span {
    uintptr_t lo, hi;       /* the bytes [lo, hi) */
    const char *call;       /* the registering call (a static string) */
    uint64_t key, key_last; /* the data it made: key .. key_last */
} weft_span_t;

typedef struct weft_spans {
    void *root; /* tsearch's tree of weft_span_t *; NULL: empty */
} weft_spans_t;

/* The bytes from the first to the last element of a column-major block of
 * rows x cols elements of elem bytes, ld elements apart (rows, cols >= 1). */
size_t weft_span_bytes(int64_t rows, int64_t cols, int64_t ld, size_t elem);
/* Claims [ptr, ptr + bytes) for call's data key .. key_last when solid
 * (else only checks it, *out NULL): *out the span, to give back with
 * weft_spans_release. WEFT_ERR_INVALID after an error naming both
 * registrations when it overlaps a live span, WEFT_ERR_NOMEM after one
 * when memory lacks; nothing claimed then. */
int weft_spans_claim(weft_spans_t *s, const void *ptr, size_t bytes, int solid, const char *call,
                     uint64_t key, uint64_t key_last, weft_span_t **out)
    __attribute__((warn_unused_result));
/* Gives sp back (NULL: nothing): its bytes may be registered again. */
void weft_spans_release(weft_spans_t *s, weft_span_t *sp);
/* Gives every span back (the context's end). */
void weft_spans_fini(weft_spans_t *s);

#endif
