/* Device memory the user holds, registered as the MANAGED copy of a tile
 * (weft_data_register_device): tasks on that device use it in place with
 * its own leading dimension, it is never evicted under memory pressure nor
 * freed, and its contents come home when the host needs them. */
#include "devtest.h"

#define NB 32
#define T 8
#define LDU (NB + 5)

static double *user_x;
static atomic_int saw_user, saw_other;

/* flow 0: X (RW) += 1, noting whether X is the user's buffer. */
static int bump(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    int64_t ld = weft_task_ld(t, 0);
    if (x == user_x && ld == LDU)
        atomic_fetch_add(&saw_user, 1);
    else
        atomic_fetch_add(&saw_other, 1);
    for (int j = 0; j < weft_task_cols(t, 0); j++)
        for (int i = 0; i < weft_task_rows(t, 0); i++) x[i + j * ld] += 1.0;
    return 0;
}

static const weft_task_class_t bump_emu = {.name = "bump", .body = {[WEFT_DEV_EMU] = bump}};

/* Tile (0, 0) of M lives on device 1 in user memory; the other tiles
 * churn through the small zone of device 1 meanwhile. */
static void in_place(weft_context_t *ctx, weft_matrix_t *M)
{
    weft_data_t *x = weft_tile(M, 0, 0);
    user_x = calloc(LDU * NB, sizeof(double));
    CHECK(weft_data_register_device(x, 1, user_x, LDU, 0) == 0);
    CHECK(weft_data_register_device(x, 1, user_x, NB - 1, 0) == WEFT_ERR_INVALID);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "in place");
    int rc = 0;
    for (int r = 0; r < 3; r++)
        for (int i = 0; i < T; i++)
            for (int j = 0; j < T && rc == 0; j++)
                rc =
                    weft_insert_task(tp, &bump_emu, WEFT_RW | WEFT_AFFINITY, weft_tile(M, i, j), 0);
    CHECK(rc == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    weft_taskpool_free(tp);
    CHECK(atomic_load(&saw_user) == 3);
    weft_device_counters_t c = devtest_counters(ctx, 1);
    CHECK(c.evictions > 0);
    /* The tile came home from the user's device memory; the other tiles too. */
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++) {
            double *h = weft_data_host_ptr(weft_tile(M, i, j), NULL);
            double ref[NB * NB];
            devtest_fill_array(ref, NB, NB, NB, i + 2.0 * j);
            for (int k = 0; k < NB * NB; k++) ref[k] += 3.0;
            CHECK(h && devtest_maxdiff(h, NB, ref, NB, NB, NB) < 1e-12);
        }
    CHECK(user_x[0] == sin(0.0) + 3.0); /* and the user's buffer holds it too */
}

/* A NEW tile whose contents the user wrote on the device: current = 1. */
static void current_contents(weft_context_t *ctx)
{
    weft_data_t *d = weft_data_new(ctx, WEFT_DOUBLE, NB, NB, 0);
    double *v = malloc(sizeof(double) * LDU * NB);
    devtest_fill_array(v, LDU, NB, LDU, 9.0);
    CHECK(weft_data_register_device(d, 2, v, LDU, 1) == 0);
    CHECK(weft_data_set_device(d, 2) == 0);
    CHECK(weft_data_set_device(d, weft_ndevices(ctx) + 1) == WEFT_ERR_INVALID);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "current");
    CHECK(weft_insert_task(tp, &bump_emu, WEFT_RW | WEFT_AFFINITY, d, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    weft_taskpool_free(tp);
    double *h = weft_data_host_ptr(d, NULL);
    double ref[LDU * NB];
    devtest_fill_array(ref, LDU, NB, LDU, 9.0);
    for (int k = 0; k < LDU * NB; k++) ref[k] += 1.0;
    CHECK(h && devtest_maxdiff(h, NB, ref, LDU, NB, NB) < 1e-12);
    CHECK(devtest_maxdiff(v, LDU, ref, LDU, NB, NB) < 1e-12);
    weft_data_release(d);
    free(v); /* the user's, after the release */
}

/* Device memory registered twice, or an emu device's memory (host memory)
 * that a host registration holds: refused until the holder is released. */
static void aliases(weft_context_t *ctx)
{
    double *buf = calloc(NB * NB, sizeof(double));
    weft_data_t *host = weft_data_register(ctx, WEFT_DOUBLE, buf, NB, NB, NB, 0);
    weft_data_t *a = weft_data_new(ctx, WEFT_DOUBLE, NB, NB, 0);
    weft_data_t *b = weft_data_new(ctx, WEFT_DOUBLE, NB, NB, 0);
    CHECK(host && a && b);
    CHECK(weft_data_register_device(a, 1, buf + NB, NB, 0) == WEFT_ERR_INVALID);
    CHECK(weft_data_register_device(a, 3, buf, NB, 0) == WEFT_ERR_INVALID);
    weft_data_release(host);
    CHECK(weft_data_register_device(a, 1, buf, NB, 0) == 0);
    CHECK(weft_data_register_device(b, 2, buf + NB * NB / 2, NB, 0) == WEFT_ERR_INVALID);
    weft_data_release(a);
    CHECK(weft_data_register_device(b, 2, buf + 1, NB + 3, 0) == 0); /* a's bytes are free */
    weft_data_release(b);
    b = weft_data_new(ctx, WEFT_DOUBLE, NB, NB, 0);
    CHECK(weft_data_register_device(b, 2, buf, NB, 0) == 0);
    weft_data_release(b);
    free(buf);
}

static int keep_host(const weft_stage_t *s, void *arg)
{
    (void)s, (void)arg;
    return 0;
}

/* The calls that set how a data lives on devices are made between
 * taskpools: while a taskpool not waited for uses the data they are
 * refused, named (a register_device with current = 1 in an open taskpool
 * made the task inserted before it read the contents declared after). */
static void open_taskpool(weft_context_t *ctx)
{
    weft_data_t *d = weft_data_new(ctx, WEFT_DOUBLE, NB, NB, 0);
    double *v = calloc(LDU * NB, sizeof(double));
    REQUIRE(d && v);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "open");
    CHECK(weft_insert_task(tp, &bump_emu, WEFT_W | WEFT_AFFINITY, d, 0) == 0);
    capture_begin();
    CHECK(weft_data_register_device(d, 1, v, LDU, 1) == WEFT_ERR_INVALID);
    CHECK(weft_data_set_device(d, 1) == WEFT_ERR_INVALID);
    CHECK(weft_data_set_keep_device_copies(d, 1) == WEFT_ERR_INVALID);
    CHECK(weft_data_set_stage(d, keep_host, keep_host, NULL) == WEFT_ERR_INVALID);
    const char *text = capture_end();
    CHECK(strstr(text, "weft_data_register_device: data ") && strstr(text, "is used by taskpool "
                                                                           "\"open\""));
    CHECK(strstr(text, "weft_data_set_device: data ") != NULL);
    CHECK(strstr(text, "weft_data_set_keep_device_copies: data ") != NULL);
    CHECK(strstr(text, "weft_data_set_stage: data ") != NULL);
    CHECK(weft_taskpool_wait(tp) == 0);
    weft_taskpool_free(tp);
    CHECK(weft_data_register_device(d, 1, v, LDU, 1) == 0); /* after the wait */
    weft_data_release(d);
    free(v);
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = devtest_init(&argc, &argv, 2);
    weft_matrix_t *M = weft_matrix_new(ctx, WEFT_DOUBLE, NB * T, NB * T, NB, NB, 1, 1);
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++)
            devtest_fill_array(weft_data_host_ptr(weft_tile(M, i, j), NULL), NB, NB, NB,
                               i + 2.0 * j);
    in_place(ctx, M);
    current_contents(ctx);
    aliases(ctx);
    open_taskpool(ctx);
    weft_matrix_free(M);
    for (int d = 1; d <= 2; d++) CHECK(devtest_counters(ctx, d).copies == 0);
    CHECK(weft_fini(ctx) == 0);
    free(user_x);
    return check_report("device_register");
}
