/* An injected failure of a tile copy to, from or between accelerators
 * (fault_inject device_copy:N, docs/SEMANTICS.md section 3). Three rounds,
 * each a taskpool of three increments of one registered tile, dealt over
 * two emu devices (copies: host to device, device to device, device to
 * device, then the write-back into the user's memory at the wait). The
 * round whose copy fails returns an error from its wait (WEFT_ERR_TASK for
 * a task's stage-in, the write-back's status for the write-back), the
 * others return 0, nothing hangs, and the tile continues from its last
 * good version: the final value is checked against what the injected copy
 * loses. Usage: test_device_copy_fault FAILED_ROUND WANT_RC FINAL_X. */
#include <stdlib.h>

#include "../check.h"
#include "weft/weft.h"

static int bump(weft_task_t *t)
{
    double *a = weft_task_ptr(t, 0);
    a[0] += 1;
    return 0;
}

static const weft_task_class_t bump_class = {.name = "bump", .body = {[WEFT_DEV_CPU] = bump}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL && argc == 4);
    REQUIRE(weft_ndevices(ctx) == 2);
    int failed_round = atoi(argv[1]), want_rc = atoi(argv[2]);
    double final_x = atof(argv[3]), x[4] = {0};
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, x, 2, 2, 2, 0);
    REQUIRE(d != NULL);
    for (int round = 0; round < 3; round++) {
        weft_taskpool_t *tp = weft_taskpool_new(ctx, "round");
        for (int k = 0; k < 3; k++)
            CHECK(weft_insert_task(tp, &bump_class, WEFT_RW, d, WEFT_DEVICE_HINT,
                                   1 + (k + round) % 2, 0) == 0);
        int rc = weft_taskpool_wait(tp);
        printf("round %d: wait %d, x = %g\n", round, rc, x[0]);
        CHECK(rc == (round == failed_round ? want_rc : 0));
        weft_taskpool_free(tp);
    }
    CHECK(x[0] == final_x);
    weft_data_release(d);
    CHECK(weft_fini(ctx) == want_rc);
    return check_report("device_copy_fault");
}
