/* weft_data_register_device over a runtime copy that holds the only newest
 * version, whose write-back to host fails (fault_inject device_copy:1 on an
 * emu device): the call refuses, says that the write-back failed (not "a
 * copy in use"), registers nothing, and the version is not lost: a host
 * acquire afterwards (copy 2, which succeeds) reads what the task wrote. */
#include "../check.h"
#include "weft/weft.h"

static int seven(weft_task_t *t)
{
    double *a = weft_task_ptr(t, 0);
    for (int i = 0; i < 4; i++) a[i] = 7.0;
    return 0;
}

static const weft_task_class_t seven_class = {.name = "seven", .body = {[WEFT_DEV_CPU] = seven}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    REQUIRE(weft_ndevices(ctx) == 1);
    weft_data_t *d = weft_data_new(ctx, WEFT_DOUBLE, 2, 2, 0);
    REQUIRE(d != NULL);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "made on the device");
    CHECK(weft_insert_task(tp, &seven_class, WEFT_W, d, WEFT_DEVICE_HINT, 1, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    weft_taskpool_free(tp);
    static double user[4];
    capture_begin();
    int rc = weft_data_register_device(d, 1, user, 2, 0);
    const char *text = capture_end();
    CHECK(rc != 0);
    CHECK(strstr(text, "writing it back to host failed") != NULL);
    CHECK(strstr(text, "already has a copy in use") == NULL);
    void *p = NULL;
    CHECK(weft_data_host_acquire(d, WEFT_R, &p, NULL) == 0);
    CHECK(p != NULL && ((double *)p)[0] == 7.0 && ((double *)p)[3] == 7.0);
    CHECK(weft_data_host_release(d) == 0);
    weft_data_release(d);
    (void)weft_fini(ctx);
    return check_report("device_register_lost");
}
