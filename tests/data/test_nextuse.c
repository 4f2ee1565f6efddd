/* Unit test of a data's pending uses (src/data/nextuse.c): the ring grows
 * across its wrap, tasks finish out of order, and the next use is the one
 * a ready heap would run first (higher priority, then earlier insertion);
 * against a plain list, thousands of random pushes, drops (far from the
 * head too: they are marked, and the head passes them) and queries. */
#include "data/nextuse.h"

#include <stdlib.h>

#include "../check.h"

static void push(weft_nextuse_t *u, uint64_t seq, int prio)
{
    if (!weft_nextuse_has_room_locked(u)) {
        int cap = u->cap ? u->cap * 2 : 2;
        free(weft_nextuse_grow_locked(u, malloc(sizeof(weft_use_t) * (size_t)cap), cap));
    }
    weft_nextuse_push_locked(u, (weft_use_t){.seq = seq, .priority = prio, .device = -1});
}

/* The uses still pending: the ring's slots but the dropped ones. */
static int pending(const weft_nextuse_t *u)
{
    int n = 0;
    for (int i = 0; i < u->n; i++) n += !u->use[(u->head + i) % u->cap].dropped;
    return n;
}

static void test_order(void)
{
    weft_nextuse_t u = {0};
    weft_use_t none = weft_nextuse_first_locked(&u, 1);
    CHECK(none.seq == WEFT_USE_NONE.seq && none.priority == WEFT_USE_NONE.priority);
    push(&u, 10, 1);
    push(&u, 11, 5);
    push(&u, 12, 5);
    CHECK(weft_nextuse_first_locked(&u, 1).seq == 11); /* higher priority first */
    push(&u, 13, 9);                                   /* sooner than the one kept */
    CHECK(weft_nextuse_first_locked(&u, 1).seq == 13);
    weft_nextuse_drop_locked(&u, 13);
    weft_nextuse_drop_locked(&u, 11); /* out of order */
    CHECK(weft_nextuse_first_locked(&u, 1).seq == 12);
    weft_nextuse_drop_locked(&u, 99); /* absent: nothing */
    weft_nextuse_drop_locked(&u, 11); /* dropped already: nothing */
    CHECK(pending(&u) == 2);
    weft_nextuse_drop_locked(&u, 12);
    weft_nextuse_drop_locked(&u, 10);
    CHECK(u.n == 0);
    CHECK(weft_use_after(WEFT_USE_NONE, (weft_use_t){.seq = 1u << 30, .priority = -5}));
    CHECK(!weft_use_after((weft_use_t){.seq = 3, .priority = 0},
                          (weft_use_t){.seq = 4, .priority = 0, .device = -1}));
    /* Uses by tasks homed on another device do not count for this one. */
    weft_nextuse_push_locked(&u, (weft_use_t){.seq = 20, .priority = 9, .device = 2});
    push(&u, 21, 0);
    CHECK(weft_nextuse_first_locked(&u, 1).seq == 21);
    CHECK(weft_nextuse_first_locked(&u, 2).seq == 20);
    weft_nextuse_fini(&u);
}

/* A reader at seq waits for a version still to come while a task inserted
 * before it writes the data (prefetch ahead fetches only final versions). */
static void test_writer_before(void)
{
    weft_nextuse_t u = {0};
    push(&u, 5, 0);
    free(weft_nextuse_grow_locked(&u, malloc(sizeof(weft_use_t) * 8), 8));
    weft_nextuse_push_locked(&u, (weft_use_t){.seq = 7, .priority = 0, .device = 1, .writes = 1});
    push(&u, 9, 3);
    CHECK(!weft_nextuse_writer_before_locked(&u, 5)); /* only a reader before */
    CHECK(!weft_nextuse_writer_before_locked(&u, 7)); /* its own write does not count */
    CHECK(weft_nextuse_writer_before_locked(&u, 9));
    weft_nextuse_drop_locked(&u, 7); /* the writer ended: its version is final */
    CHECK(!weft_nextuse_writer_before_locked(&u, 9));
    weft_nextuse_fini(&u);
}

/* A graph numbers its tasks class by class and its transfers last: a
 * reader may come after a writer numbered after it (a receive landing the
 * version it reads). Such uses do not order by number: any pending write
 * comes before (ptg_devahead_r2 fetched the version before a landing). */
static void test_writer_unordered(void)
{
    weft_nextuse_t u = {0};
    free(weft_nextuse_grow_locked(&u, malloc(sizeof(weft_use_t) * 8), 8));
    weft_nextuse_push_locked(&u, (weft_use_t){.seq = 3, .device = 1, .unordered = 1});
    weft_nextuse_push_locked(&u, (weft_use_t){.seq = 4, .device = 1, .writes = 1});
    weft_nextuse_push_locked(&u, (weft_use_t){.seq = 10, .writes = 1, .unordered = 1});
    CHECK(weft_nextuse_writer_before_locked(&u, 3)); /* the receive at 10, or 4 */
    weft_nextuse_drop_locked(&u, 10);
    CHECK(weft_nextuse_writer_before_locked(&u, 3));  /* 4 too: the reader is unordered */
    CHECK(!weft_nextuse_writer_before_locked(&u, 4)); /* its own write does not count */
    CHECK(weft_nextuse_writer_before_locked(&u, 2));  /* a use not listed: any write counts */
    weft_nextuse_drop_locked(&u, 4);
    CHECK(!weft_nextuse_writer_before_locked(&u, 3)); /* no write pending: final */
    weft_nextuse_fini(&u);
}

/* Drops at the head while pushing moves the ring's head around; growing
 * then must keep the order. */
static void test_wrap(void)
{
    weft_nextuse_t u = {0};
    uint64_t next = 0, oldest = 0;
    for (int round = 0; round < 200; round++) {
        push(&u, next++, 0);
        push(&u, next++, 0);
        weft_nextuse_drop_locked(&u, oldest++);
        CHECK(weft_nextuse_first_locked(&u, 1).seq == oldest);
    }
    CHECK(u.n == 200);
    int sorted = 1;
    for (int i = 1; i < u.n; i++)
        sorted &= u.use[(u.head + i) % u.cap].seq == u.use[(u.head + i - 1) % u.cap].seq + 1;
    CHECK(sorted);
    weft_nextuse_fini(&u);
    CHECK(u.use == NULL && u.n == 0);
}

/* Random pushes (increasing numbers, priorities 0-3, devices -1, 1, 2),
 * drops anywhere (some absent, some twice) and queries, each answer
 * compared with a walk of a plain list of the pending uses. */
enum { MODEL_MAX = 4096 };
static weft_use_t model[MODEL_MAX];
static int nmodel;

static weft_use_t model_first(int device)
{
    weft_use_t first = WEFT_USE_NONE;
    for (int i = 0; i < nmodel; i++)
        if ((model[i].device < 0 || model[i].device == device) && weft_use_after(first, model[i]))
            first = model[i];
    return first;
}

static int model_writer_before(uint64_t seq)
{
    int ordered = 0, later_write = 0;
    for (int i = 0; i < nmodel; i++) {
        if (model[i].seq == seq) {
            ordered = !model[i].unordered;
            continue;
        }
        if (!model[i].writes) continue;
        if (model[i].seq < seq || model[i].unordered) return 1;
        later_write = 1;
    }
    return later_write && !ordered;
}

static void test_random(void)
{
    weft_nextuse_t u = {0};
    uint64_t next = 1;
    srand(7);
    for (int step = 0; step < 20000; step++) {
        int op = rand() % 8;
        if (op < 3 && nmodel < MODEL_MAX) {
            weft_use_t x = {.seq = next++,
                            .priority = rand() % 4,
                            .device = rand() % 3 - (rand() % 2),
                            .writes = rand() % 5 == 0,
                            .unordered = rand() % 9 == 0};
            if (x.device == 0) x.device = -1;
            if (!weft_nextuse_has_room_locked(&u)) {
                int cap = u.cap ? u.cap * 2 : 2;
                free(weft_nextuse_grow_locked(&u, malloc(sizeof(weft_use_t) * (size_t)cap), cap));
            }
            weft_nextuse_push_locked(&u, x);
            model[nmodel++] = x;
        } else if (op < 6 && nmodel > 0) {
            /* Mostly near the head, often far from it, now and then absent. */
            int i = rand() % 3 == 0 ? rand() % nmodel : rand() % (nmodel < 4 ? nmodel : 4);
            uint64_t seq = rand() % 20 == 0 ? next + 5 : model[i].seq;
            weft_nextuse_drop_locked(&u, seq);
            if (seq != next + 5) {
                for (int j = i; j + 1 < nmodel; j++) model[j] = model[j + 1];
                nmodel--;
                weft_nextuse_drop_locked(&u, seq); /* twice: nothing more */
            }
        } else if (op == 6) {
            int device = 1 + rand() % 2;
            weft_use_t got = weft_nextuse_first_locked(&u, device), want = model_first(device);
            CHECK(got.seq == want.seq && got.priority == want.priority);
        } else if (nmodel > 0) {
            uint64_t seq = rand() % 4 == 0 ? next : model[rand() % nmodel].seq;
            CHECK(weft_nextuse_writer_before_locked(&u, seq) == model_writer_before(seq));
        }
        CHECK(pending(&u) == nmodel);
    }
    while (nmodel > 0) weft_nextuse_drop_locked(&u, model[--nmodel].seq); /* newest first */
    CHECK(u.n == 0);
    weft_nextuse_fini(&u);
}

int main(void)
{
    test_random();
    test_order();
    test_wrap();
    test_writer_before();
    test_writer_unordered();
    return check_report("data_nextuse");
}
