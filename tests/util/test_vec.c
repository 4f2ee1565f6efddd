/* util/vec.h: growth from the owner's first capacity by doubling, element
 * copies of any size, ordered and unordered removal, reuse after clear and
 * fini. */
#include <stdint.h>

#include "../check.h"
#include "util/vec.h"
#include "weft/weft.h"

typedef struct pair {
    int64_t key;
    double value;
} pair_t;

static void test_growth(void)
{
    weft_vec_t v;
    weft_vec_init(&v, sizeof(int), 4);
    CHECK(v.n == 0 && v.cap == 0 && v.data == NULL);
    size_t caps_seen[8], ncaps = 0, last_cap = 0;
    for (int i = 0; i < 100; i++) {
        CHECK(weft_vec_push(&v, &i) == WEFT_SUCCESS);
        if (v.cap != last_cap && ncaps < 8) caps_seen[ncaps++] = last_cap = v.cap;
    }
    CHECK(v.n == 100);
    /* 4, 8, 16, 32, 64, 128: the first capacity, then doubling. */
    CHECK(ncaps == 6);
    for (size_t k = 0; k < ncaps; k++) CHECK(caps_seen[k] == (size_t)4 << k);
    long sum = 0;
    for (size_t i = 0; i < v.n; i++) sum += *(int *)weft_vec_at(&v, i);
    CHECK(sum == 99 * 100 / 2);
    weft_vec_fini(&v);
    CHECK(v.n == 0 && v.cap == 0 && v.data == NULL);
}

static void test_reserve(void)
{
    weft_vec_t v;
    weft_vec_init(&v, sizeof(pair_t), 0); /* 0 means 1 */
    CHECK(weft_vec_reserve(&v, 0) == WEFT_SUCCESS && v.cap == 0);
    CHECK(weft_vec_reserve(&v, 5) == WEFT_SUCCESS && v.cap == 8);
    void *before = v.data;
    for (int i = 0; i < 8; i++) {
        pair_t p = {.key = i, .value = i * 0.5};
        CHECK(weft_vec_push(&v, &p) == WEFT_SUCCESS);
    }
    CHECK(v.data == before && v.cap == 8); /* reserved room: no growth */
    pair_t *p = weft_vec_at(&v, 7);
    CHECK(p->key == 7 && p->value == 3.5);
    weft_vec_fini(&v);
}

static void test_remove(void)
{
    weft_vec_t v;
    weft_vec_init(&v, sizeof(int), 8);
    for (int i = 0; i < 6; i++) CHECK(weft_vec_push(&v, &i) == WEFT_SUCCESS);
    weft_vec_remove(&v, 1); /* 0 2 3 4 5 */
    CHECK(v.n == 5);
    int *a = v.data;
    CHECK(a[0] == 0 && a[1] == 2 && a[2] == 3 && a[3] == 4 && a[4] == 5);
    weft_vec_swap_remove(&v, 1); /* 0 5 3 4 */
    CHECK(v.n == 4 && a[0] == 0 && a[1] == 5 && a[2] == 3 && a[3] == 4);
    weft_vec_swap_remove(&v, 3); /* the last: 0 5 3 */
    CHECK(v.n == 3 && a[2] == 3);
    weft_vec_remove(&v, 2); /* the last, ordered: 0 5 */
    CHECK(v.n == 2 && a[0] == 0 && a[1] == 5);
    size_t cap = v.cap;
    weft_vec_clear(&v);
    CHECK(v.n == 0 && v.cap == cap && v.data == a);
    int x = 42;
    CHECK(weft_vec_push(&v, &x) == WEFT_SUCCESS && *(int *)weft_vec_at(&v, 0) == 42);
    weft_vec_fini(&v);
    /* After fini the vector starts again from its first capacity. */
    CHECK(weft_vec_push(&v, &x) == WEFT_SUCCESS && v.cap == 8 && v.n == 1);
    weft_vec_fini(&v);
}

/* The owner's buffer serves first and is never freed; growth copies it. */
static void test_inline(void)
{
    int buf[4];
    weft_vec_t v;
    weft_vec_init_inline(&v, sizeof(int), buf, 4);
    CHECK(v.data == buf && v.cap == 4 && v.n == 0);
    for (int i = 0; i < 4; i++) CHECK(weft_vec_push(&v, &i) == WEFT_SUCCESS);
    CHECK(v.data == buf && v.cap == 4 && buf[3] == 3); /* no allocation yet */
    int five = 4;
    CHECK(weft_vec_push(&v, &five) == WEFT_SUCCESS);
    CHECK(v.data != buf && v.cap == 8 && v.n == 5);
    int *a = v.data;
    CHECK(a[0] == 0 && a[1] == 1 && a[2] == 2 && a[3] == 3 && a[4] == 4);
    weft_vec_fini(&v); /* frees the copy, not buf */
    CHECK(v.data == buf && v.cap == 4 && v.n == 0);
    CHECK(weft_vec_push(&v, &five) == WEFT_SUCCESS && v.data == buf && buf[0] == 4);
    weft_vec_fini(&v);
}

int main(void)
{
    test_growth();
    test_reserve();
    test_remove();
    test_inline();
    return check_report("util_vec");
}
