/* Whether two blocks of user memory share a byte (data/span.h): a block
 * is ncols columns of col bytes, ld bytes apart, so two share a byte iff
 * a column of one meets a column of the other. */
#include <assert.h>

#include "data/span.h"

weft_span_block_t weft_span_block(const void *ptr, int64_t rows, int64_t cols, int64_t ld,
                                  size_t elem)
{
    assert(rows >= 1 && cols >= 1 && ld >= rows);
    weft_span_block_t b = {(uintptr_t)ptr, 0, (uint64_t)cols, 0};
    /* Sizes past 64 bits saturate: weft_spans_claim refuses the block. */
    if (__builtin_mul_overflow((uint64_t)rows, (uint64_t)elem, &b.col)) b.col = UINT64_MAX;
    if (__builtin_mul_overflow((uint64_t)ld, (uint64_t)elem, &b.ld)) b.ld = UINT64_MAX;
    if (b.ncols == 1 || b.ld == b.col) { /* solid: one column of all its bytes */
        if (__builtin_mul_overflow(b.col, b.ncols, &b.col)) b.col = UINT64_MAX;
        b.ncols = 1;
        b.ld = b.col;
    }
    return b;
}

/* A rectangle of the plane (q, r) = (address / ld, address % ld):
 * q in [q0, q1), r in [r0, r1); empty when r0 == r1. */
typedef struct {
    uint64_t q0, q1, r0, r1;
} rect_t;

/* With ld fixed, an address is one point (q, r). The columns of b are
 * the cells r in [R, R + col) of the rows q = Q .. Q + ncols - 1, where
 * base = Q * ld + R; a column that passes a multiple of ld (R + col > ld)
 * goes on in the next row, at r = 0: its part there is a second
 * rectangle, one row lower. */
static void block_rects(const weft_span_block_t *b, rect_t out[2])
{
    uint64_t q = b->base / b->ld, r = b->base % b->ld, end = r + b->col;
    out[0] = (rect_t){q, q + b->ncols, r, end < b->ld ? end : b->ld};
    out[1] = (rect_t){q + 1, q + 1 + b->ncols, 0, end > b->ld ? end - b->ld : 0};
}

static int rects_meet(const rect_t *a, const rect_t *b)
{
    return a->r0 < a->r1 && b->r0 < b->r1 && a->q0 < b->q1 && b->q0 < a->q1 && a->r0 < b->r1 &&
           b->r0 < a->r1;
}

/* Equal ld: the map from an address to (q, r) is one to one, so the
 * blocks share a byte iff one of their rectangles meet. */
static int overlap_same_ld(const weft_span_block_t *x, const weft_span_block_t *y)
{
    rect_t a[2], b[2];
    block_rects(x, a);
    block_rects(y, b);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            if (rects_meet(&a[i], &b[j])) return 1;
    return 0;
}

static uintptr_t block_end(const weft_span_block_t *b)
{
    return b->base + (b->ncols - 1) * b->ld + b->col;
}

/* The first column of b that ends after address s (b->ncols: none). */
static uint64_t first_col_after(const weft_span_block_t *b, uintptr_t s)
{
    if (s < b->base + b->col) return 0;
    uint64_t k = (s - b->base - b->col) / b->ld + 1;
    return k < b->ncols ? k : b->ncols;
}

/* Whether the bytes [s, e) meet a column of b: only the first column that
 * ends after s may, and it does iff it starts before e. */
static int range_meets(const weft_span_block_t *b, uintptr_t s, uintptr_t e)
{
    uint64_t k = first_col_after(b, s);
    return k < b->ncols && b->base + k * b->ld < e;
}

/* Different ld: each column of x inside y's envelope against y. */
static int overlap_walk(const weft_span_block_t *x, const weft_span_block_t *y)
{
    uintptr_t lo = y->base, hi = block_end(y);
    for (uint64_t k = first_col_after(x, lo); k < x->ncols; k++) {
        uintptr_t s = x->base + k * x->ld;
        if (s >= hi) break;
        if (range_meets(y, s, s + x->col)) return 1;
    }
    return 0;
}

int weft_span_block_overlap(const weft_span_block_t *x, const weft_span_block_t *y)
{
    if (x->base >= block_end(y) || y->base >= block_end(x)) return 0; /* envelopes apart */
    if (x->ld == y->ld) return overlap_same_ld(x, y);
    return x->ncols <= y->ncols ? overlap_walk(x, y) : overlap_walk(y, x);
}
