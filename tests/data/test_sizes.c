/* Sizes that do not fit: a tile of struct elements whose byte count
 * overflows size_t (2^30 x 2^30 elements of 16 bytes is 2^64: 0 bytes),
 * and a matrix with more tiles a dimension (or in all) than an int counts, are
 * refused with a message naming the sizes, at creation: before, the data
 * was made with a wrapped size and the first task that wrote it crashed,
 * and the matrix got a truncated tile count. A tile of the same type and a
 * sane size still works (the control). */
#include <stdint.h>

#include "../check.h"
#include "weft/weft.h"

typedef struct pair {
    double a, b;
} pair_t;

static int fill(weft_task_t *t)
{
    pair_t *p = weft_task_ptr(t, 0);
    for (int i = 0; i < weft_task_rows(t, 0) * weft_task_cols(t, 0); i++) p[i] = (pair_t){i, -i};
    return 0;
}

static const weft_task_class_t fill_class = {.name = "fill", .body = {[WEFT_DEV_CPU] = fill}};

static void tile_overflow(weft_context_t *ctx)
{
    const int big = 1 << 30;
    weft_dtype_t t16 = weft_dtype_struct(sizeof(pair_t));
    capture_begin();
    weft_data_t *d = weft_data_new(ctx, t16, big, big, 0);
    capture_end();
    CHECK(d == NULL);
    CHECK(captured("1073741824 x 1073741824 elements of 16 bytes are more bytes than a tile can "
                   "hold"));
    /* Said once, by the call: not also as out of memory (the refusal's
     * words at the next agreement are the last line's). */
    CHECK(captured("weft_data_new: 1073741824 x 1073741824 elements"));
    CHECK(!captured("out of host memory"));
    capture_begin();
    weft_matrix_t *A = weft_matrix_new(ctx, t16, big, big, big, big, 1, 1);
    capture_end();
    CHECK(A == NULL);
    CHECK(captured(
        "weft_matrix_new: 1073741824 x 1073741824 in tiles of 1073741824 x 1073741824 makes "
        "1 x 1 tiles"));
}

static void too_many_tiles(weft_context_t *ctx)
{
    capture_begin();
    weft_matrix_t *A = weft_matrix_new(ctx, WEFT_DOUBLE, INT64_C(1) << 40, 4, 1, 4, 1, 1);
    capture_end();
    CHECK(A == NULL);
    CHECK(captured("makes 1099511627776 x 1 tiles"));
    CHECK(captured("at most 2147483647 tiles a dimension"));
    /* Each dimension fits an int, their product does not: the handles'
     * arrays overflowed (AddressSanitizer: calloc-overflow) or, where they
     * fit, the int count of a rank's tiles would. */
    capture_begin();
    A = weft_matrix_new(ctx, WEFT_DOUBLE, 2000000000, 2000000000, 1, 1, 1, 1);
    capture_end();
    CHECK(A == NULL);
    CHECK(captured("makes 2000000000 x 2000000000 tiles"));
    CHECK(captured("tiles a dimension and in all"));
}

static long long rank_calls;

static int count_rank(int i, int j, void *arg)
{
    (void)i, (void)j, (void)arg;
    rank_calls++;
    return 0;
}

/* Sizes whose tile counts do not fit are refused before the distribution
 * is walked: weft_matrix_new_dist of 6442450943 x 6442450943 in 1 x 1 tiles
 * called the rank function for 2^62 tiles (it never ended), and m + mb - 1
 * overflowed int64_t for m = INT64_MAX (UndefinedBehaviorSanitizer). */
static void huge_shapes(weft_context_t *ctx)
{
    weft_dist_t dist = {.rank = count_rank};
    capture_begin();
    weft_matrix_t *A = weft_matrix_new_dist(ctx, WEFT_DOUBLE, INT64_C(6442450943),
                                            INT64_C(6442450943), 1, 1, &dist);
    capture_end();
    CHECK(A == NULL);
    CHECK(rank_calls == 0);
    CHECK(captured("makes 6442450943 x 6442450943 tiles"));
    capture_begin();
    A = weft_matrix_new(ctx, WEFT_DOUBLE, INT64_MAX, INT64_MAX, 1, 1, 1, 1);
    capture_end();
    CHECK(A == NULL);
    CHECK(captured("tiles a dimension and in all"));
    capture_begin();
    A = weft_matrix_new_dist(ctx, WEFT_DOUBLE, INT64_MAX, 4, 4, 4, &dist);
    capture_end();
    CHECK(A == NULL);
    CHECK(rank_calls == 0);
}

static void control(weft_context_t *ctx)
{
    weft_data_t *d = weft_data_new(ctx, weft_dtype_struct(sizeof(pair_t)), 3, 2, 0);
    REQUIRE(d != NULL);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "sizes");
    CHECK(weft_insert_task(tp, &fill_class, WEFT_W, d, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    void *p = NULL;
    int64_t ld = 0;
    CHECK(weft_data_host_acquire(d, WEFT_R, &p, &ld) == 0);
    if (p) CHECK(((pair_t *)p)[5].a == 5 && ((pair_t *)p)[5].b == -5 && ld == 3);
    CHECK(weft_data_host_release(d) == 0);
    weft_taskpool_free(tp);
    weft_data_release(d);
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    tile_overflow(ctx);
    too_many_tiles(ctx);
    huge_shapes(ctx);
    control(ctx);
    CHECK(weft_fini(ctx) == 0);
    return check_report("data_sizes");
}
