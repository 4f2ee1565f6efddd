/* A NEW data whose first writer failed has no version on any rank, and
 * every rank treats it alike in the next taskpool, as one rank alone does:
 * a task that reads it is refused at insertion on every rank, saying why,
 * and
 * weft_data_set_init is accepted, after which a reader gets the initial
 * contents. Before, on several ranks the inference had counted the failed
 * write: set_init was refused ("has contents already"), a reader was
 * accepted and failed at run time, by an "internal error" on a rank it was
 * sent to; on one rank, set_init was accepted but the reader's insertion
 * returned "out of host memory" (the failed writer's empty host copy was
 * in the way) while the task was inserted and failed. The writer runs on
 * the data's owner (argument "owner") or on another rank ("away"); the
 * reader on the last rank. Run with fault_inject task:wr:1.
 * Argument "lost": the first write succeeds on another rank than the
 * owner, the next one there fails after overwriting it (class ow), so the only
 * version is gone; the owner's inference had counted both writes and the
 * reader failed at run time, the owner's send saying "no copy at the
 * newest version (internal error)". It is refused alike now.
 * A second argument "error" or "misuse" fails the writer from its body,
 * after it wrote its bytes, by weft_task_error or a refused accessor call,
 * the body returning 0 (run without fault_inject): the task failed but
 * published its bytes as the data's first version, and the reader was
 * accepted on them. */
#include <string.h>

#include "../check.h"
#include "weft/weft.h"

static const char *wr_fails = ""; /* "error", "misuse": how wr fails */

static int wr(weft_task_t *t)
{
    *(double *)weft_task_ptr(t, 0) = 42;
    if (strcmp(wr_fails, "error") == 0) weft_task_error(t, "wr fails after writing");
    if (strcmp(wr_fails, "misuse") == 0) (void)weft_task_ptr(t, 5);
    return 0;
}

/* flow 0: x (R), flow 1: y (W): y = x + 1 */
static int cp(weft_task_t *t)
{
    *(double *)weft_task_ptr(t, 1) = *(const double *)weft_task_ptr(t, 0) + 1;
    return 0;
}

static const weft_task_class_t wr_class = {.name = "wr", .body = {[WEFT_DEV_CPU] = wr}};
/* Overwrites its data and fails: an injected failure runs no body and
 * leaves the bytes as they were (that version is still good). */
static int ow(weft_task_t *t)
{
    *(double *)weft_task_ptr(t, 0) = -1;
    return -3;
}

static const weft_task_class_t ow_class = {.name = "ow", .body = {[WEFT_DEV_CPU] = ow}};
static const weft_task_class_t cp_class = {.name = "cp", .body = {[WEFT_DEV_CPU] = cp}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    int rank = weft_rank(ctx), n = weft_nranks(ctx), last = n - 1;
    int lost = argc > 1 && strcmp(argv[1], "lost") == 0;
    int away = lost || (argc > 1 && strcmp(argv[1], "away") == 0);
    if (argc > 2) wr_fails = argv[2];
    weft_data_t *d = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, 0);
    weft_data_t *out = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, last);
    REQUIRE(d && out);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "first write");
    /* With devices the writer runs on device 1 (the device's end of a task). */
    if (weft_ndevices(ctx) > 0)
        CHECK(weft_insert_task(tp, &wr_class, WEFT_W, d, WEFT_ON_RANK, away ? last : 0,
                               WEFT_DEVICE_HINT, 1, 0) == 0);
    else
        CHECK(weft_insert_task(tp, &wr_class, WEFT_W, d, WEFT_ON_RANK, away ? last : 0, 0) == 0);
    if (lost) CHECK(weft_insert_task(tp, &ow_class, WEFT_RW, d, WEFT_ON_RANK, last, 0) == 0);
    capture_begin();
    CHECK(weft_taskpool_wait(tp) == WEFT_ERR_TASK);
    capture_end();
    if (lost)
        CHECK(captured("data 0: its only version v1 was held where the task that wrote it next "
                       "failed, which may have changed its bytes: no version of this NEW data is "
                       "left"));
    capture_begin();
    int rc = weft_insert_task(tp, &cp_class, WEFT_R, d, WEFT_W | WEFT_AFFINITY, out, 0);
    capture_end();
    CHECK(rc == WEFT_ERR_INVALID);
    CHECK(captured(lost ? "insert cp: reads NEW data 0, whose only version a task that failed "
                          "overwrote: no version of it is left"
                        : "insert cp: reads NEW data 0, whose first writer failed: no version of "
                          "it exists"));
    CHECK(weft_taskpool_wait(tp) == 0);
    CHECK(weft_data_set_init(d, NULL, NULL) == 0);
    CHECK(weft_insert_task(tp, &cp_class, WEFT_R, d, WEFT_W | WEFT_AFFINITY, out, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    if (rank == last) {
        double *p = NULL;
        REQUIRE(weft_data_host_acquire(out, WEFT_R, (void **)&p, NULL) == 0);
        CHECK(*p == 1);
        CHECK(weft_data_host_release(out) == 0);
    }
    weft_taskpool_free(tp);
    weft_data_release(d);
    weft_data_release(out);
    CHECK(weft_fini(ctx) == WEFT_ERR_TASK);
    return check_report("test_new_first_fail");
}
