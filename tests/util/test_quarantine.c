/* util/quarantine.h: a released object stays readable until the ring is
 * full; only then does take hand the oldest back, and only an object put
 * with the free function asked for (the data handles that every rank makes
 * for every NEW tile reuse memory past the window, never inside it). */
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
    CHECK(weft_quarantine_take(&q, count_free) == NULL); /* nothing held */
    void *first = malloc(8);
    weft_quarantine_put(&q, first, count_free);
    for (int i = 1; i < WEFT_QUARANTINE_SLOTS - 1; i++)
        weft_quarantine_put(&q, malloc(8), count_free);
    /* One slot left: nothing is past the window yet. */
    CHECK(weft_quarantine_take(&q, count_free) == NULL);
    weft_quarantine_put(&q, malloc(8), count_free);
    CHECK(freed == 0);
    /* Full: the oldest comes back, once, and its slot is the next filled. */
    CHECK(weft_quarantine_take(&q, count_free) == first);
    CHECK(weft_quarantine_take(&q, count_free) == NULL);
    free(first);
    void *tail = malloc(8);
    weft_quarantine_put(&q, tail, other_free);
    /* Full again, its oldest now the second object put: put with
     * count_free, so a take for other_free gets nothing. */
    CHECK(weft_quarantine_take(&q, other_free) == NULL);
    void *second = weft_quarantine_take(&q, count_free);
    CHECK(second != NULL && second != tail);
    free(second);
    /* A put past a full ring frees the oldest at once. */
    weft_quarantine_put(&q, malloc(8), count_free);
    weft_quarantine_put(&q, malloc(8), count_free);
    CHECK(freed == 1);
    weft_quarantine_fini(&q);
    CHECK(freed == WEFT_QUARANTINE_SLOTS); /* all but tail, which other_free took */
    return check_report("util_quarantine");
}
