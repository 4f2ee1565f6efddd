/* util/quarantine.h: a released object stays readable until the ring is
 * full; only then does take hand the oldest back, and only an object put
 * with the free function asked for (the data handles that every rank makes
 * for every NEW tile reuse memory past the window, never inside it). The
 * window is also bounded in bytes: large objects leave it sooner, and a
 * take hands back only an object of the size asked for. */
#include <stdint.h>

#include "../check.h"
#include "util/quarantine.h"

static int freed;

static void count_free(void *p)
{
    freed++;
    free(p);
}

static void other_free(void *p) { free(p); }

int main(void)
{
    weft_quarantine_t q;
    weft_quarantine_init(&q);
    CHECK(weft_quarantine_take(&q, 8, count_free) == NULL); /* nothing held */
    void *first = malloc(8);
    weft_quarantine_put(&q, first, 8, count_free);
    for (int i = 1; i < WEFT_QUARANTINE_SLOTS - 1; i++)
        weft_quarantine_put(&q, malloc(8), 8, count_free);
    /* One slot left: nothing is past the window yet. */
    CHECK(weft_quarantine_take(&q, 8, count_free) == NULL);
    weft_quarantine_put(&q, malloc(8), 8, count_free);
    CHECK(freed == 0);
    /* Full: the oldest comes back, once, and its slot is the next filled. */
    CHECK(weft_quarantine_take(&q, 8, count_free) == first);
    CHECK(weft_quarantine_take(&q, 8, count_free) == NULL);
    free(first);
    void *tail = malloc(8);
    weft_quarantine_put(&q, tail, 8, other_free);
    /* Full again, its oldest now the second object put: put with
     * count_free, so a take for other_free gets nothing. */
    CHECK(weft_quarantine_take(&q, 8, other_free) == NULL);
    void *second = weft_quarantine_take(&q, 8, count_free);
    CHECK(second != NULL && second != tail);
    free(second);
    /* A put past a full ring frees the oldest at once. */
    weft_quarantine_put(&q, malloc(8), 8, count_free);
    weft_quarantine_put(&q, malloc(8), 8, count_free);
    CHECK(freed == 1);
    weft_quarantine_fini(&q);
    CHECK(freed == WEFT_QUARANTINE_SLOTS); /* all but tail, which other_free took */
    /* Bytes: objects said to be a quarter of the bound each. */
    size_t quarter = WEFT_QUARANTINE_BYTES / 4;
    freed = 0;
    weft_quarantine_init(&q);
    void *big = malloc(8);
    weft_quarantine_put(&q, big, quarter, count_free);
    for (int i = 0; i < 3; i++) weft_quarantine_put(&q, malloc(8), quarter, count_free);
    CHECK(freed == 0 && q.count == 4 && q.held == WEFT_QUARANTINE_BYTES);
    CHECK(weft_quarantine_take(&q, 8, count_free) == NULL); /* full, the oldest not of 8 B */
    CHECK(weft_quarantine_take(&q, quarter / 2, count_free) == NULL); /* nor of this size */
    CHECK(weft_quarantine_take(&q, quarter, count_free) == big);
    free(big);
    weft_quarantine_put(&q, malloc(8), quarter, count_free);
    weft_quarantine_put(&q, malloc(8), 2 * quarter, count_free); /* two oldest go */
    CHECK(freed == 2 && q.count == 3 && q.held == WEFT_QUARANTINE_BYTES);
    weft_quarantine_fini(&q);
    CHECK(freed == 5);
    /* Ended (weft_fini): the entries stay, tagged ended, and say what they
     * hold, until a drop frees them with their own functions (a process
     * that ended context after context kept every context's, without
     * bound). */
    freed = 0;
    weft_quarantine_init(&q);
    for (int i = 0; i < 10; i++) {
        uint32_t *h = malloc(16);
        *h = 0x1234;
        weft_quarantine_put(&q, h, 16, count_free);
    }
    weft_quarantine_end(&q);
    size_t bytes = 0;
    CHECK(weft_quarantine_held(&q, &bytes) == 10 && bytes == 160 && freed == 0);
    CHECK(*(uint32_t *)q.ptr[0] != 0x1234);            /* the tag's ended form */
    weft_quarantine_put(&q, malloc(8), 8, count_free); /* no ring after the end: freed */
    CHECK(freed == 1);
    weft_quarantine_drop(&q);
    CHECK(freed == 11 && weft_quarantine_held(&q, &bytes) == 0 && bytes == 0);
    return check_report("util_quarantine");
}
