/* Unit test of the spans of user memory (src/data/span.c): adjacent spans
 * are taken, an overlap of one byte, a span inside another and one around
 * another are refused naming both, a span released may be claimed again,
 * and 200000 spans claimed in a scattered order then probed each at both
 * ends stay fast (the tree is balanced: a sorted insertion order would
 * make an unbalanced one quadratic). */
#include "data/span.h"

#include <stdint.h>
#include <stdlib.h>

#include "../check.h"
#include "weft/weft.h"

#define MANY 200000

static int claim(weft_spans_t *s, uintptr_t lo, size_t bytes, uint64_t key, weft_span_t **out)
{
    return weft_spans_claim(s, (const void *)lo, bytes, 1, "test", key, key, out);
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

/* Strided blocks are checked against the solid spans and claim nothing:
 * two of them with interleaved spans are both taken, and a solid span
 * over one of them later is not refused by it. */
static void test_strided(void)
{
    weft_spans_t s = {0};
    weft_span_t *a = NULL, *x = NULL, *y = NULL;
    CHECK(claim(&s, 0x1000, 0x100, 0, &a) == WEFT_SUCCESS);
    CHECK(weft_spans_claim(&s, (const void *)0x1080, 0x100, 0, "test", 1, 1, &x) ==
          WEFT_ERR_INVALID); /* over a */
    CHECK(weft_spans_claim(&s, (const void *)0x2000, 0x400, 0, "test", 2, 2, &x) == WEFT_SUCCESS);
    CHECK(x == NULL);
    CHECK(weft_spans_claim(&s, (const void *)0x2040, 0x400, 0, "test", 3, 3, &y) == WEFT_SUCCESS);
    CHECK(y == NULL);
    weft_spans_release(&s, a);
    weft_spans_fini(&s);
}

int main(void)
{
    test_edges();
    test_many();
    test_strided();
    return check_report("test_span");
}
