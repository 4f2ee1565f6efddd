/* The host memory of this rank's live registrations of user memory
 * (weft_data_register on the owner, weft_matrix_wrap, weft_vector_wrap):
 * dependencies are inferred per handle, not per address, so two live
 * handles of the same bytes would run their tasks at once and each wait
 * would write its own final version back. A registration is a block:
 * cols columns of rows elements, ld elements apart; a claim that shares a
 * byte with a live block is refused, naming both. Blocks are kept in an
 * interval tree ordered by their envelope (first byte to last byte):
 * the live blocks whose envelope meets the new one's are the candidates,
 * and an exact test (weft_span_block_overlap) decides each. The tiles of
 * one array registered one by one (each with the array's leading
 * dimension) interleave without sharing a byte: they are all taken, at
 * O(log n) plus one O(1) test per tile of the same tile column. Main
 * thread only. */
#ifndef WEFT_DATA_SPAN_H
#define WEFT_DATA_SPAN_H

#include <stddef.h>
#include <stdint.h>

/* ncols columns of col bytes, the first at base, each ld bytes after the
 * one before (col <= ld). A solid block (one column, or columns back to
 * back) is one column of all its bytes, with ld = col. */
typedef struct weft_span_block {
    uintptr_t base;
    uint64_t col, ncols, ld;
} weft_span_block_t;

typedef struct weft_span {
    weft_span_block_t blk;
    uintptr_t lo, hi;       /* its envelope: the bytes [lo, hi) */
    const char *call;       /* the registering call (a static string) */
    uint64_t key, key_last; /* the data it made: key .. key_last */
    struct weft_span *left, *right;
    uintptr_t max_hi; /* the largest hi in its subtree */
    uint64_t prio;    /* the treap's heap order */
    /* The next block of the same data (a data holds its host registration
     * and one per device registration: weft_data_register_device). */
    struct weft_span *more;
    /* Its handle was released while tasks of this rank still used it: the
     * bytes stay claimed until their taskpool's wait (a refusal says so). */
    int released;
} weft_span_t;

typedef struct weft_spans {
    weft_span_t *root;        /* a treap of the live blocks by lo; NULL: empty */
    struct weft_fault *fault; /* fault_inject's span_alloc (NULL: none) */
    uint64_t made;            /* blocks claimed so far (their priorities) */
    uint64_t tests;           /* exact tests made (a counter tests read) */
    /* Memory weft allocated itself (its host copies, its devices' zones):
     * 1 when the bytes [lo, hi) touch it, what it is written into what.
     * NULL: none checked. A registration there was taken: a view of a copy
     * weft moves, reuses and frees (weft_data_host_ptr of a NEW data), its
     * tasks racing with the copy's own. */
    int (*weft_owned)(void *arg, uintptr_t lo, uintptr_t hi, char *what, size_t n);
    void *weft_owned_arg;
} weft_spans_t;

/* The block of rows x cols elements of elem bytes, ld elements apart
 * (rows, cols >= 1, ld >= rows), at ptr. */
weft_span_block_t weft_span_block(const void *ptr, int64_t rows, int64_t cols, int64_t ld,
                                  size_t elem);
/* 1 when x and y share a byte, else 0. Exact: O(1) when their ld are
 * equal, else O(the columns of the one with fewer within the other's
 * envelope). */
int weft_span_block_overlap(const weft_span_block_t *x, const weft_span_block_t *y);
/* Claims blk for call's data key .. key_last: *out the span, to give back
 * with weft_spans_release. WEFT_ERR_INVALID after an error naming both
 * registrations when it shares a byte with a live block, WEFT_ERR_NOMEM
 * after one when memory lacks; nothing claimed then. */
int weft_spans_claim(weft_spans_t *s, const weft_span_block_t *blk, const char *call, uint64_t key,
                     uint64_t key_last, weft_span_t **out) __attribute__((warn_unused_result));
/* Gives sp back (NULL: nothing): its bytes may be registered again. */
void weft_spans_release(weft_spans_t *s, weft_span_t *sp);
/* Puts sp at the head of the chain *head (a data's blocks, given back
 * together by weft_spans_release_all). */
static inline void weft_span_chain(weft_span_t **head, weft_span_t *sp)
{
    sp->more = *head;
    *head = sp;
}
/* Marks sp and the blocks chained after it as released by their handle,
 * still claimed by tasks not waited for. */
static inline void weft_span_mark_released(weft_span_t *sp)
{
    for (; sp; sp = sp->more) sp->released = 1;
}
/* Gives sp back and the blocks chained after it by ->more. */
void weft_spans_release_all(weft_spans_t *s, weft_span_t *sp);
/* Gives every span back (the context's end). */
void weft_spans_fini(weft_spans_t *s);

#endif
