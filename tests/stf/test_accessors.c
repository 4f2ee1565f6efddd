/* Task accessors (docs/SEMANTICS.md section 2): flow and value indices and
 * value sizes are checked; a bad one is logged with the task's name and
 * the index, the accessor returns NULL / 0 / WEFT_ERR_INVALID, and the task
 * fails even though its body returns 0. Regression of issue 13 item 5
 * (weft_task_ptr(t, 5) on a 1-flow task segfaulted). One case a run, named
 * by argv[1]: a failed task makes every later wait of the run fail. */
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "weft/weft.h"

static int nflows_seen = -1, nvalues_seen = -1;
static size_t size0 = 0, size1 = 0;
static int bad_returned_null = 0;

/* flow 0: X (RW) += alpha * k, values: alpha (double), k (int). */
static int good(weft_task_t *t)
{
    double alpha;
    int k;
    nflows_seen = weft_task_nflows(t);
    nvalues_seen = weft_task_nvalues(t);
    size0 = weft_task_value_size(t, 0);
    size1 = weft_task_value_size(t, 1);
    if (weft_task_value_get(t, 0, &alpha, sizeof alpha) != 0) return -1;
    if (weft_task_value_get(t, 1, &k, sizeof k) != 0) return -1;
    double *x = weft_task_ptr(t, 0);
    x[0] += alpha * k;
    return 0;
}

static int bad_flow(weft_task_t *t)
{
    bad_returned_null = weft_task_ptr(t, 5) == NULL && weft_task_ld(t, -1) == 0 &&
                        weft_task_rows(t, 1) == 0 && weft_task_cols(t, 1) == 0;
    double *x = weft_task_ptr(t, 0);
    x[0] = 42;
    return 0; /* must not hide the misuse */
}

static int bad_value(weft_task_t *t)
{
    double v = -1;
    weft_task_value(t, 3, &v);
    bad_returned_null = v == -1 && weft_task_value_size(t, 2) == 0;
    return 0;
}

static int bad_size(weft_task_t *t)
{
    float f = 0;
    bad_returned_null = weft_task_value_get(t, 0, &f, sizeof f) == WEFT_ERR_INVALID && f == 0;
    return 0;
}

static const weft_task_class_t good_class = {.name = "good", .body = {[WEFT_DEV_CPU] = good}};
static const weft_task_class_t bad_flow_class = {.name = "bad_flow",
                                                 .body = {[WEFT_DEV_CPU] = bad_flow}};
static const weft_task_class_t bad_flow_dev_class = {.name = "bad_flow_dev",
                                                     .body = {[WEFT_DEV_EMU] = bad_flow}};
static const weft_task_class_t bad_value_class = {.name = "bad_value",
                                                  .body = {[WEFT_DEV_CPU] = bad_value}};
static const weft_task_class_t bad_size_class = {.name = "bad_size",
                                                 .body = {[WEFT_DEV_CPU] = bad_size}};

/* One task of cls on x with the values (2.5, 3); the wait's status. */
static int run(weft_context_t *ctx, const weft_task_class_t *cls, weft_data_t *x)
{
    double alpha = 2.5;
    int k = 3;
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "accessors");
    CHECK(weft_insert_task(tp, cls, WEFT_RW, x, WEFT_VALUE, &alpha, sizeof alpha, WEFT_VALUE, &k,
                           sizeof k, 0) == 0);
    int rc = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    return rc;
}

static void one_case(weft_context_t *ctx, const char *name, double *x, weft_data_t *d)
{
    if (strcmp(name, "good") == 0) {
        CHECK(run(ctx, &good_class, d) == 0);
        CHECK(x[0] == 7.5);
        CHECK(nflows_seen == 1 && nvalues_seen == 2);
        CHECK(size0 == sizeof(double) && size1 == sizeof(int));
        return;
    }
    const weft_task_class_t *cls = strcmp(name, "flow") == 0          ? &bad_flow_class
                                   : strcmp(name, "flow_device") == 0 ? &bad_flow_dev_class
                                   : strcmp(name, "value") == 0       ? &bad_value_class
                                                                      : &bad_size_class;
    capture_begin();
    int rc = run(ctx, cls, d);
    capture_end();
    /* The task fails (its line names the accessor's WEFT_ERR_INVALID); the
     * wait reports a failed taskpool (docs/SEMANTICS.md section 3). */
    CHECK(rc == WEFT_ERR_TASK);
    CHECK(captured("failed: invalid argument"));
    CHECK(bad_returned_null);
    if (cls == &bad_flow_class || cls == &bad_flow_dev_class) {
        CHECK(captured(": weft_task_ptr(5): no such data flow (the task has 1): the task fails"));
        CHECK(captured(": weft_task_ld(-1): no such data flow"));
        /* The body ran; its completion is the error. On the host it wrote
         * in place; on a device its copy is not published (a failed task
         * publishes no write): the host keeps the last good version, as
         * for a body that returned an error. It came back before. */
        CHECK(x[0] == (cls == &bad_flow_class ? 42 : 0));
    } else if (cls == &bad_value_class) {
        CHECK(captured("task bad_value #"));
        CHECK(captured(": weft_task_value(3): no such value (the task has 2): the task fails"));
    } else {
        CHECK(captured("weft_task_value_get(0): 4 bytes asked for a value of 8 bytes"));
    }
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    const char *name = argc > 1 ? argv[1] : "good";
    if (strcmp(name, "flow_device") == 0 && weft_ndevices(ctx) == 0) {
        fprintf(stderr, "flow_device needs an emu device (WEFT_DEVICE_EMU_ENABLED=1)\n");
        return 1;
    }
    double x[1] = {0};
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, x, 1, 1, 1, 0);
    one_case(ctx, name, x, d);
    weft_data_release(d);
    int rc = weft_fini(ctx);
    CHECK(strcmp(name, "good") == 0 ? rc == 0 : rc == WEFT_ERR_TASK);
    char report[64];
    snprintf(report, sizeof report, "stf_accessors %s", name);
    return check_report(report);
}
