/*
 * Smoke test of the GPU layer (src/device/gpu/) through one vendor's
 * operations table, without a weft context: argv[1] names the module
 * (cuda or hip). Open, identity, a zone, strided 2D round trips H2D -> D2D
 * -> D2H and a contiguous one, events and their pool, per-tile memory,
 * pinned host memory through the ops, a launch and the environment its
 * kernel gets, argument errors, IPC export, and with 2 GPUs contiguous and
 * strided copies between them (the peer path).
 * Exit 0 when every check passes, 1 at the first failure (printed), 77
 * (skipped) when the module is not built or no GPU of its kind is visible.
 * The cuda instance runs the same checks as the hip one on a GPU that CI
 * has, so that the layer the two share is tested where hip cannot be.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/zone.h"
#include "device/gpu/gpu.h"
#include "device/registry.h"

#include "../check.h"
#include "smoke_util.h"

#define WORKSPACE_BYTES ((size_t)1 << 20)

static const weft_device_ops_t *ops;

static const weft_device_ops_t *module_named(const char *name)
{
#ifdef WEFT_HAVE_CUDA
    if (strcmp(name, "cuda") == 0) return &weft_cuda_ops;
#endif
#ifdef WEFT_HAVE_HIP
    if (strcmp(name, "hip") == 0) return &weft_hip_ops;
#endif
    return NULL;
}

/* ---- helpers (smoke_util.h) --------------------------------------------- */

static void open_device(weft_device_t *dev, int ordinal)
{
    smoke_open(dev, ops, ordinal, WORKSPACE_BYTES);
    REQUIRE(dev->urgent_stream == -1 && dev->headroom_bytes > 4 * WORKSPACE_BYTES);
    char key[WEFT_DEVICE_KEY_MAX];
    REQUIRE(ops->identity(dev, key, sizeof key) == WEFT_SUCCESS);
    REQUIRE(strncmp(key, ops->name, strlen(ops->name)) == 0 &&
            strlen(key) == strlen(ops->name) + 33);
    smoke_zone(dev);
}

/* ---- copies ---------------------------------------------------------- */

/* host (ld 37) -H2D-> A (ld 32) -D2D-> B (contiguous) -D2H-> host (ld 45,
 * pinned through the ops), each step on another stream; then a contiguous
 * round trip through pageable memory. */
static void test_round_trip(weft_device_t *dev)
{
    enum { R = 29, C = 23, LDH = 37, LDA = 32, LDO = 45 };
    const size_t e = sizeof(double);
    double *h = malloc(e * LDH * C), *out = malloc(e * LDO * C);
    REQUIRE(h != NULL && out != NULL);
    fill(h, LDH, R, C, 1);
    for (int i = 0; i < LDO * C; i++) out[i] = -7.0;
    REQUIRE(ops->host_register(dev, out, e * LDO * C) == WEFT_SUCCESS);
    void *a = weft_zone_malloc(dev->zone, e * LDA * C), *b = weft_zone_malloc(dev->zone, e * R * C);
    REQUIRE(a != NULL && b != NULL);
    int d = dev->index, x = WEFT_STREAM_EXEC0 + 1;
    REQUIRE(ops->copy_async(dev, WEFT_STREAM_IN, region(a, LDA), d, region(h, LDH), 0, R, C, e) ==
            0);
    weft_event_t ev;
    REQUIRE(ops->event_record(dev, WEFT_STREAM_IN, &ev) == WEFT_SUCCESS);
    REQUIRE(ops->stream_wait(dev, x, &ev) == WEFT_SUCCESS);
    ops->event_destroy(dev, &ev);
    REQUIRE(ops->copy_async(dev, x, region(b, R), d, region(a, LDA), d, R, C, e) == 0);
    REQUIRE(ops->event_record(dev, x, &ev) == WEFT_SUCCESS);
    int rc, polls = 0;
    while ((rc = ops->event_query(dev, &ev)) == WEFT_AGAIN) polls++;
    REQUIRE(rc == WEFT_SUCCESS);
    ops->event_destroy(dev, &ev);
    printf("H2D strided then D2D done after %d polls returning WEFT_AGAIN\n", polls);
    REQUIRE(ops->copy_async(dev, WEFT_STREAM_OUT, region(out, LDO), 0, region(b, R), d, R, C, e) ==
            0);
    wait_event(dev, WEFT_STREAM_OUT);
    REQUIRE(same(out, LDO, R, C, 1, -7.0));

    fill(h, R, R, C, 2);
    REQUIRE(ops->copy_async(dev, WEFT_STREAM_IN, region(b, R), d, region(h, R), 0, R, C, e) == 0);
    wait_event(dev, WEFT_STREAM_IN);
    memset(h, 0, e * R * C);
    REQUIRE(ops->copy_async(dev, WEFT_STREAM_OUT, region(h, R), 0, region(b, R), d, R, C, e) == 0);
    wait_event(dev, WEFT_STREAM_OUT);
    REQUIRE(same(h, R, R, C, 2, 0.0));
    REQUIRE(ops->host_unregister(dev, out) == WEFT_SUCCESS);
    REQUIRE(weft_zone_free(dev->zone, a) == 0 && weft_zone_free(dev->zone, b) == 0);
    free(h);
    free(out);
}

/* A tile of its own allocation (device_alloc=tile), there and back. */
static void test_tile_alloc(weft_device_t *dev)
{
    enum { N = 1000 };
    double h[N], back[N];
    fill(h, N, N, 1, 3);
    void *t = NULL;
    REQUIRE(ops->mem_alloc_tile(dev, sizeof h, &t) == WEFT_SUCCESS && t != NULL);
    REQUIRE(ops->copy_async(dev, WEFT_STREAM_IN, region(t, N), dev->index, region(h, N), 0, N, 1,
                            sizeof(double)) == 0);
    REQUIRE(ops->copy_async(dev, WEFT_STREAM_IN, region(back, N), 0, region(t, N), dev->index, N, 1,
                            sizeof(double)) == 0);
    wait_event(dev, WEFT_STREAM_IN);
    REQUIRE(same(back, N, N, 1, 3, 0.0));
    ops->mem_free_tile(dev, t, sizeof h);
}

/* Many events at once, then again: the second round comes from the pool. */
static void test_events(weft_device_t *dev)
{
    enum { N = 100 };
    static weft_event_t ev[N];
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < N; i++)
            REQUIRE(ops->event_record(dev, WEFT_STREAM_EXEC0 + i % 4, &ev[i]) == 0);
        for (int i = N - 1; i >= 0; i--) {
            REQUIRE(ops->event_sync(dev, &ev[i]) == WEFT_SUCCESS);
            ops->event_destroy(dev, &ev[i]);
        }
    }
}

/* ---- launch ---------------------------------------------------------- */

static int kernel_seen(const weft_device_env_t *env, void *arg)
{
    *(weft_device_env_t *)arg = *env;
    return 0;
}

static int kernel_fail(const weft_device_env_t *env, void *arg) { return -42; }

static void test_launch(weft_device_t *dev)
{
    for (int x = WEFT_STREAM_EXEC0; x < dev->nstreams; x++) {
        weft_device_env_t env;
        memset(&env, 0, sizeof env);
        REQUIRE(ops->launch(dev, x, kernel_seen, &env) == WEFT_SUCCESS);
        REQUIRE(env.device == dev->index && env.stream == x);
        REQUIRE(env.stream_handle != NULL && env.stream_handle == ops->stream_handle(dev, x));
        REQUIRE(env.workspace != NULL && env.workspace_bytes == WORKSPACE_BYTES);
        REQUIRE((env.blas != NULL) == (env.solver != NULL)); /* both libraries or none */
    }
    REQUIRE(ops->launch(dev, WEFT_STREAM_EXEC0, kernel_fail, NULL) == -42);
    printf("(the next lines are expected errors)\n");
    weft_device_env_t env;
    REQUIRE(ops->launch(dev, WEFT_STREAM_OUT, kernel_seen, &env) == WEFT_ERR_INVALID);
    REQUIRE(ops->launch(dev, dev->nstreams, kernel_seen, &env) == WEFT_ERR_INVALID);
    printf("(end of expected errors)\n");
}

static void test_bad_arguments(weft_device_t *dev)
{
    double h[4], *a = weft_zone_malloc(dev->zone, sizeof h);
    REQUIRE(a != NULL);
    weft_event_t ev;
    void *base = NULL;
    printf("(the next lines are expected errors)\n");
    REQUIRE(ops->copy_async(dev, 99, region(a, 2), 1, region(h, 2), 0, 2, 2, 8) ==
            WEFT_ERR_INVALID);
    REQUIRE(ops->copy_async(dev, 0, region(a, 2), 1, region(h, 2), 0, 0, 2, 8) == WEFT_ERR_INVALID);
    REQUIRE(ops->copy_async(dev, 0, region(a, 1), 1, region(h, 2), 0, 2, 2, 8) == WEFT_ERR_INVALID);
    REQUIRE(ops->event_record(dev, -1, &ev) == WEFT_ERR_INVALID);
    REQUIRE(ops->stream_handle(dev, dev->nstreams) == NULL);
    REQUIRE(ops->ipc_import(dev, h, 3, &base) == WEFT_ERR_INVALID && base == NULL);
    REQUIRE(ops->host_register(dev, NULL, 8) == WEFT_ERR_INVALID);
    REQUIRE(ops->host_unregister(dev, h) == WEFT_ERR_INVALID);
    printf("(end of expected errors)\n");
    REQUIRE(weft_zone_free(dev->zone, a) == 0);
}

static void test_ipc_export(weft_device_t *dev)
{
    unsigned char handle[WEFT_IPC_HANDLE_MAX];
    size_t bytes = 0;
    REQUIRE(ops->ipc_export(dev, handle, &bytes) == WEFT_SUCCESS);
    REQUIRE(bytes >= 16 && bytes <= WEFT_IPC_HANDLE_MAX);
}

/* ---- two GPUs -------------------------------------------------------- */

/* dev0 -> dev1 contiguous (the vendor's peer copy), then strided (2D),
 * each read back from dev1. */
static void test_peer(weft_device_t *dev0, weft_device_t *dev1)
{
    enum { R = 27, C = 19, LD0 = 33, LD1 = 30 };
    int p01 = ops->can_access_peer(dev0, dev1), p10 = ops->can_access_peer(dev1, dev0);
    printf("peer access: 0 -> 1 %s, 1 -> 0 %s\n", p01 ? "yes" : "no", p10 ? "yes" : "no");
    REQUIRE(p01 == p10 && ops->can_access_peer(dev0, dev0) == 1);
    if (!p01) return; /* weft copies through host then: nothing of the layer's to test */
    double *h = malloc(sizeof(double) * LD0 * C);
    REQUIRE(h != NULL);
    void *a = weft_zone_malloc(dev0->zone, sizeof(double) * LD0 * C);
    void *b = weft_zone_malloc(dev1->zone, sizeof(double) * LD1 * C);
    REQUIRE(a != NULL && b != NULL);
    int d0 = dev0->index, d1 = dev1->index;
    for (int strided = 0; strided < 2; strided++) {
        int ld0 = strided ? LD0 : R, ld1 = strided ? LD1 : R;
        fill(h, ld0, R, C, 4 + strided);
        REQUIRE(ops->copy_async(dev0, WEFT_STREAM_IN, region(a, ld0), d0, region(h, ld0), 0, R, C,
                                8) == 0);
        wait_event(dev0, WEFT_STREAM_IN);
        REQUIRE(ops->copy_async(dev1, WEFT_STREAM_IN, region(b, ld1), d1, region(a, ld0), d0, R, C,
                                8) == 0);
        wait_event(dev1, WEFT_STREAM_IN);
        for (int i = 0; i < LD0 * C; i++) h[i] = -1.0;
        REQUIRE(ops->copy_async(dev1, WEFT_STREAM_OUT, region(h, ld1), 0, region(b, ld1), d1, R, C,
                                8) == 0);
        wait_event(dev1, WEFT_STREAM_OUT);
        REQUIRE(same(h, ld1, R, C, 4 + strided, -1.0));
    }
    REQUIRE(weft_zone_free(dev0->zone, a) == 0 && weft_zone_free(dev1->zone, b) == 0);
    free(h);
}

int main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : "cuda";
    ops = module_named(name);
    if (ops == NULL) {
        printf("test_gpu_smoke: SKIPPED: the %s module is not built into this weft\n", name);
        return 77;
    }
    int count = 0;
    REQUIRE(ops->probe(&count) == WEFT_SUCCESS);
    if (count == 0) {
        printf("test_gpu_smoke: SKIPPED: no %s GPU visible (no device or no driver)\n", name);
        return 77;
    }
    static weft_device_t dev[2];
    open_device(&dev[0], 0);
    test_round_trip(&dev[0]);
    test_tile_alloc(&dev[0]);
    test_events(&dev[0]);
    test_launch(&dev[0]);
    test_bad_arguments(&dev[0]);
    test_ipc_export(&dev[0]);
    if (count >= 2) {
        open_device(&dev[1], 1);
        test_peer(&dev[0], &dev[1]);
        close_device(&dev[1]);
    } else {
        printf("one GPU: peer copies not tested\n");
    }
    close_device(&dev[0]);
    printf("test_gpu_smoke %s: %d checks passed on %d GPU(s)\n", name, atomic_load(&checks),
           count >= 2 ? 2 : 1);
    return 0;
}
