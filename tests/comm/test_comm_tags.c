/* The engine's data tags (internal, comm/tags.h): a transfer takes n
 * consecutive tags in [first, tag_ub], from the first data tag again once
 * they run out, and may start only when its tags cannot repeat those of a
 * range still held.
 * - With Open MPI's tag_ub = INT_MAX the test next_tag + n > tag_ub
 *   overflowed: the tags went negative and every data receive failed.
 * - With a small tag_ub the counter wrapped onto the tags of a transfer
 *   still in flight: two receives from one peer posted with one tag. The
 *   random walk below holds ranges for random times, as slow transfers do,
 *   and checks every tag taken against every tag still held. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "comm/tags.h"

static int fails;

static void expect(const char *what, long long got, long long want)
{
    if (got == want) return;
    printf("test_comm_tags: %s: %lld, expected %lld\n", what, got, want);
    fails++;
}

/* Takes n tags (room asked first, as the engine does). */
static int take(weft_comm_tags_t *g, int n, int64_t *v)
{
    if (!weft_comm__tags_room(g)) {
        printf("test_comm_tags: no room with nothing held\n");
        fails++;
    }
    return weft_comm__tags_take(g, n, v);
}

static void edges(void)
{
    int64_t v;
    weft_comm_tags_t g;
    weft_comm__tags_init(&g, 16, INT_MAX);
    expect("first", take(&g, 3, &v), 16);
    weft_comm__tags_give(&g, v);
    expect("second", take(&g, 1, &v), 19);
    weft_comm__tags_give(&g, v);
    /* The last tags below tag_ub, then a wrap, near INT_MAX. */
    g.next = g.span - 5;
    expect("fits below tag_ub", take(&g, 5, &v), INT_MAX - 4);
    weft_comm__tags_give(&g, v);
    expect("wraps at tag_ub", take(&g, 2, &v), 16);
    weft_comm__tags_give(&g, v);
    g.next = g.span - 1;
    expect("wraps near INT_MAX", take(&g, 40, &v), 16);
    weft_comm__tags_give(&g, v);
    /* The standard's least tag_ub: a range held keeps its tags. */
    weft_comm__tags_init(&g, 16, 32767);
    expect("most a transfer", weft_comm__tags_most(&g), (32767 - 16 + 1) / 4);
    int64_t first;
    int most = (int)weft_comm__tags_most(&g);
    take(&g, most, &first);
    int64_t others[3];
    for (int i = 0; i < 3 && weft_comm__tags_room(&g); i++)
        weft_comm__tags_take(&g, most, &others[i]);
    expect("no room while the oldest holds", weft_comm__tags_room(&g), 0);
    weft_comm__tags_give(&g, first);
    expect("room once it is given back", weft_comm__tags_room(&g), 1);
}

typedef struct {
    int64_t v;
    int tag, n;
} range_t;

/* Ranges taken and given back at random: no tag taken is held by another
 * range, every tag lies in [first, tag_ub], and room always comes back. */
static void walk(int tag_ub, unsigned seed)
{
    enum { SLOTS = 64 };
    weft_comm_tags_t g;
    weft_comm__tags_init(&g, 16, tag_ub);
    range_t held[SLOTS];
    int nheld = 0, waits = 0;
    srand(seed);
    for (int step = 0; step < 200000 && !fails; step++) {
        int give = nheld == SLOTS || (nheld > 0 && rand() % 3 == 0);
        if (!give && !weft_comm__tags_room(&g)) {
            waits++;
            give = 1;
            if (nheld == 0) {
                printf("test_comm_tags: tag_ub %d: no room with nothing held\n", tag_ub);
                fails++;
                return;
            }
        }
        if (give) {
            /* Mostly the newer ranges: the oldest stay, as a slow one does. */
            int i =
                nheld - 1 - (rand() % 4 < 3 ? rand() % (nheld < 4 ? nheld : 4) : rand() % nheld);
            weft_comm__tags_give(&g, held[i].v);
            held[i] = held[--nheld];
            continue;
        }
        int most = (int)weft_comm__tags_most(&g);
        int n = 1 + (rand() % 2 ? rand() % most : rand() % 8);
        range_t r = {.n = n};
        r.tag = weft_comm__tags_take(&g, n, &r.v);
        if (r.tag < 16 || r.tag - 1 > tag_ub - n) {
            printf("test_comm_tags: tag_ub %d: tags %d..%d outside the data tags\n", tag_ub, r.tag,
                   r.tag + n - 1);
            fails++;
        }
        for (int i = 0; i < nheld; i++)
            if (r.tag < held[i].tag + held[i].n && held[i].tag < r.tag + n) {
                printf("test_comm_tags: tag_ub %d, step %d: tags %d..%d taken while %d..%d are "
                       "held\n",
                       tag_ub, step, r.tag, r.tag + n - 1, held[i].tag,
                       held[i].tag + held[i].n - 1);
                fails++;
            }
        held[nheld++] = r;
    }
    if (waits == 0) {
        printf("test_comm_tags: tag_ub %d: the walk never ran out of tags\n", tag_ub);
        fails++;
    }
}

int main(void)
{
    edges();
    walk(32767, 1);
    walk(1000, 2);
    walk(16 + 63, 3);
    printf("test_comm_tags: %s\n", fails ? "FAILED" : "ok");
    return fails ? 1 : 0;
}
