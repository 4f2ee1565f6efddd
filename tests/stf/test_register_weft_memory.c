/* Memory weft allocated itself registered as the application's: refused,
 * named. A stranger registered the pointer weft_data_host_ptr gave for a
 * NEW data: the registration was taken, the tasks of the two handles ran
 * at once on the same bytes (lost updates), and once the NEW data was
 * released its block went to the next data, which the old handle's tasks
 * then wrote. The same for a tile of weft_matrix_new wrapped as a matrix,
 * for a device registration over such memory, and for an emu device's
 * memory (a body's pointer, kept) registered as host memory. The
 * application's own memory is still taken. */
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "weft/weft.h"
#include "weft/weft_device.h"
#include "weft/weft_matrix.h"

enum { N = 64 };

static void *kept_device_ptr;

static int add_one(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    for (int i = 0; i < weft_task_rows(t, 0); i++) x[i] += 1;
    if (weft_task_device(t) > 0) kept_device_ptr = x;
    return 0;
}

static const weft_task_class_t add_class = {
    .name = "add", .body = {[WEFT_DEV_CPU] = add_one, [WEFT_DEV_EMU] = add_one}};

static int run(weft_context_t *ctx, weft_data_t *d, int device)
{
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "add");
    int rc = weft_insert_task(tp, &add_class, WEFT_RW, d, WEFT_DEVICE_HINT, device, 0);
    int wrc = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    return rc ? rc : wrc;
}

/* One registration, expected refused with the message naming what. */
static void refused(const char *what, weft_data_t *got)
{
    const char *said = capture_end();
    if (got) weft_data_release(got);
    CHECK(got == NULL);
    CHECK(strstr(said, "lies in memory weft allocated itself") != NULL);
    CHECK(strstr(said, what) != NULL);
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    weft_data_t *a = weft_data_new(ctx, WEFT_DOUBLE, N, 1, 0);
    REQUIRE(a && weft_data_set_init(a, NULL, NULL) == 0);
    CHECK(run(ctx, a, 0) == 0);
    int64_t ld = 0;
    double *p = weft_data_host_ptr(a, &ld);
    REQUIRE(p != NULL);
    CHECK(p[0] == 1);

    /* The host copy of a NEW data, as host memory and as a device's. */
    capture_begin();
    refused("its host copies of data", weft_data_register(ctx, WEFT_DOUBLE, p, N, 1, N, 0));
    int ndev = weft_ndevices(ctx);
    if (ndev > 0) {
        weft_data_t *b = weft_data_new(ctx, WEFT_DOUBLE, N, 1, 0);
        capture_begin();
        CHECK(weft_data_register_device(b, 1, p, N, 1) == WEFT_ERR_INVALID);
        refused("its host copies of data", NULL);
        weft_data_release(b);
    }
    /* Released: its block may go to the next data. */
    weft_data_release(a);
    capture_begin();
    refused("its host copies of data", weft_data_register(ctx, WEFT_DOUBLE, p, N, 1, N, 0));

    /* A tile of a new matrix, wrapped. */
    weft_matrix_t *A = weft_matrix_new(ctx, WEFT_DOUBLE, 2 * N, 2 * N, N, N, 1, 1);
    REQUIRE(A != NULL);
    double *t = weft_data_host_ptr(weft_tile(A, 1, 0), &ld);
    REQUIRE(t != NULL);
    capture_begin();
    weft_matrix_t *W = weft_matrix_wrap(ctx, WEFT_DOUBLE, t, ld, N, N, N, N, 1, 1);
    const char *said = capture_end();
    CHECK(W == NULL);
    CHECK(strstr(said, "lies in memory weft allocated itself (its host copies of data)") != NULL);
    if (W) weft_matrix_free(W);
    weft_matrix_free(A);

    /* An emu device's memory, from a body that ran there. */
    if (ndev > 0) {
        weft_data_t *c = weft_data_new(ctx, WEFT_DOUBLE, N, 1, 0);
        REQUIRE(c && weft_data_set_init(c, NULL, NULL) == 0);
        CHECK(run(ctx, c, 1) == 0);
        REQUIRE(kept_device_ptr != NULL);
        capture_begin();
        refused("the memory of device 1",
                weft_data_register(ctx, WEFT_DOUBLE, kept_device_ptr, N, 1, N, 0));
        weft_data_release(c);
    }

    /* The application's memory: taken, and its task runs. */
    double *mine = calloc(N, sizeof *mine);
    REQUIRE(mine != NULL);
    weft_data_t *m = weft_data_register(ctx, WEFT_DOUBLE, mine, N, 1, N, 0);
    CHECK(m != NULL);
    if (m) {
        CHECK(run(ctx, m, 0) == 0);
        weft_data_release(m);
    }
    CHECK(mine[0] == 1 && mine[N - 1] == 1);
    printf("register_weft_memory: %d devices\n", ndev);
    CHECK(weft_fini(ctx) == 0);
    free(mine);
    return check_report("stf_register_weft_memory");
}
