/* A write-back into the user's memory that fails (fault_inject
 * device_copy:N on emu devices; docs/SEMANTICS.md section 3, "A write-back
 * into user memory that fails"). A registered tile x gets three increments
 * dealt over two emu devices (copies 1-3: host to device, device to
 * device twice); copy 4 is its write-back at the wait, which the test's
 * rule fails: the wait returns WEFT_ERR_INTERNAL and x keeps 0, while the
 * newest version 3 stays on a device, pending. Then, by MODE:
 *   wait     the next taskpool uses another tile only: its wait writes x
 *            back (returns 0, x = 3);
 *   again    copy 5 fails too: the second wait fails again, the third
 *            writes x back;
 *   acquire  weft_data_host_acquire (WEFT_R) writes it back;
 *   acquire_write  the same, then the user writes x (allowed once a
 *            write-back succeeded) and a task on device 1 adds 1: it
 *            must read the user's 100, not its device copy's 3 (the
 *            acquire settled the write-back but left the device copies
 *            current, and the task gave 4);
 *   release  weft_data_release writes it back;
 *   fini     x is never released: weft_fini writes it back and drops
 *            the device copy, as a wait does (no leak is reported);
 *   lost     copy 5 fails too: the release, the last try, names the
 *            version lost, x keeps 0 (weft_fini tried again, after the
 *            memory had gone back to the user);
 *   acquire_w  a write acquire gives up the pending version, said; the
 *            user's 100 plus a task's 1 (the next wait called the
 *            given-up write-back "settled");
 *   reregister  the same, then the user registers x's memory anew,
 *            writes 500 there and a task adds 1: 501 stays through a
 *            later wait (before, that wait's retry of the released
 *            data's write-back put its 3 over the new data's 501, and
 *            into memory the user had freed after the release).
 * Before, the user's memory kept 0 in every mode but acquire: the tile
 * went on from its device copy and nothing wrote it back unless a later
 * taskpool used it. weft_fini returns the first error (the failed wait's)
 * in every mode. On several ranks x is rank 0's (the rule names rank 0):
 * every rank's waits return the same, and x is checked on rank 0. Usage:
 * test_device_writeback_retry MODE. */
#include <string.h>

#include "../check.h"
#include "weft/weft.h"

static int bump(weft_task_t *t)
{
    double *a = weft_task_ptr(t, 0);
    a[0] += 1;
    return 0;
}

static const weft_task_class_t bump_class = {.name = "bump", .body = {[WEFT_DEV_CPU] = bump}};

/* n increments of d on the devices in hints (0: the host), waited for. */
static int round_of(weft_context_t *ctx, weft_data_t *d, const int *hints, int n)
{
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "round");
    for (int k = 0; k < n; k++)
        CHECK(weft_insert_task(tp, &bump_class, WEFT_RW, d, WEFT_DEVICE_HINT, hints[k], 0) == 0);
    int rc = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    return rc;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL && argc == 2);
    REQUIRE(weft_ndevices(ctx) == 2);
    const char *mode = argv[1];
    int mine = weft_rank(ctx) == 0; /* x is rank 0's */
    static double x[4], y[4];
    weft_data_t *dx = weft_data_register(ctx, WEFT_DOUBLE, x, 2, 2, 2, 0);
    weft_data_t *dy = weft_data_register(ctx, WEFT_DOUBLE, y, 2, 2, 2, 0);
    REQUIRE(dx != NULL && dy != NULL);
    const int devices[3] = {1, 2, 1}, host[1] = {0};
    CHECK(round_of(ctx, dx, devices, 3) == WEFT_ERR_INTERNAL);
    CHECK(x[0] == 0.0); /* the failed write-back (and nothing on other ranks) */
    double want = 3.0;
    if (strcmp(mode, "wait") == 0) {
        CHECK(round_of(ctx, dy, host, 1) == 0);
    } else if (strcmp(mode, "again") == 0) {
        CHECK(round_of(ctx, dy, host, 1) == WEFT_ERR_INTERNAL);
        CHECK(x[0] == 0.0);
        CHECK(round_of(ctx, dy, host, 1) == 0);
    } else if (strcmp(mode, "acquire") == 0) {
        void *p = NULL;
        if (mine) {
            CHECK(weft_data_host_acquire(dx, WEFT_R, &p, NULL) == 0);
            CHECK(p == x && x[0] == 3.0);
            CHECK(weft_data_host_release(dx) == 0);
        }
    } else if (strcmp(mode, "acquire_write") == 0) {
        void *p = NULL;
        if (mine) {
            CHECK(weft_data_host_acquire(dx, WEFT_R, &p, NULL) == 0);
            CHECK(weft_data_host_release(dx) == 0);
            x[0] = 100.0;
        }
        CHECK(round_of(ctx, dx, devices, 1) == 0);
        want = 101.0;
    } else if (strcmp(mode, "release") == 0) {
        weft_data_release(dx);
        dx = NULL;
    } else if (strcmp(mode, "lost") == 0) {
        weft_data_release(dx);
        dx = NULL;
        want = 0.0;
    } else if (strcmp(mode, "acquire_w") == 0) {
        void *p = NULL;
        if (mine) {
            CHECK(weft_data_host_acquire(dx, WEFT_W, &p, NULL) == 0);
            CHECK(p == x);
            x[0] = 100.0;
            CHECK(weft_data_host_release(dx) == 0);
        }
        CHECK(round_of(ctx, dx, host, 1) == 0);
        want = 101.0;
    } else if (strcmp(mode, "reregister") == 0) {
        weft_data_release(dx);
        dx = weft_data_register(ctx, WEFT_DOUBLE, x, 2, 2, 2, 0);
        REQUIRE(dx != NULL);
        if (mine) x[0] = 500.0;
        CHECK(round_of(ctx, dx, host, 1) == 0);
        CHECK(round_of(ctx, dy, host, 1) == 0);
        want = 501.0;
    } else {
        REQUIRE(strcmp(mode, "fini") == 0);
        dx = NULL; /* never released: fini writes it back */
    }
    if (!mine) want = 0.0;
    if (strcmp(mode, "fini") != 0 && strcmp(mode, "lost") != 0) CHECK(x[0] == want);
    if (dx) weft_data_release(dx);
    weft_data_release(dy);
    CHECK(weft_fini(ctx) == WEFT_ERR_INTERNAL);
    printf("test_device_writeback_retry %s: x = %g\n", mode, x[0]);
    CHECK(x[0] == want);
    return check_report("device_writeback_retry");
}
