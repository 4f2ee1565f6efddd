/* Unit test of the exact overlap test of two blocks of user memory
 * (src/data/span_block.c), against an independent reference: the sets of
 * bytes of both blocks, marked one by one in a bitmap.
 *
 *   random   many random small blocks (element sizes 1, 2, 4, 8, bases not
 *            aligned to them, ld from rows to rows + 9), each pair decided
 *            by weft_span_block_overlap both ways round and by the byte
 *            sets; half the pairs share their ld, with the bases at every
 *            offset modulo ld (columns that pass a multiple of ld).
 *   tiles    every tile of a column-major array, for many shapes (tile
 *            sizes that do not divide the array, partial edge tiles, ld
 *            equal to the rows or larger and not a multiple of the tile
 *            rows, element sizes 4 and 8): no two tiles overlap, a tile
 *            overlaps itself, and a tile moved by one element overlaps
 *            one of its neighbours exactly when the byte sets say so. */
#include "data/span.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"

#define WINDOW 4096    /* the bytes the random blocks lie in */
#define ORIGIN 0x40000 /* their first address: never read */

typedef struct {
    int64_t rows, cols, ld;
    size_t elem;
    uintptr_t at; /* offset from ORIGIN */
} shape_t;

static weft_span_block_t block_of(const shape_t *s)
{
    return weft_span_block((const void *)(ORIGIN + s->at), s->rows, s->cols, s->ld, s->elem);
}

/* The bytes of s, one per bit (offsets from ORIGIN < WINDOW). */
static void mark(const shape_t *s, uint8_t *bits)
{
    memset(bits, 0, WINDOW / 8);
    for (int64_t j = 0; j < s->cols; j++)
        for (size_t b = 0; b < (size_t)s->rows * s->elem; b++) {
            size_t at = s->at + (size_t)j * (size_t)s->ld * s->elem + b;
            bits[at / 8] |= (uint8_t)(1u << (at % 8));
        }
}

static int reference(const shape_t *x, const shape_t *y)
{
    uint8_t a[WINDOW / 8], b[WINDOW / 8];
    mark(x, a);
    mark(y, b);
    for (int i = 0; i < WINDOW / 8; i++)
        if (a[i] & b[i]) return 1;
    return 0;
}

/* 1 when the test agrees with the byte sets, both ways round. */
static int agrees(const shape_t *x, const shape_t *y)
{
    weft_span_block_t bx = block_of(x), by = block_of(y);
    int want = reference(x, y);
    return weft_span_block_overlap(&bx, &by) == want && weft_span_block_overlap(&by, &bx) == want;
}

static uint64_t rng = 88172645463325252ULL;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static int64_t pick(int64_t lo, int64_t hi) /* in [lo, hi] */
{
    return lo + (int64_t)(next() % (uint64_t)(hi - lo + 1));
}

static shape_t random_shape(void)
{
    static const size_t elems[] = {1, 2, 4, 8};
    shape_t s = {.rows = pick(1, 6), .cols = pick(1, 6), .elem = elems[next() % 4]};
    s.ld = s.rows + pick(0, 9) * (next() % 4 != 0);
    s.at = (uintptr_t)pick(0, 400);
    return s;
}

static void test_random(void)
{
    int bad = 0, same = 0, met = 0;
    for (int n = 0; n < 400000; n++) {
        shape_t x = random_shape(), y = random_shape();
        if (n % 2) { /* the same ld in bytes: y's rows fit in it */
            y.elem = x.elem;
            y.ld = x.ld;
            y.rows = pick(1, x.ld);
            same++;
        }
        met += reference(&x, &y);
        bad += !agrees(&x, &y);
    }
    CHECK(bad == 0);
    CHECK(same > 0 && met > 10000 && met < 390000); /* both answers were tried often */
}

/* Tile (i, j) of an m x n array of mb x nb tiles, ld apart, at `at`. */
static shape_t tile(int64_t m, int64_t n, int64_t mb, int64_t nb, int64_t ld, size_t elem,
                    int64_t i, int64_t j)
{
    shape_t s = {.rows = m - i * mb < mb ? m - i * mb : mb,
                 .cols = n - j * nb < nb ? n - j * nb : nb,
                 .ld = ld,
                 .elem = elem};
    s.at = 3 * elem + (size_t)(j * nb * ld + i * mb) * elem;
    return s;
}

/* Every pair of tiles of one array: none overlap; each overlaps itself;
 * the tile moved down one element agrees with the byte sets. */
static int check_array(int64_t m, int64_t n, int64_t mb, int64_t nb, int64_t ld, size_t elem)
{
    int64_t mt = (m + mb - 1) / mb, nt = (n + nb - 1) / nb;
    int bad = 0;
    for (int64_t a = 0; a < mt * nt; a++) {
        shape_t x = tile(m, n, mb, nb, ld, elem, a % mt, a / mt), moved = x;
        weft_span_block_t bx = block_of(&x);
        bad += !weft_span_block_overlap(&bx, &bx);
        moved.at += elem;
        for (int64_t b = 0; b < mt * nt; b++) {
            shape_t y = tile(m, n, mb, nb, ld, elem, b % mt, b / mt);
            weft_span_block_t by = block_of(&y);
            if (a != b) bad += weft_span_block_overlap(&bx, &by) != 0;
            bad += !agrees(&moved, &y);
        }
    }
    return bad;
}

static void test_tiles(void)
{
    static const size_t elems[] = {4, 8};
    int bad = 0, arrays = 0;
    for (int e = 0; e < 2; e++)
        for (int64_t m = 1; m <= 11; m += 2)
            for (int64_t n = 1; n <= 9; n += 4)
                for (int64_t mb = 1; mb <= m; mb += 2)
                    for (int64_t nb = 1; nb <= n; nb += 3)
                        for (int64_t ld = m; ld <= m + 7; ld += 3) {
                            bad += check_array(m, n, mb, nb, ld, elems[e]);
                            arrays++;
                        }
    CHECK(bad == 0);
    CHECK(arrays > 500);
}

int main(void)
{
    test_random();
    test_tiles();
    return check_report("test_span_block");
}
