/* Prefetch ahead (device_prefetch_ahead, issue 18 item 2) on two emu
 * devices. Tasks homed on a device (WEFT_AFFINITY on a tile homed there)
 * wait behind a gate task that spins until the whole graph is inserted:
 *  - their inputs whose version is final (host memory, no earlier writer)
 *    are copied in while the gate holds, so that they start with nothing
 *    to fetch (counted as prefetches, and each tile crosses once);
 *  - an input that an earlier task still writes (on the other device) is
 *    not fetched while that writer is pending;
 *  - a tile prefetched for one reader then written on the other device is
 *    read at its new version by the next reader, never from the stale copy.
 * No more tiles are held ahead than WEFT_DEVICE_PREFETCH_AHEAD (on emu the
 * copies land only after the gate's kernel: one thread runs a device's
 * streams); with 0 nothing is prefetched, and the results are the same. */
#include <stdatomic.h>
#include <time.h>

#define NB 64 /* tiles of 64 x 64 doubles: 32 KiB */
#define NX 4  /* tiles the first device's readers read */

#include "devgate.h" /* needs NB */

/* flow 0: X (RW), flow 1: a token (RW): X += 10 */
static int bump_body(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    int64_t lx = weft_task_ld(t, 0);
    for (int j = 0; j < NB; j++)
        for (int i = 0; i < NB; i++) x[i + j * lx] += 10;
    return 0;
}

static const weft_task_class_t bump = {.name = "bump", .body = {[WEFT_DEV_EMU] = bump_body}};

/* Waits (up to 10 s) until devices 1 and 2 prefetched at least p1 and p2
 * tiles; 1 when they did. */
static int wait_prefetches(weft_context_t *ctx, int p1, int p2)
{
    struct timespec pause = {0, 1000000};
    for (int ms = 0; ms < 10000; ms++) {
        if (devgate_counters(ctx, 1).prefetches >= p1 && devgate_counters(ctx, 2).prefetches >= p2)
            return 1;
        nanosleep(&pause, NULL);
    }
    return 0;
}

static weft_data_t *tile(weft_context_t *ctx, double *mem, double value, int home)
{
    for (int e = 0; e < NB * NB; e++) mem[e] = value;
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, mem, NB, NB, NB, 0);
    REQUIRE(d != NULL);
    if (home > 0) REQUIRE(weft_data_set_device(d, home) == WEFT_SUCCESS);
    return d;
}

static int all_equal(const double *mem, double want)
{
    int right = 1;
    for (int e = 0; e < NB * NB; e++) right &= mem[e] == want;
    return right;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = devtest_init(&argc, &argv, 2);
    const char *env = getenv("WEFT_DEVICE_PREFETCH_AHEAD");
    int window = env ? atoi(env) : 4, ahead = window > 0;
    int early = window < NX + 1 ? window : NX + 1; /* device 1's while the gates hold */
    static double tmem[NB * NB], smem[NB * NB], xmem[NX][NB * NB], wmem[NB * NB], ymem[NB * NB];
    weft_data_t *tok = tile(ctx, tmem, 0, 1), *s = tile(ctx, smem, 0, 2), *x[NX];
    for (int i = 0; i < NX; i++) x[i] = tile(ctx, xmem[i], i + 1, 0);
    weft_data_t *w = tile(ctx, wmem, 100, 0), *y = tile(ctx, ymem, 1000, 0);

    weft_taskpool_t *tp = weft_taskpool_new(ctx, "ahead");
    REQUIRE(weft_insert_task(tp, &devgate_gate, WEFT_RW | WEFT_AFFINITY, tok, 0) == 0);
    REQUIRE(weft_insert_task(tp, &devgate_gate, WEFT_RW | WEFT_AFFINITY, s, 0) == 0);
    /* Device 1: readers of final versions. */
    for (int i = 0; i < NX; i++)
        REQUIRE(weft_insert_task(tp, &devgate_use, WEFT_R, x[i], WEFT_RW | WEFT_AFFINITY, tok, 0) ==
                0);
    /* W read on device 1, then written on device 2 (after that read), then
     * read again on device 1; Y written on device 2 before its one read on
     * device 1. */
    REQUIRE(weft_insert_task(tp, &devgate_use, WEFT_R, w, WEFT_RW | WEFT_AFFINITY, tok, 0) == 0);
    REQUIRE(weft_insert_task(tp, &bump, WEFT_RW, w, WEFT_RW | WEFT_AFFINITY, s, 0) == 0);
    REQUIRE(weft_insert_task(tp, &bump, WEFT_RW, y, WEFT_RW | WEFT_AFFINITY, s, 0) == 0);
    REQUIRE(weft_insert_task(tp, &devgate_use, WEFT_R, w, WEFT_RW | WEFT_AFFINITY, tok, 0) == 0);
    REQUIRE(weft_insert_task(tp, &devgate_use, WEFT_R, y, WEFT_RW | WEFT_AFFINITY, tok, 0) == 0);

    int64_t t = NB * NB * (int64_t)sizeof(double);
    if (ahead) {
        /* Device 1: the X's and W, as many as the window holds; device 2:
         * W and Y, which its bumps read first. */
        CHECK(wait_prefetches(ctx, early, 2));
        struct timespec settle = {0, 50000000};
        nanosleep(&settle, NULL);
        weft_device_counters_t c1 = devgate_counters(ctx, 1);
        printf("while the gates hold: device 1 prefetched %lld tiles, %lld tiles in\n",
               (long long)c1.prefetches, (long long)((c1.bytes_h2d + c1.bytes_d2d) / t));
        /* Not Y (written first on device 2), nor W again: T, the X's, W. */
        CHECK(c1.prefetches == early);
        CHECK(c1.bytes_h2d + c1.bytes_d2d == (early + 1) * t);
    }
    atomic_store(&devgate_open, 1);
    CHECK(weft_taskpool_wait(tp) == WEFT_SUCCESS);
    weft_taskpool_free(tp);

    weft_device_counters_t c1 = devgate_counters(ctx, 1), c2 = devgate_counters(ctx, 2);
    printf("device 1: %lld prefetches, H2D %lld D2D %lld tiles; device 2: %lld prefetches\n",
           (long long)c1.prefetches, (long long)(c1.bytes_h2d / t), (long long)(c1.bytes_d2d / t),
           (long long)c2.prefetches);
    /* Once the bumps ended, device 1 may fetch their versions ahead too. */
    CHECK(ahead ? c1.prefetches >= early && c2.prefetches >= 2
                : c1.prefetches == 0 && c2.prefetches == 0);
    /* The zone holds every tile: nothing fetched ahead went unused. */
    CHECK(c1.prefetches_unused == 0 && c2.prefetches_unused == 0);
    /* Each version crossed once (T, the X's, W twice, Y): the readers found
     * the prefetched copies, and W's second reader fetched its new version. */
    CHECK(c1.bytes_h2d + c1.bytes_d2d == (NX + 4) * t);
    double want = 0;
    for (int i = 0; i < NX; i++) want += i + 1;
    want += 100 + 110 + 1010; /* W before and after its bump, Y after */
    CHECK(all_equal(tmem, want));
    CHECK(all_equal(wmem, 110) && all_equal(ymem, 1010));
    for (int i = 0; i < NX; i++) weft_data_release(x[i]);
    weft_data_release(w);
    weft_data_release(y);
    weft_data_release(s);
    weft_data_release(tok);
    CHECK(weft_fini(ctx) == WEFT_SUCCESS);
    return check_report("device_ahead");
}
