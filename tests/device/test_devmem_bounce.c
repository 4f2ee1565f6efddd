/* Two full emulated devices a rank, tasks with a body for the device only,
 * tiles moving between two ranks: a task that waited its patience for
 * room on one device (copies held by sends the peer had not fetched) went
 * to the other, waited there as long, came back to the first and so on,
 * for ever (a stranger's random graph hung 13 of 13 runs). A task goes to
 * each device once now: the run ends, with the right tiles or with the
 * out-of-memory failure named (docs/SEMANTICS.md section 5).
 *
 * Usage: test_devmem_bounce [weft parameters]. NT tiles of R doubles, tile
 * i owned by rank i % nranks, filled with i + k / 1000; then STEPS tasks
 * y[c] += x[a] / 2 + x[b] / 4 for a, b, c drawn by rand() from seed 12,
 * computed here too and compared on each tile's owner when the wait
 * succeeds. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../check.h"
#include "weft/weft.h"

enum { NT = 12, R = 64, STEPS = 300 };

static int update(weft_task_t *t)
{
    double *y = weft_task_ptr(t, 0);
    const double *a = weft_task_ptr(t, 1);
    const double *b = weft_task_nflows(t) == 3 ? weft_task_ptr(t, 2) : a;
    for (int k = 0; k < R; k++) y[k] += 0.5 * a[k] + 0.25 * b[k];
    return 0;
}

static int fill(weft_task_t *t)
{
    int i;
    if (weft_task_value_get(t, 0, &i, sizeof i) != 0) return -1;
    double *y = weft_task_ptr(t, 0);
    for (int k = 0; k < R; k++) y[k] = i + k * 1e-3;
    return 0;
}

static const weft_task_class_t update_class = {.name = "update", .body = {[WEFT_DEV_EMU] = update}};
static const weft_task_class_t fill_class = {
    .name = "fill", .body = {[WEFT_DEV_CPU] = fill, [WEFT_DEV_EMU] = fill}};

/* Each tile this rank owns against ref; the count of wrong ones. */
static int wrong_tiles(weft_context_t *ctx, weft_data_t **x, const double *ref)
{
    int bad = 0;
    for (int i = 0; i < NT; i++) {
        if (weft_data_owner(x[i]) != weft_rank(ctx)) continue;
        void *p;
        int64_t ld;
        if (weft_data_host_acquire(x[i], WEFT_R, &p, &ld) != 0) {
            bad++;
            continue;
        }
        for (int k = 0; k < R; k++)
            if (fabs(((double *)p)[k] - ref[i * R + k]) > 1e-9 * fabs(ref[i * R + k])) {
                bad++;
                break;
            }
        CHECK(weft_data_host_release(x[i]) == 0);
    }
    return bad;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    int nranks = weft_nranks(ctx);
    weft_data_t *x[NT];
    static double ref[NT * R];
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "bounce");
    for (int i = 0; i < NT; i++) {
        x[i] = weft_data_new(ctx, WEFT_DOUBLE, R, 1, i % nranks);
        REQUIRE(x[i] != NULL);
        CHECK(weft_insert_task(tp, &fill_class, WEFT_W | WEFT_AFFINITY, x[i], WEFT_VALUE, &i,
                               sizeof i, 0) == 0);
        for (int k = 0; k < R; k++) ref[i * R + k] = i + k * 1e-3;
    }
    /* The C library's draws, alike on every rank: seed 12 made the
     * sequence that bounced (others did less often). */
    srand(12);
    for (int n = 0; n < STEPS; n++) {
        int a = rand() % NT, b = rand() % NT, c = rand() % NT;
        if (c == a || c == b) c = (c + 1) % NT;
        if (c == a || c == b) continue;
        if (a == b)
            CHECK(weft_insert_task(tp, &update_class, WEFT_RW | WEFT_AFFINITY, x[c], WEFT_R, x[a],
                                   0) == 0);
        else
            CHECK(weft_insert_task(tp, &update_class, WEFT_RW | WEFT_AFFINITY, x[c], WEFT_R, x[a],
                                   WEFT_R, x[b], 0) == 0);
        for (int k = 0; k < R; k++) ref[c * R + k] += 0.5 * ref[a * R + k] + 0.25 * ref[b * R + k];
    }
    int rc = weft_taskpool_wait(tp);
    printf("test_devmem_bounce rank %d: wait returned %d (%s)\n", weft_rank(ctx), rc,
           weft_strerror(rc));
    CHECK(rc == WEFT_SUCCESS || rc == WEFT_ERR_TASK);
    if (rc == WEFT_SUCCESS) CHECK(wrong_tiles(ctx, x, ref) == 0);
    weft_taskpool_free(tp);
    for (int i = 0; i < NT; i++) weft_data_release(x[i]);
    int frc = weft_fini(ctx);
    CHECK(frc == rc);
    return check_report("devmem_bounce");
}
