/* util/list.h: order after pushes at both ends, removal (twice included),
 * moving to the back as an LRU does, and walking with entry recovery. */
#include "../check.h"
#include "util/list.h"

typedef struct item {
    int id;
    weft_list_t link;
} item_t;

/* Writes the ids of the list in order into out; returns how many. */
static int ids(const weft_list_t *head, int *out, int max)
{
    int n = 0;
    for (weft_list_t *l = weft_list_first(head); l && n < max; l = weft_list_next(head, l))
        out[n++] = weft_list_entry(l, item_t, link)->id;
    return n;
}

static int same(const int *a, const int *b, int n)
{
    for (int i = 0; i < n; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

int main(void)
{
    weft_list_t head;
    weft_list_init(&head);
    CHECK(weft_list_empty(&head) && !weft_list_first(&head) && !weft_list_last(&head));
    item_t it[5];
    for (int i = 0; i < 5; i++) {
        it[i].id = i;
        weft_list_init(&it[i].link);
        CHECK(!weft_list_linked(&it[i].link));
    }
    weft_list_push_back(&head, &it[1].link);
    weft_list_push_back(&head, &it[2].link);
    weft_list_push_front(&head, &it[0].link);
    weft_list_push_back(&head, &it[3].link);
    int got[8], want1[] = {0, 1, 2, 3};
    CHECK(ids(&head, got, 8) == 4 && same(got, want1, 4));
    CHECK(weft_list_linked(&it[2].link) && !weft_list_linked(&it[4].link));

    /* Used now: to the back. */
    weft_list_move_back(&head, &it[1].link);
    int want2[] = {0, 2, 3, 1};
    CHECK(ids(&head, got, 8) == 4 && same(got, want2, 4));
    CHECK(weft_list_entry(weft_list_last(&head), item_t, link)->id == 1);

    /* Removed twice: the second does nothing. */
    weft_list_remove(&it[2].link);
    weft_list_remove(&it[2].link);
    int want3[] = {0, 3, 1};
    CHECK(ids(&head, got, 8) == 3 && same(got, want3, 3));

    /* An element not in any list moved to the back joins it. */
    weft_list_move_back(&head, &it[4].link);
    int want4[] = {0, 3, 1, 4};
    CHECK(ids(&head, got, 8) == 4 && same(got, want4, 4));

    /* Draining from the front, as eviction walks an LRU. */
    int drained = 0;
    for (weft_list_t *l; (l = weft_list_first(&head));) {
        weft_list_remove(l);
        drained++;
    }
    CHECK(drained == 4 && weft_list_empty(&head));
    return check_report("util_list");
}
