/* The failure line every rank logs at the wait names the cause that only
 * the failing rank's thread logged (docs/SEMANTICS.md section 3), and
 * weft_data_owner. Two ranks; rank 1 owns the data the failing task
 * writes. Usage: test_fail_words MODE, with MODE
 * - copy: run with an emu device and fault_inject=device_copy:1@1: the
 *   stage-in of the task's input on rank 1's device fails; every rank's
 *   line names the injected copy;
 * - misuse: a body on rank 1 asks for a flow its task does not have, on
 *   the host (taskpool "host"), then on an emu device (taskpool "dev",
 *   when the run has one: the body runs on the device's thread, the task
 *   ends on its manager's); every rank's line names the call;
 * - said: a body on rank 1 says why its task fails (weft_task_error) and
 *   returns 0: the task fails all the same (it succeeded, with an error
 *   line), every rank's line carrying the body's words; then words longer
 *   than a task keeps, which keep the parenthesis they end with;
 * - thread: the same said by a thread the body starts (an OpenMP team's
 *   thread would be one) and joined before it returns 0: the call was
 *   refused there, the task succeeded and the run exited 0; then a flow
 *   asked for out of range on such a thread, whose line lost its words;
 * - other: a body says the failure of another task, one that ended before
 *   it (its pointer kept): nothing failed and the words were lost; the
 *   calling task fails. The first task runs until the second is inserted:
 *   weft may free an ended task at once and give its memory to the next
 *   one made, which would make the kept pointer the caller's own task;
 * - owner: weft_data_owner of data owned by each rank, of a matrix tile,
 *   from a body, of NULL and of a released handle.
 * The lines are checked by tests/stf/failures.cmake; this program checks
 * the waits' status. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "../check.h"
#include "weft/weft.h"

static int add_body(weft_task_t *t)
{
    const double *a = weft_task_ptr(t, 0);
    double *b = weft_task_ptr(t, 1);
    if (!a || !b) return -7;
    b[0] += a[0];
    return 0;
}

/* Asks for flow 5 of a task with two: refused, the task fails. Where it
 * ran is kept: the device case must run on the device. */
static atomic_int misuse_device = -1;
static int misuse_body(weft_task_t *t)
{
    atomic_store(&misuse_device, weft_task_device(t));
    double *b = weft_task_ptr(t, 1);
    if (weft_task_ptr(t, 5) != NULL) return -8;
    b[0] += 1;
    return 0;
}

static int said_body(weft_task_t *t)
{
    weft_task_error(t, "the input is out of range");
    return 0;
}

/* Words past what a task keeps of its cause (256 characters), ending with
 * what to change: the other ranks' lines keep that parenthesis. */
static int said_long_body(weft_task_t *t)
{
    char words[400] = "";
    for (int k = 0; k < 12; k++) strcat(words, "the input is out of range; ");
    weft_task_error(t, "%.300s(raise the_limit, or lower the_size)", words);
    return 0;
}

static void *said_on_thread(void *t)
{
    weft_task_error(t, "a thread of the body found the input out of range");
    return NULL;
}

static void *misuse_on_thread(void *t)
{
    weft_task_ptr(t, 5);
    return NULL;
}

/* Value 0: which of the two a thread of the body does. */
static int thread_body(weft_task_t *t)
{
    int said = 0;
    pthread_t th;
    if (weft_task_value_get(t, 0, &said, sizeof said) != 0) return -9;
    if (pthread_create(&th, NULL, said ? said_on_thread : misuse_on_thread, t) != 0) return -10;
    pthread_join(th, NULL);
    return 0;
}

/* Value 0: 1 for the first task (keeps its pointer; returns once the
 * second was inserted, 10 s at most), 0 for the second (names the
 * first's). */
static weft_task_t *kept_task;
static atomic_int second_inserted;
static int other_body(weft_task_t *t)
{
    int first = 0;
    if (weft_task_value_get(t, 0, &first, sizeof first) != 0) return -9;
    if (!first) {
        weft_task_error(kept_task, "the first task's input was out of range");
        return 0;
    }
    kept_task = t;
    const struct timespec nap = {0, 1000000};
    for (int naps = 0; !atomic_load(&second_inserted) && naps < 10000; naps++)
        nanosleep(&nap, NULL);
    return 0;
}

/* The owner of the data its value 0 points to, as a body sees it. */
static atomic_int owner_in_body = -100;
static int owner_body(weft_task_t *t)
{
    weft_data_t *d;
    weft_task_value(t, 0, &d);
    atomic_store(&owner_in_body, weft_data_owner(d));
    return 0;
}

static const weft_task_class_t add_class = {.name = "add", .body = {[WEFT_DEV_CPU] = add_body}};
static const weft_task_class_t misuse_class = {.name = "misuse",
                                               .body = {[WEFT_DEV_CPU] = misuse_body}};
static const weft_task_class_t said_class = {.name = "said", .body = {[WEFT_DEV_CPU] = said_body}};
static const weft_task_class_t said_long_class = {.name = "saidlong",
                                                  .body = {[WEFT_DEV_CPU] = said_long_body}};
static const weft_task_class_t thread_class = {.name = "thread",
                                               .body = {[WEFT_DEV_CPU] = thread_body}};
static const weft_task_class_t other_class = {.name = "other",
                                              .body = {[WEFT_DEV_CPU] = other_body}};
static const weft_task_class_t owner_class = {.name = "owner",
                                              .body = {[WEFT_DEV_CPU] = owner_body}};

/* One task a, b (owned by rank 1) -> b on b's home device, waited for. */
static int run_one(weft_context_t *ctx, const char *name, const weft_task_class_t *cls,
                   weft_data_t *a, weft_data_t *b)
{
    weft_taskpool_t *tp = weft_taskpool_new(ctx, name);
    CHECK(weft_insert_task(tp, cls, WEFT_R, a, WEFT_RW | WEFT_AFFINITY, b, 0) == 0);
    int rc = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    return rc;
}

static void check_owner(weft_context_t *ctx, weft_data_t *d0, weft_data_t *d1)
{
    CHECK(weft_data_owner(d0) == 0);
    CHECK(weft_data_owner(d1) == 1);
    CHECK(weft_data_owner(NULL) == WEFT_ERR_INVALID);
    weft_matrix_t *A = weft_matrix_new(ctx, WEFT_DOUBLE, 4, 4, 2, 2, 1, 2);
    REQUIRE(A != NULL);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            CHECK(weft_data_owner(weft_tile(A, i, j)) == weft_matrix_tile_rank(A, i, j));
    weft_matrix_free(A);
    /* From a body, on the rank that runs it (d1's owner). */
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "owner");
    CHECK(weft_insert_task(tp, &owner_class, WEFT_RW | WEFT_AFFINITY, d1, WEFT_VALUE, &d0,
                           sizeof d0, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    weft_taskpool_free(tp);
    CHECK(atomic_load(&owner_in_body) == (weft_rank(ctx) == 1 ? 0 : -100));
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL && weft_nranks(ctx) == 2 && argc == 2);
    int rank = weft_rank(ctx), dev = weft_ndevices(ctx) > 0;
    double x[2] = {1, 2};
    weft_data_t *a = weft_data_register(ctx, WEFT_DOUBLE, rank == 1 ? &x[0] : NULL, 1, 1, 1, 1);
    weft_data_t *b = weft_data_register(ctx, WEFT_DOUBLE, rank == 1 ? &x[1] : NULL, 1, 1, 1, 1);
    weft_data_t *z = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, 0);
    REQUIRE(a && b && z);
    const char *mode = argv[1];
    if (strcmp(mode, "copy") == 0) {
        REQUIRE(dev);
        CHECK(weft_data_set_device(b, 1) == 0);
        CHECK(run_one(ctx, "copy", &add_class, a, b) == WEFT_ERR_TASK);
    } else if (strcmp(mode, "misuse") == 0) {
        CHECK(run_one(ctx, "host", &misuse_class, a, b) == WEFT_ERR_TASK);
        CHECK(atomic_load(&misuse_device) == (rank == 1 ? 0 : -1));
        if (dev) {
            CHECK(weft_data_set_device(b, 1) == 0);
            CHECK(run_one(ctx, "dev", &misuse_class, a, b) == WEFT_ERR_TASK);
            CHECK(atomic_load(&misuse_device) == (rank == 1 ? 1 : -1));
        }
    } else if (strcmp(mode, "said") == 0) {
        CHECK(run_one(ctx, "said", &said_class, a, b) == WEFT_ERR_TASK);
        CHECK(run_one(ctx, "saidlong", &said_long_class, a, b) == WEFT_ERR_TASK);
    } else if (strcmp(mode, "thread") == 0) {
        for (int said = 1; said >= 0; said--) {
            weft_taskpool_t *tp = weft_taskpool_new(ctx, said ? "said" : "misuse");
            CHECK(weft_insert_task(tp, &thread_class, WEFT_R, a, WEFT_RW, b, WEFT_VALUE, &said,
                                   sizeof said, 0) == 0);
            CHECK(weft_taskpool_wait(tp) == WEFT_ERR_TASK);
            weft_taskpool_free(tp);
        }
    } else if (strcmp(mode, "other") == 0) {
        weft_taskpool_t *tp = weft_taskpool_new(ctx, "other");
        for (int first = 1; first >= 0; first--)
            CHECK(weft_insert_task(tp, &other_class, WEFT_R, a, WEFT_RW, b, WEFT_VALUE, &first,
                                   sizeof first, 0) == 0);
        atomic_store(&second_inserted, 1);
        CHECK(weft_taskpool_wait(tp) == WEFT_ERR_TASK);
        weft_taskpool_free(tp);
    } else if (strcmp(mode, "owner") == 0) {
        check_owner(ctx, z, b);
    } else {
        REQUIRE(!"mode: copy, misuse, said, thread, other or owner");
    }
    weft_data_release(a);
    weft_data_release(b);
    weft_data_release(z);
    if (strcmp(mode, "owner") == 0) CHECK(weft_data_owner(z) == WEFT_ERR_INVALID); /* released */
    int f = weft_fini(ctx);
    CHECK(f == (strcmp(mode, "owner") == 0 ? 0 : WEFT_ERR_TASK));
    printf("test_fail_words %s rank %d: %d checks, %d failed: %s\n", mode, rank,
           atomic_load(&checks), atomic_load(&failures), failures ? "FAILED" : "PASSED");
    return failures != 0;
}
