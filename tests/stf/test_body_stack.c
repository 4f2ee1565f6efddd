/* A body with 6 MiB of arrays on its stack, on a worker and, with an emu
 * device, on the device's thread: run under `ulimit -s unlimited`, where
 * glibc gives threads 2 MiB and the rank died of SIGSEGV without a word
 * (a stranger's report); the main thread, which may run bodies too, grows
 * its stack to the limit. Checks the sum the body computes. */
#include <string.h>
#include <sys/resource.h>

#include "../check.h"
#include "weft/weft.h"

#define BIG (6 << 20)

static int deep_body(weft_task_t *t)
{
    volatile unsigned char buf[BIG];
    for (size_t i = 0; i < BIG; i += 4096) buf[i] = (unsigned char)(i >> 12);
    double sum = 0;
    for (size_t i = 0; i < BIG; i += 4096) sum += buf[i];
    double *x = weft_task_ptr(t, 0);
    x[0] += sum;
    return 0;
}

static const weft_task_class_t deep = {.name = "deep", .body = {[WEFT_DEV_CPU] = deep_body}};

int main(int argc, char **argv)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_STACK, &rl) != 0 || rl.rlim_cur != RLIM_INFINITY) {
        printf("test_body_stack: the stack limit is not unlimited (run under ulimit -s "
               "unlimited): skipped\n");
        return 77;
    }
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    double x = 0, expect = 0;
    for (size_t i = 0; i < BIG; i += 4096) expect += (unsigned char)(i >> 12);
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, &x, 1, 1, 1, 0);
    REQUIRE(d != NULL);
    if (weft_ndevices(ctx) > 0) CHECK(weft_data_set_device(d, 1) == 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "deep");
    CHECK(weft_insert_task(tp, &deep, WEFT_RW, d, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    weft_taskpool_free(tp);
    weft_data_release(d);
    CHECK(x == expect);
    CHECK(weft_fini(ctx) == 0);
    return check_report("body_stack");
}
