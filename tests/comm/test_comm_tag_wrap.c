/* Many transfers from one peer at once under an MPI with few tags (the
 * preload's WEFT_TEST_TAG_UB, its tag check on): the data tags of rank
 * 0's receives wrap many times over, and no two receives from rank 1 may
 * be posted with one tag at once (the preload ends the job if they are).
 *
 * Each round rank 1 writes TILES tiles (512 rows, COLS columns, a message
 * a column or two with comm_mpi_piece=4K or comm_staged_chunk=4K), then a
 * task on rank 0 reads each one and checks every value. Rank 0 says how
 * many of its receives waited for tags (comm_tag_waits). Usage:
 * test_comm_tag_wrap TILES COLS ROUNDS WAITS, WAITS 1 when some must wait. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <weft/weft.h>
#include <weft/weft_stats.h>

enum { ROWS = 512 };

typedef struct {
    int tile, round;
} stamp_t;

static double value(const stamp_t *s, int64_t i, int64_t j)
{
    return (double)(i + 7 * j + 10000 * s->tile + 1000000 * (int64_t)s->round) + 0.25;
}

static int set_body(weft_task_t *t)
{
    stamp_t st, *s = &st;
    if (weft_task_value_get(t, 0, s, sizeof *s) != WEFT_SUCCESS) return 1;
    double *x = weft_task_ptr(t, 0);
    int64_t ld = weft_task_ld(t, 0);
    for (int64_t j = 0; j < weft_task_cols(t, 0); j++)
        for (int64_t i = 0; i < ROWS; i++) x[i + j * ld] = value(s, i, j);
    return 0;
}

static int check_body(weft_task_t *t)
{
    stamp_t st, *s = &st;
    if (weft_task_value_get(t, 0, s, sizeof *s) != WEFT_SUCCESS) return 1;
    const double *x = weft_task_ptr(t, 0);
    int64_t ld = weft_task_ld(t, 0), bad = 0;
    for (int64_t j = 0; j < weft_task_cols(t, 0); j++)
        for (int64_t i = 0; i < ROWS; i++) bad += x[i + j * ld] != value(s, i, j);
    if (bad)
        printf("test_comm_tag_wrap: tile %d round %d: %lld wrong values on rank 0\n", s->tile,
               s->round, (long long)bad);
    return bad ? 1 : 0;
}

static const weft_task_class_t set_class = {
    .name = "set", .body = {[WEFT_DEV_CPU] = set_body, [WEFT_DEV_EMU] = set_body}};
static const weft_task_class_t check_class = {
    .name = "check", .body = {[WEFT_DEV_CPU] = check_body, [WEFT_DEV_EMU] = check_body}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    int me = weft_rank(ctx);
    if (weft_nranks(ctx) != 2 || argc != 5) {
        fprintf(stderr, "usage: mpiexec -n 2 test_comm_tag_wrap TILES COLS ROUNDS WAITS\n");
        weft_fini(ctx);
        return 1;
    }
    int ntiles = atoi(argv[1]), cols = atoi(argv[2]), rounds = atoi(argv[3]);
    int want_waits = atoi(argv[4]);
    weft_data_t **x = calloc((size_t)ntiles, sizeof *x);
    int rc = x ? WEFT_SUCCESS : WEFT_ERR_NOMEM;
    for (int k = 0; k < ntiles && rc == WEFT_SUCCESS; k++)
        if (!(x[k] = weft_data_new(ctx, WEFT_DOUBLE, ROWS, cols, 1))) rc = WEFT_ERR_NOMEM;
    weft_taskpool_t *tp = rc == WEFT_SUCCESS ? weft_taskpool_new(ctx, "tag wrap") : NULL;
    if (!tp) rc = WEFT_ERR_NOMEM;
    for (int r = 0; r < rounds && rc == WEFT_SUCCESS; r++) {
        for (int k = 0; k < ntiles && rc == WEFT_SUCCESS; k++) {
            stamp_t s = {k, r};
            rc = weft_insert_task(tp, &set_class, WEFT_W, x[k], WEFT_VALUE, &s, sizeof s,
                                  WEFT_ON_RANK, 1, 0);
        }
        /* All of a round's reads at once: their transfers overlap. */
        for (int k = 0; k < ntiles && rc == WEFT_SUCCESS; k++) {
            stamp_t s = {k, r};
            rc = weft_insert_task(tp, &check_class, WEFT_R, x[k], WEFT_VALUE, &s, sizeof s,
                                  WEFT_ON_RANK, 0, 0);
        }
    }
    int wrc = tp ? weft_taskpool_wait(tp) : rc;
    weft_stats_t st = {0};
    weft_stats_get(ctx, &st);
    int64_t want_bytes = (int64_t)rounds * ntiles * ROWS * cols * (int64_t)sizeof(double);
    int ok = rc == WEFT_SUCCESS && wrc == WEFT_SUCCESS &&
             (me == 1 || (st.net_bytes_received == want_bytes &&
                          (st.comm_tag_waits > 0) == (want_waits != 0)));
    printf("test_comm_tag_wrap rank %d: %s: insert %d, wait %d, %lld bytes received, %lld tag "
           "waits\n",
           me, ok ? "ok" : "FAILED", rc, wrc, (long long)st.net_bytes_received,
           (long long)st.comm_tag_waits);
    if (tp) weft_taskpool_free(tp);
    for (int k = 0; x && k < ntiles; k++)
        if (x[k]) weft_data_release(x[k]);
    free(x);
    int frc = weft_fini(ctx);
    return ok && frc == WEFT_SUCCESS ? 0 : 1;
}
