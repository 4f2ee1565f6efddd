/* Initial contents of NEW data (issue 15 item 7, weft_data_set_init):
 * accumulators read before any write start from zeros or from a user
 * function, on the rank that reads them first (no transfer for that), on
 * the host or staged to a device. On R ranks, NA accumulators of 3 x 2
 * doubles, accumulator k owned by rank k % R, half zero-filled, half from
 * init_fn: first "mix" tasks (acc[k] += 2 acc[k+1], the read of acc[k+1]
 * before its first write), then NADD "add" tasks each (acc[k] += v).
 * Checked against a sequential computation of the same formulas, with the
 * per-rank task and activation counts; a read acquire of an accumulator no
 * task touched gives its initial contents. Bad input: an initialiser on
 * registered data, on data already written, a NEW data read without one,
 * a write outside tasks on the owner of a NEW data with an initialiser. */
#include <string.h>

#include "../check.h"
#include "weft/weft.h"

#define NA 4
#define NADD 10
#define ROWS 3
#define COLS 2

/* The user's initialiser: element (i, j) = base + i + 10 j. */
static void init_fn(void *ptr, int64_t ld, int rows, int cols, void *arg)
{
    double base = *(const double *)arg;
    for (int j = 0; j < cols; j++)
        for (int i = 0; i < rows; i++) ((double *)ptr)[i + j * ld] = base + i + 10 * j;
}

static double initial(int k, int i, int j) { return k % 2 ? 100.0 * k + i + 10 * j : 0; }

/* flow 0: x (R), flow 1: y (RW): y += 2 x */
static int mix(weft_task_t *t)
{
    const double *x = weft_task_ptr(t, 0);
    double *y = weft_task_ptr(t, 1);
    int64_t lx = weft_task_ld(t, 0), ly = weft_task_ld(t, 1);
    for (int j = 0; j < COLS; j++)
        for (int i = 0; i < ROWS; i++) y[i + j * ly] += 2 * x[i + j * lx];
    return 0;
}

/* flow 0: y (RW), value 0: v: y += v */
static int add(weft_task_t *t)
{
    double v;
    if (weft_task_value_get(t, 0, &v, sizeof v) != 0) return -1;
    double *y = weft_task_ptr(t, 0);
    for (int j = 0; j < COLS; j++)
        for (int i = 0; i < ROWS; i++) y[i + j * weft_task_ld(t, 0)] += v;
    return 0;
}

/* flow 0: x (R), flow 1: y (W): y[0] = the last element of x */
static int take(weft_task_t *t)
{
    const double *x = weft_task_ptr(t, 0);
    *(double *)weft_task_ptr(t, 1) = x[weft_task_rows(t, 0) - 1];
    return 0;
}

static const weft_task_class_t take_class = {.name = "take", .body = {[WEFT_DEV_CPU] = take}};
static const weft_task_class_t mix_class = {.name = "mix", .body = {[WEFT_DEV_CPU] = mix}};
static const weft_task_class_t add_class = {.name = "add", .body = {[WEFT_DEV_CPU] = add}};

/* The same formulas, in order, on plain arrays. */
static void reference(double ref[NA][ROWS * COLS])
{
    for (int k = 0; k < NA; k++)
        for (int j = 0; j < COLS; j++)
            for (int i = 0; i < ROWS; i++) ref[k][i + j * ROWS] = initial(k, i, j);
    for (int k = 0; k < NA; k++)
        for (int e = 0; e < ROWS * COLS; e++) ref[k][e] += 2 * ref[(k + 1) % NA][e];
    for (int k = 0; k < NA; k++)
        for (int v = 1; v <= NADD; v++)
            for (int e = 0; e < ROWS * COLS; e++) ref[k][e] += v;
}

static int run(weft_context_t *ctx, weft_data_t **acc)
{
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "accumulate");
    int rc = 0;
    for (int k = 0; k < NA; k++)
        rc |= weft_insert_task(tp, &mix_class, WEFT_R, acc[(k + 1) % NA], WEFT_RW, acc[k], 0);
    for (int k = 0; k < NA; k++)
        for (int v = 1; v <= NADD; v++) {
            double x = v;
            rc |= weft_insert_task(tp, &add_class, WEFT_RW, acc[k], WEFT_VALUE, &x, sizeof x, 0);
        }
    int w = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    return rc ? rc : w;
}

/* Every rank makes the same bad calls and gets the same errors. */
static void bad_input(weft_context_t *ctx, weft_data_t *written)
{
    double x = 0;
    weft_data_t *reg = weft_data_register(ctx, WEFT_DOUBLE, &x, 1, 1, 1, 0);
    weft_data_t *bare = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "bad");
    capture_begin();
    CHECK(weft_data_set_init(reg, NULL, NULL) == WEFT_ERR_INVALID);
    CHECK(weft_data_set_init(written, NULL, NULL) == WEFT_ERR_INVALID);
    CHECK(weft_insert_task(tp, &add_class, WEFT_RW, bare, WEFT_VALUE, &x, sizeof x, 0) ==
          WEFT_ERR_INVALID);
    capture_end();
    CHECK(captured("is not a NEW data that no task wrote: it has contents already"));
    CHECK(captured("before any task wrote it (give it initial contents with weft_data_set_init)"));
    CHECK(weft_taskpool_wait(tp) == 0);
    weft_taskpool_free(tp);
    weft_data_release(reg);
    weft_data_release(bare);
}

/* A write outside tasks on the owner of a NEW data with an initialiser:
 * on several ranks the others make the initial contents themselves and
 * would never see it, so it is refused (it was kept on the owner alone:
 * the other ranks' tasks read zeros, and a tile past the eager limit that
 * the owner then sent waited for a receive no rank posted, a hang); on
 * one rank it stands. Then a task on every rank reads the data. */
static void owner_write(weft_context_t *ctx)
{
    enum { BIG = 20000 }; /* 160 KB: past the eager limit */
    int rank = weft_rank(ctx), nranks = weft_nranks(ctx), owner = nranks - 1;
    weft_data_t *d = weft_data_new(ctx, WEFT_DOUBLE, BIG, 1, owner), *out[64];
    REQUIRE(nranks <= 64 && d && weft_data_set_init(d, NULL, NULL) == 0);
    for (int r = 0; r < nranks; r++) out[r] = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, r);
    if (rank == owner) {
        capture_begin();
        double *p = weft_data_host_ptr(d, NULL);
        capture_end();
        if (nranks > 1) {
            void *q = NULL;
            static double dev[BIG];
            capture_begin();
            CHECK(p == NULL);
            CHECK(weft_data_host_acquire(d, WEFT_W, &q, NULL) == WEFT_ERR_INVALID);
            CHECK(weft_ndevices(ctx) == 0 ||
                  weft_data_register_device(d, 1, dev, BIG, 1) == WEFT_ERR_INVALID);
            capture_end();
            CHECK(captured("is a NEW data whose initial contents (weft_data_set_init) each rank "
                           "that reads it makes itself: a write outside tasks on this rank would "
                           "not reach the others"));
        }
        for (int i = 0; p && i < BIG; i++) p[i] = 7;
    }
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "owner write");
    for (int r = 0; r < nranks; r++)
        CHECK(weft_insert_task(tp, &take_class, WEFT_R, d, WEFT_W | WEFT_AFFINITY, out[r], 0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    weft_taskpool_free(tp);
    double *got = NULL;
    REQUIRE(weft_data_host_acquire(out[rank], WEFT_R, (void **)&got, NULL) == 0);
    CHECK(*got == (nranks > 1 ? 0.0 : 7.0));
    CHECK(weft_data_host_release(out[rank]) == 0);
    for (int r = 0; r < nranks; r++) weft_data_release(out[r]);
    weft_data_release(d);
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 2;
    int rank = weft_rank(ctx), nranks = weft_nranks(ctx);
    static double base[NA + 1];
    weft_data_t *acc[NA + 1];
    for (int k = 0; k <= NA; k++) {
        acc[k] = weft_data_new(ctx, WEFT_DOUBLE, ROWS, COLS, k % nranks);
        base[k] = 100.0 * k;
        REQUIRE(weft_data_set_init(acc[k], k % 2 ? init_fn : NULL, &base[k]) == 0);
    }
    weft_stats_t s0, s1;
    CHECK(weft_stats_get(ctx, &s0) == 0);
    CHECK(run(ctx, acc) == 0);
    CHECK(weft_stats_get(ctx, &s1) == 0);
    double ref[NA][ROWS * COLS];
    reference(ref);
    int owned = 0;
    for (int k = 0; k <= NA; k++) {
        if (k % nranks != rank) continue;
        double *p = NULL;
        int64_t ld = 0;
        REQUIRE(weft_data_host_acquire(acc[k], WEFT_R, (void **)&p, &ld) == 0);
        for (int j = 0; j < COLS; j++)
            for (int i = 0; i < ROWS; i++)
                CHECK(p[i + j * ld] == (k < NA ? ref[k][i + j * ROWS] : initial(k, i, j)));
        CHECK(weft_data_host_release(acc[k]) == 0);
        owned += k < NA;
    }
    /* Only mix(NA-1) reads a written accumulator, acc[0], on acc[NA-1]'s owner. */
    int64_t sends = rank == 0 && (NA - 1) % nranks != 0;
    CHECK(s1.tasks_run - s0.tasks_run == owned * (1 + NADD));
    CHECK(s1.activations_sent - s0.activations_sent == sends);
    bad_input(ctx, acc[0]);
    owner_write(ctx);
    for (int k = 0; k <= NA; k++) weft_data_release(acc[k]);
    CHECK(weft_fini(ctx) == 0);
    return check_report("test_data_init");
}
