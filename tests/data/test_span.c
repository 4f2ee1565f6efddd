/* Unit test of the spans of user memory (src/data/span.c): adjacent spans
 * are taken, an overlap of one byte, a span inside another and one around
 * another are refused naming both, a span released may be claimed again,
 * 200000 spans claimed in a scattered order then probed each at both
 * ends stay fast (the tree is balanced: a sorted insertion order would
 * make an unbalanced one quadratic); strided blocks are refused exactly
 * when they share a byte (the same tile twice, a solid block over a tile,
 * other leading dimensions), a wrapped matrix with lda > m holds its
 * columns only, the tiles of one array are all taken at
 * about one exact test per tile of their tile column; random claims and
 * releases against a byte-by-byte reference. */
#include "data/span.h"

#include <stdint.h>
#include <stdlib.h>

#include "../check.h"
#include "weft/weft.h"

#define MANY 200000

static int claim(weft_spans_t *s, uintptr_t lo, size_t bytes, uint64_t key, weft_span_t **out)
{
    weft_span_block_t b = weft_span_block((const void *)lo, (int64_t)bytes, 1, (int64_t)bytes, 1);
    return weft_spans_claim(s, &b, "test", key, key, out);
}

/* rows x cols doubles, ld apart, at lo. */
static int claim_tile(weft_spans_t *s, uintptr_t lo, int64_t rows, int64_t cols, int64_t ld,
                      uint64_t key, weft_span_t **out)
{
    weft_span_block_t b = weft_span_block((const void *)lo, rows, cols, ld, 8);
    return weft_spans_claim(s, &b, "test", key, key, out);
}

static void test_edges(void)
{
    weft_spans_t s = {0};
    weft_span_t *a = NULL, *b = NULL, *c = NULL;
    CHECK(claim(&s, 0x1000, 0x100, 0, &a) == WEFT_SUCCESS);
    CHECK(claim(&s, 0x1100, 0x100, 1, &b) == WEFT_SUCCESS); /* adjacent after */
    CHECK(claim(&s, 0x0f00, 0x100, 2, &c) == WEFT_SUCCESS); /* adjacent before */
    weft_span_t *x = NULL;
    capture_begin();
    CHECK(claim(&s, 0x10ff, 1, 3, &x) == WEFT_ERR_INVALID);      /* a's last byte */
    CHECK(claim(&s, 0x1010, 0x10, 4, &x) == WEFT_ERR_INVALID);   /* inside a */
    CHECK(claim(&s, 0x0800, 0x2000, 5, &x) == WEFT_ERR_INVALID); /* around all three */
    capture_end();
    CHECK(x == NULL);
    CHECK(captured("test: data 3 [0x10ff, +1 bytes) overlaps data 0 of test [0x1000, +256 bytes)"));
    CHECK(captured("release data 0 first"));
    weft_spans_release(&s, a);
    CHECK(claim(&s, 0x1010, 0x10, 6, &a) == WEFT_SUCCESS); /* free again */
    weft_spans_release(&s, NULL);
    weft_spans_fini(&s);
    CHECK(s.root == NULL);
}

static void test_many(void)
{
    weft_spans_t s = {0};
    weft_span_t **sp = calloc(MANY, sizeof *sp);
    REQUIRE(sp != NULL);
    int ok = 1;
    /* i * 7919 mod MANY visits every slot once (7919 is prime, MANY is not
     * a multiple of it). */
    for (long k = 0; k < MANY; k++) {
        long i = (k * 7919) % MANY;
        ok &= claim(&s, 0x10000 + (uintptr_t)i * 64, 48, (uint64_t)i, &sp[i]) == WEFT_SUCCESS;
    }
    CHECK(ok);
    int refused = 0;
    capture_begin();
    for (long i = 0; i < MANY; i += 1000) {
        weft_span_t *x = NULL;
        refused += claim(&s, 0x10000 + (uintptr_t)i * 64 + 47, 2, 1, &x) == WEFT_ERR_INVALID;
        refused += claim(&s, 0x10000 + (uintptr_t)i * 64 + 48, 16, 1, &x) == WEFT_ERR_INVALID;
    }
    capture_end();
    CHECK(refused == MANY / 1000); /* the gaps between spans are free */
    for (long i = 0; i < MANY; i += 2) weft_spans_release(&s, sp[i]);
    weft_span_t *again = NULL;
    CHECK(claim(&s, 0x10000, 48, 7, &again) == WEFT_SUCCESS); /* span 0, released */
    weft_spans_fini(&s);
    free(sp);
}

/* Strided blocks claim their bytes: two with interleaved spans (tiles
 * of one array) are both taken, the same tile twice or two that share a
 * row of a column are refused naming both, a solid block over a strided
 * one is refused, and a strided one whose span covers a solid one between
 * its columns is taken (no byte shared). */
static void test_strided(void)
{
    weft_spans_t s = {0};
    weft_span_t *a = NULL, *t0 = NULL, *t1 = NULL, *x = NULL;
    CHECK(claim(&s, 0x1000, 0x100, 0, &a) == WEFT_SUCCESS);
    capture_begin();
    CHECK(claim_tile(&s, 0x1080, 4, 4, 12, 1, &x) == WEFT_ERR_INVALID); /* over a */
    capture_end();
    CHECK(captured("test: data 1 [0x1080, +320 bytes) overlaps data 0 of test [0x1000"));
    CHECK(claim_tile(&s, 0x2000, 4, 4, 12, 2, &t0) == WEFT_SUCCESS);
    CHECK(claim_tile(&s, 0x2020, 4, 4, 12, 3, &t1) == WEFT_SUCCESS); /* the tile below */
    capture_begin();
    CHECK(claim_tile(&s, 0x2000, 4, 4, 12, 4, &x) == WEFT_ERR_INVALID);          /* t0 again */
    CHECK(claim_tile(&s, 0x2018, 2, 2, 12, 5, &x) == WEFT_ERR_INVALID);          /* t0's last row */
    CHECK(claim_tile(&s, 0x2000 + 3 * 96, 4, 1, 12, 6, &x) == WEFT_ERR_INVALID); /* t0, solid */
    CHECK(claim_tile(&s, 0x2010, 4, 4, 13, 7, &x) == WEFT_ERR_INVALID);          /* other ld */
    capture_end();
    CHECK(
        captured("test: data 4 [0x2000, +320 bytes) overlaps data 2 of test [0x2000, +320 bytes)"));
    CHECK(captured("test: data 5 [0x2018, +112 bytes) overlaps data 2 of test"));
    CHECK(captured("test: data 6 [0x2120, +32 bytes) overlaps data 2 of test"));
    CHECK(captured("test: data 7 [0x2010, +344 bytes) overlaps data 2 of test"));
    /* Memory between the columns: 0x2040 .. 0x2060 is free in each. */
    CHECK(claim(&s, 0x2040, 0x20, 8, &x) == WEFT_SUCCESS);
    weft_span_t *y = NULL;
    capture_begin();
    CHECK(claim_tile(&s, 0x2040 - 96, 4, 3, 12, 9, &y) == WEFT_ERR_INVALID); /* over x */
    capture_end();
    CHECK(
        captured("test: data 9 [0x1fe0, +224 bytes) overlaps data 8 of test [0x2040, +32 bytes)"));
    weft_spans_release(&s, t0);
    CHECK(claim_tile(&s, 0x2000, 4, 4, 12, 10, &t0) == WEFT_SUCCESS); /* free again */
    weft_spans_release(&s, a);
    weft_spans_fini(&s);
}

/* A wrapped 8 x 6 matrix of doubles with lda 10 claims its columns only:
 * a tile inside it is refused, the two rows below each of its columns
 * (another array's memory, as a user may place it) are taken. */
static void test_wrap_gap(void)
{
    weft_spans_t s = {0};
    weft_span_t *A = NULL, *x = NULL, *gap = NULL;
    weft_span_block_t w = weft_span_block((const void *)0x10000, 8, 6, 10, 8);
    CHECK(weft_spans_claim(&s, &w, "test", 0, 3, &A) == WEFT_SUCCESS);
    capture_begin();
    CHECK(claim_tile(&s, 0x10000 + (10 + 2) * 8, 4, 3, 10, 4, &x) == WEFT_ERR_INVALID);
    capture_end();
    CHECK(captured("test: data 4 [0x10060, +192 bytes) overlaps data 0..3 of test [0x10000"));
    CHECK(claim_tile(&s, 0x10000 + 8 * 8, 2, 6, 10, 5, &gap) == WEFT_SUCCESS);
    weft_spans_fini(&s);
}

/* The tiles of one 800 x 800 array of doubles (ld 803) registered one by
 * one, 37 x 37 tiles with partial edges, in a scattered order: all taken,
 * each after about one exact test per tile of its tile column (the
 * candidates whose envelope meets its own), not one per live tile. */
static void test_array_tiles(void)
{
    enum { M = 800, NB = 37, LD = 803, MT = (M + NB - 1) / NB, TILES = MT * MT };
    weft_spans_t s = {0};
    int taken = 0;
    for (long k = 0; k < TILES; k++) {
        long t = (k * 211) % TILES, i = t % MT, j = t / MT;
        int64_t rows = M - i * NB < NB ? M - i * NB : NB, cols = M - j * NB < NB ? M - j * NB : NB;
        weft_span_t *sp = NULL;
        uintptr_t at = 0x100000 + (uintptr_t)(j * NB * LD + i * NB) * 8;
        taken += claim_tile(&s, at, rows, cols, LD, (uint64_t)t, &sp) == WEFT_SUCCESS;
    }
    CHECK(taken == TILES);
    CHECK(s.tests <= (uint64_t)TILES * (MT + 2)); /* not TILES * TILES / 2 */
    weft_span_t *x = NULL;
    capture_begin();
    CHECK(claim_tile(&s, 0x100000 + (NB * LD + 5) * 8, 3, 3, LD, 1, &x) == WEFT_ERR_INVALID);
    capture_end();
    weft_spans_fini(&s);
}

/* Random claims and releases of small blocks: each claim is refused
 * exactly when its bytes meet those of a live block (checked byte by
 * byte), so the tree finds every candidate whatever its shape. */
static void test_random_registry(void)
{
    enum { LIVE = 24, ROUNDS = 20000, BYTES = 2048 };
    weft_spans_t s = {0};
    weft_span_t *sp[LIVE] = {0};
    static uint8_t owner[BYTES]; /* 1 + the slot whose block holds the byte */
    uint64_t r = 0x9e3779b97f4a7c15ULL;
    int bad = 0, refused = 0;
    capture_begin();
    for (int n = 0; n < ROUNDS; n++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        int k = (int)(r % LIVE);
        if (sp[k]) {
            for (int b = 0; b < BYTES; b++)
                if (owner[b] == k + 1) owner[b] = 0;
            weft_spans_release(&s, sp[k]);
            sp[k] = NULL;
            continue;
        }
        int64_t rows = 1 + (int64_t)(r >> 8) % 5, cols = 1 + (int64_t)(r >> 16) % 5;
        int64_t ld = rows + (int64_t)(r >> 24) % 6, at = (int64_t)(r >> 32) % 1200;
        int meets = 0;
        for (int64_t j = 0; j < cols; j++)
            for (int64_t b = 0; b < rows * 4; b++) meets |= owner[at + j * ld * 4 + b] != 0;
        weft_span_block_t blk = weft_span_block((const void *)(0x8000 + at), rows, cols, ld, 4);
        int rc = weft_spans_claim(&s, &blk, "test", (uint64_t)n, (uint64_t)n, &sp[k]);
        bad += (rc == WEFT_ERR_INVALID) != meets;
        refused += meets;
        if (rc != WEFT_SUCCESS) sp[k] = NULL;
        for (int64_t j = 0; rc == WEFT_SUCCESS && j < cols; j++)
            for (int64_t b = 0; b < rows * 4; b++) owner[at + j * ld * 4 + b] = (uint8_t)(k + 1);
    }
    capture_end();
    CHECK(bad == 0);
    CHECK(refused > ROUNDS / 20 && refused < ROUNDS / 2);
    weft_spans_fini(&s);
}

/* Sizes that no memory has (an ld past the address space, a block whose
 * end wraps) are refused, and leave the tree as it was. */
static void test_overflow(void)
{
    weft_spans_t s = {0};
    weft_span_t *a = NULL, *b = NULL;
    CHECK(claim_tile(&s, 0x1000, 4, 4, INT64_MAX / 4, 1, &b) == WEFT_ERR_INVALID);
    CHECK(claim_tile(&s, 0x1000, 4, 8, INT64_MAX / 16, 2, &b) == WEFT_ERR_INVALID);
    CHECK(claim(&s, UINTPTR_MAX - 0x10, 0x100, 3, &b) == WEFT_ERR_INVALID);
    CHECK(s.root == NULL);
    CHECK(claim_tile(&s, 0x1000, 4, 4, 4, 4, &a) == WEFT_SUCCESS);
    CHECK(claim_tile(&s, 0x1000, 4, 4, 4, 5, &b) == WEFT_ERR_INVALID);
    weft_spans_release(&s, a);
    weft_spans_fini(&s);
}

int main(void)
{
    test_edges();
    test_many();
    test_strided();
    test_wrap_gap();
    test_array_tiles();
    test_random_registry();
    test_overflow();
    return check_report("test_span");
}
