/* The comm thread on a core it shares with the worker (2 ranks, cores=1):
 * while a task runs there it waits comm_nap_us between polls instead of
 * yielding, and still answers a peer during that task. Rank 0 writes a
 * rendezvous tile x (P), then computes for LONG_S seconds (L); rank 1
 * reads x (C). Rank 0's engine must answer rank 1's GET while L runs, so C
 * runs long before L ends; with comm_nap_us > 0 rank 0 counts naps, with
 * comm_nap_us=0 none.
 *
 * held: rank 1 inserts C (so its GET leaves) HELD_DELAY_S into L, by when
 * rank 0's naps would have grown to comm_nap_max_us (the test gives
 * 100 ms); while its send waits for that GET they stay comm_nap_us, so C
 * runs within HELD_MAX_S of its insertion in all HELD_ROUNDS rounds but
 * one at most (a loaded machine may hold one). With naps grown, about
 * half the rounds took 30-70 ms.
 *
 * Usage: test_comm_nap naps|nonaps|held [--weft-...] */
#include <string.h>
#include <time.h>

#include "../check.h"
#include "weft/weft.h"

#define LONG_S 1.5
#define HELD_LONG_S 0.8
#define HELD_DELAY_S 0.4
#define HELD_MAX_S 0.02
#define HELD_ROUNDS 6
#define ROWS 200 /* 320 KB: past comm_eager_limit, so a GET goes back to rank 0 */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double c_ran_at; /* rank 1: when C ran */
static double long_s = LONG_S;

static int produce(weft_task_t *t)
{
    double *a = weft_task_ptr(t, 0);
    for (int i = 0; i < ROWS * ROWS; i++) a[i] = i;
    return 0;
}

/* Computes (never sleeps) for LONG_S seconds, as a kernel would. */
static int compute(weft_task_t *t)
{
    volatile double s = 0;
    for (double t0 = now_s(); now_s() - t0 < long_s;)
        for (int i = 0; i < 1000; i++) s += i;
    return 0;
}

static int consume(weft_task_t *t)
{
    const double *a = weft_task_ptr(t, 0);
    c_ran_at = now_s();
    return a[ROWS * ROWS - 1] == ROWS * ROWS - 1 ? 0 : 1;
}

static const weft_task_class_t p_cls = {.name = "produce", .body = {[WEFT_DEV_CPU] = produce}};
static const weft_task_class_t l_cls = {.name = "compute", .body = {[WEFT_DEV_CPU] = compute}};
static const weft_task_class_t c_cls = {.name = "consume", .body = {[WEFT_DEV_CPU] = consume}};

/* held: each round, rank 1 sleeps into rank 0's L before it inserts C,
 * and C must run soon after. */
static void held_rounds(weft_context_t *ctx, weft_data_t *x, weft_data_t *y, weft_data_t *z)
{
    int rank = weft_rank(ctx);
    long_s = HELD_LONG_S;
    int slow = 0;
    for (int r = 0; r < HELD_ROUNDS; r++) {
        weft_taskpool_t *tp = weft_taskpool_new(ctx, "held");
        CHECK(weft_insert_task(tp, &p_cls, WEFT_W | WEFT_AFFINITY, x, WEFT_PRIORITY, 2, 0) >= 0);
        CHECK(weft_insert_task(tp, &l_cls, WEFT_W | WEFT_AFFINITY, y, WEFT_PRIORITY, 1, 0) >= 0);
        if (rank == 1) nanosleep(&(struct timespec){.tv_nsec = (long)(HELD_DELAY_S * 1e9)}, NULL);
        double t_ins = now_s();
        CHECK(weft_insert_task(tp, &c_cls, WEFT_R, x, WEFT_W | WEFT_AFFINITY, z, 0) >= 0);
        CHECK(weft_taskpool_wait(tp) == WEFT_SUCCESS);
        if (rank == 1) {
            printf("test_comm_nap rank 1: round %d: consumer ran %.1f ms after its insertion\n", r,
                   (c_ran_at - t_ins) * 1e3);
            CHECK(c_ran_at > t_ins);
            slow += c_ran_at - t_ins >= HELD_MAX_S;
        }
        weft_taskpool_free(tp);
    }
    CHECK(slow <= 1);
}

/* One round: C runs while L does; naps counted on rank 0 as asked. */
static void one_round(weft_context_t *ctx, weft_data_t *x, weft_data_t *y, weft_data_t *z,
                      int want_naps)
{
    int rank = weft_rank(ctx);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "nap");
    double t0 = now_s();
    CHECK(weft_insert_task(tp, &p_cls, WEFT_W | WEFT_AFFINITY, x, WEFT_PRIORITY, 2, 0) >= 0);
    CHECK(weft_insert_task(tp, &l_cls, WEFT_W | WEFT_AFFINITY, y, WEFT_PRIORITY, 1, 0) >= 0);
    CHECK(weft_insert_task(tp, &c_cls, WEFT_R, x, WEFT_W | WEFT_AFFINITY, z, 0) >= 0);
    CHECK(weft_taskpool_wait(tp) == WEFT_SUCCESS);
    weft_stats_t st;
    CHECK(weft_stats_get(ctx, &st) == WEFT_SUCCESS);
    if (rank == 0) {
        printf("test_comm_nap rank 0: %lld naps\n", (long long)st.comm_naps);
        CHECK(want_naps ? st.comm_naps > 0 : st.comm_naps == 0);
    } else {
        printf("test_comm_nap rank 1: consumer ran %.3f s after the start\n", c_ran_at - t0);
        CHECK(c_ran_at > t0 && c_ran_at - t0 < LONG_S * 2 / 3);
    }
    weft_taskpool_free(tp);
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL && weft_nranks(ctx) == 2 && argc == 2);
    int rank = weft_rank(ctx);
    weft_data_t *x = weft_data_new(ctx, WEFT_DOUBLE, ROWS, ROWS, 0);
    weft_data_t *y = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, 0);
    weft_data_t *z = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, 1);
    if (strcmp(argv[1], "held") == 0)
        held_rounds(ctx, x, y, z);
    else
        one_round(ctx, x, y, z, strcmp(argv[1], "naps") == 0);
    weft_data_release(x);
    weft_data_release(y);
    weft_data_release(z);
    weft_fini(ctx);
    return check_report(rank == 0 ? "test_comm_nap rank 0" : "test_comm_nap rank 1");
}
