/*
 * Smoke test of the CUDA device module (src/device/cuda/), driven through
 * its operations table without a weft context: open, a zone, strided 2D
 * round trips H2D -> D2D -> D2D -> D2H and a contiguous one, events and
 * their pool, pinned host memory, a launch whose kernel runs cusolverDnDpotrf
 * with its stream's handle and workspace (checked against LAPACKE), argument
 * errors, IPC export, and with 2 GPUs a copy between them.
 * Exit 0 when every check passes, 1 at the first failure (printed), 77
 * (skipped) when no GPU is visible.
 */
#include <cuda_runtime_api.h>
#include <cusolverDn.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/zone.h"
#include "device/cuda/cuda_device.h"
#include "device/gpu/gpu.h"

#include "../check.h"
#include "../device_gpu/smoke_util.h"

#define WORKSPACE_BYTES ((size_t)16 << 20)

static const weft_device_ops_t *ops = &weft_cuda_ops;

/* ---- helpers (../device_gpu/smoke_util.h) --------------------------------- */

static void open_device(weft_device_t *dev, int ordinal)
{
    smoke_open(dev, ops, ordinal, WORKSPACE_BYTES);
    smoke_zone(dev);
}

/* ---- copies ---------------------------------------------------------- */

/* host (ld 37) -H2D-> A (ld 32) -D2D-> B (ld 29, contiguous) -D2D-> C (ld
 * 40) -D2H-> host (ld 45, pinned), each step on another stream, ordered
 * by events. */
static void test_strided_round_trip(weft_device_t *dev)
{
    enum { R = 29, C = 23, LDH = 37, LDA = 32, LDC = 40, LDO = 45 };
    const size_t e = sizeof(double);
    double *h = malloc(sizeof(double) * LDH * C), *out = malloc(sizeof(double) * LDO * C);
    REQUIRE(h != NULL && out != NULL);
    fill(h, LDH, R, C, 1);
    for (int i = 0; i < LDO * C; i++) out[i] = -7.0;
    REQUIRE(weft_cuda_host_register(out, sizeof(double) * LDO * C) == WEFT_SUCCESS);
    REQUIRE(weft_cuda_host_is_pinned(out) == 1);
    REQUIRE(weft_cuda_host_is_pinned(h) == 0);
    printf("(the next line is an expected warning)\n");
    REQUIRE(weft_cuda_host_register(out, sizeof(double) * LDO * C) == WEFT_ERR_INVALID);

    void *a = weft_zone_malloc(dev->zone, e * LDA * C);
    void *b = weft_zone_malloc(dev->zone, e * R * C);
    void *c = weft_zone_malloc(dev->zone, e * LDC * C);
    REQUIRE(a != NULL && b != NULL && c != NULL);
    int d = dev->index, x0 = WEFT_STREAM_EXEC0, x1 = WEFT_STREAM_EXEC0 + 1;

    REQUIRE(ops->copy_async(dev, WEFT_STREAM_IN, region(a, LDA), d, region(h, LDH), 0, R, C, e) ==
            WEFT_SUCCESS);
    weft_event_t ev;
    REQUIRE(ops->event_record(dev, WEFT_STREAM_IN, &ev) == WEFT_SUCCESS);
    int rc, polls = 0;
    while ((rc = ops->event_query(dev, &ev)) == WEFT_AGAIN) polls++;
    REQUIRE(rc == WEFT_SUCCESS);
    ops->event_destroy(dev, &ev);
    printf("H2D strided done after %d polls returning WEFT_AGAIN\n", polls);

    REQUIRE(ops->copy_async(dev, x0, region(b, R), d, region(a, LDA), d, R, C, e) == 0);
    wait_event(dev, x0);
    REQUIRE(ops->copy_async(dev, x1, region(c, LDC), d, region(b, R), d, R, C, e) == 0);
    wait_event(dev, x1);
    REQUIRE(ops->copy_async(dev, WEFT_STREAM_OUT, region(out, LDO), 0, region(c, LDC), d, R, C,
                            e) == 0);
    wait_event(dev, WEFT_STREAM_OUT);
    REQUIRE(same(out, LDO, R, C, 1, -7.0));

    /* Contiguous both ways (the 1D path): pageable host, B reused. */
    fill(h, R, R, C, 2);
    REQUIRE(ops->copy_async(dev, WEFT_STREAM_IN, region(b, R), d, region(h, R), 0, R, C, e) == 0);
    wait_event(dev, WEFT_STREAM_IN);
    memset(h, 0, e * R * C);
    REQUIRE(ops->copy_async(dev, WEFT_STREAM_OUT, region(h, R), 0, region(b, R), d, R, C, e) == 0);
    wait_event(dev, WEFT_STREAM_OUT);
    REQUIRE(same(h, R, R, C, 2, 0.0));

    REQUIRE(weft_cuda_host_unregister(out) == WEFT_SUCCESS);
    REQUIRE(weft_cuda_host_is_pinned(out) == 0);
    REQUIRE(weft_zone_free(dev->zone, a) == 0 && weft_zone_free(dev->zone, b) == 0 &&
            weft_zone_free(dev->zone, c) == 0);
    free(h);
    free(out);
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
            REQUIRE(ops->event_query(dev, &ev[i]) == WEFT_SUCCESS);
            ops->event_destroy(dev, &ev[i]);
        }
    }
}

static void test_bad_arguments(weft_device_t *dev)
{
    double h[4], *a = weft_zone_malloc(dev->zone, sizeof h);
    REQUIRE(a != NULL);
    weft_event_t ev;
    printf("(the next lines are expected errors)\n");
    REQUIRE(ops->copy_async(dev, 99, region(a, 2), 1, region(h, 2), 0, 2, 2, 8) ==
            WEFT_ERR_INVALID);
    REQUIRE(ops->copy_async(dev, 0, region(a, 2), 1, region(h, 2), 0, 0, 2, 8) == WEFT_ERR_INVALID);
    REQUIRE(ops->copy_async(dev, 0, region(a, 1), 1, region(h, 2), 0, 2, 2, 8) == WEFT_ERR_INVALID);
    REQUIRE(ops->event_record(dev, -1, &ev) == WEFT_ERR_INVALID);
    REQUIRE(ops->ipc_import(dev, h, 3, (void **)&a) == WEFT_ERR_INVALID);
    REQUIRE(weft_cuda_host_register(NULL, 8) == WEFT_ERR_INVALID);
    REQUIRE(weft_cuda_host_unregister(h) == WEFT_ERR_INVALID);
    printf("(end of expected errors)\n");
    REQUIRE(weft_zone_free(dev->zone, a) == 0);
}

static void test_ipc_export(weft_device_t *dev)
{
    unsigned char handle[WEFT_IPC_HANDLE_MAX];
    size_t bytes = 0;
    REQUIRE(ops->ipc_export(dev, handle, &bytes) == WEFT_SUCCESS);
    REQUIRE(bytes == sizeof(cudaIpcMemHandle_t) && bytes <= WEFT_IPC_HANDLE_MAX);
}

/* ---- launch ---------------------------------------------------------- */

/* What a kernel of this test works on, and the environment it ran with. */
typedef struct smoke_arg {
    double *a;
    int n, ld;
    weft_device_env_t env;
} smoke_arg_t;

/* Kernel: the lower Cholesky factor of a with the stream's cuSOLVER
 * handle; devInfo at the start of the workspace, the work array after it
 * (the layout of apps/potrf_cuda.h). */
static int smoke_potrf(const weft_device_env_t *env, void *arg)
{
    smoke_arg_t *s = arg;
    s->env = *env;
    if (env->stream_handle == NULL || env->blas == NULL || env->solver == NULL) return -2;
    cusolverDnHandle_t h = env->solver;
    int lwork = 0;
    if (cusolverDnDpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, s->n, s->a, s->ld, &lwork) != 0)
        return -4;
    unsigned char *ws = env->workspace;
    if (ws == NULL || 256 + sizeof(double) * (size_t)lwork > env->workspace_bytes) return -5;
    if (cusolverDnDpotrf(h, CUBLAS_FILL_MODE_LOWER, s->n, s->a, s->ld, (double *)(ws + 256), lwork,
                         (int *)ws) != CUSOLVER_STATUS_SUCCESS)
        return -6;
    return 0;
}

/* Kernel: prints the cuSOLVER workspace of potrf for common tile sizes,
 * for choosing device_workspace. a is a device buffer of >= 2048^2. */
static int smoke_lwork(const weft_device_env_t *env, void *arg)
{
    static const int nb[] = {256, 512, 1024, 2048};
    smoke_arg_t *s = arg;
    for (size_t i = 0; i < sizeof nb / sizeof nb[0]; i++) {
        int lwork = 0;
        if (cusolverDnDpotrf_bufferSize(env->solver, CUBLAS_FILL_MODE_LOWER, nb[i], s->a, nb[i],
                                        &lwork) != 0)
            return -1;
        printf("cusolverDnDpotrf workspace for a %d x %d tile: %zu bytes (+256 devInfo)\n", nb[i],
               nb[i], sizeof(double) * (size_t)lwork);
    }
    return 0;
}

static int smoke_fail(const weft_device_env_t *env, void *arg) { return -42; }

static void test_launch(weft_device_t *dev)
{
    enum { N = 100, LD = 104 };
    double *h = malloc(sizeof(double) * LD * N), *ref = malloc(sizeof(double) * LD * N);
    REQUIRE(h != NULL && ref != NULL);
    for (int j = 0; j < N; j++)
        for (int i = 0; i < LD; i++)
            h[i + j * LD] = i >= N ? 0.0 : i == j ? N : 1.0 / (1.0 + i + j);
    memcpy(ref, h, sizeof(double) * LD * N);
    REQUIRE(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', N, ref, LD) == 0);

    void *a = weft_zone_malloc(dev->zone, sizeof(double) * LD * N);
    REQUIRE(a != NULL);
    int d = dev->index, x = WEFT_STREAM_EXEC0 + 2;
    REQUIRE(ops->copy_async(dev, x, region(a, LD), d, region(h, LD), 0, N, N, 8) == 0);
    smoke_arg_t s = {.a = a, .n = N, .ld = LD};
    REQUIRE(ops->launch(dev, x, smoke_potrf, &s) == 0);
    REQUIRE(s.env.device == d && s.env.stream == x);
    REQUIRE(s.env.stream_handle == ops->stream_handle(dev, x));
    REQUIRE(s.env.workspace != NULL && s.env.workspace_bytes == WORKSPACE_BYTES);
    int info = -1;
    REQUIRE(ops->copy_async(dev, x, region(h, LD), 0, region(a, LD), d, N, N, 8) == 0);
    REQUIRE(ops->copy_async(dev, x, region(&info, 1), 0, region(s.env.workspace, 1), d, 1, 1,
                            sizeof info) == 0);
    wait_event(dev, x);
    REQUIRE(info == 0);
    double err = 0.0;
    for (int j = 0; j < N; j++)
        for (int i = j; i < N; i++) err = fmax(err, fabs(h[i + j * LD] - ref[i + j * LD]));
    printf("launch: cusolverDnDpotrf n=%d on stream %d, max |L - L_lapack| = %.3g\n", N, x, err);
    REQUIRE(err < 1e-10);

    printf("(the next lines are expected errors)\n");
    REQUIRE(ops->launch(dev, WEFT_STREAM_IN, smoke_potrf, &s) == WEFT_ERR_INVALID);
    printf("(end of expected errors)\n");
    REQUIRE(ops->launch(dev, WEFT_STREAM_EXEC0, smoke_fail, &s) == -42);

    void *big = weft_zone_malloc(dev->zone, sizeof(double) * 2048 * 2048);
    REQUIRE(big != NULL);
    s = (smoke_arg_t){.a = big, .n = 2048, .ld = 2048};
    REQUIRE(ops->launch(dev, WEFT_STREAM_EXEC0, smoke_lwork, &s) == 0);
    REQUIRE(weft_zone_free(dev->zone, big) == 0 && weft_zone_free(dev->zone, a) == 0);
    free(h);
    free(ref);
}

/* ---- two GPUs -------------------------------------------------------- */

/* A tile of dev0 (ld 33) copied into dev1 (ld 30) on dev1's stage-in
 * stream, then read back from dev1. */
static void test_peer(weft_device_t *dev0, weft_device_t *dev1)
{
    enum { R = 27, C = 19, LD0 = 33, LD1 = 30, LDH = 31 };
    int p01 = ops->can_access_peer(dev0, dev1), p10 = ops->can_access_peer(dev1, dev0);
    printf("peer access: 0 -> 1 %s, 1 -> 0 %s\n", p01 ? "yes" : "no", p10 ? "yes" : "no");
    REQUIRE(p01 == p10);
    double *h = malloc(sizeof(double) * LDH * C);
    REQUIRE(h != NULL);
    fill(h, LDH, R, C, 3);
    void *a = weft_zone_malloc(dev0->zone, sizeof(double) * LD0 * C);
    void *b = weft_zone_malloc(dev1->zone, sizeof(double) * LD1 * C);
    REQUIRE(a != NULL && b != NULL);
    int d0 = dev0->index, d1 = dev1->index;
    REQUIRE(ops->copy_async(dev0, WEFT_STREAM_IN, region(a, LD0), d0, region(h, LDH), 0, R, C, 8) ==
            0);
    wait_event(dev0, WEFT_STREAM_IN);
    REQUIRE(ops->copy_async(dev1, WEFT_STREAM_IN, region(b, LD1), d1, region(a, LD0), d0, R, C,
                            8) == 0);
    wait_event(dev1, WEFT_STREAM_IN);
    for (int i = 0; i < LDH * C; i++) h[i] = -1.0;
    REQUIRE(ops->copy_async(dev1, WEFT_STREAM_OUT, region(h, LDH), 0, region(b, LD1), d1, R, C,
                            8) == 0);
    wait_event(dev1, WEFT_STREAM_OUT);
    REQUIRE(same(h, LDH, R, C, 3, -1.0));
    REQUIRE(weft_zone_free(dev0->zone, a) == 0 && weft_zone_free(dev1->zone, b) == 0);
    free(h);
}

int main(void)
{
    int count = 0;
    REQUIRE(ops->probe(&count) == WEFT_SUCCESS);
    if (count == 0) {
        printf("test_cuda_smoke: SKIPPED: no CUDA GPU visible "
               "(cudaGetDeviceCount reports no device or no driver)\n");
        return 77;
    }
    static weft_device_t dev[2];
    open_device(&dev[0], 0);
    test_strided_round_trip(&dev[0]);
    test_events(&dev[0]);
    test_bad_arguments(&dev[0]);
    test_ipc_export(&dev[0]);
    test_launch(&dev[0]);
    if (count >= 2) {
        open_device(&dev[1], 1);
        test_strided_round_trip(&dev[1]);
        test_peer(&dev[0], &dev[1]);
        close_device(&dev[1]);
    } else {
        printf("one GPU: peer copy not tested\n");
    }
    close_device(&dev[0]);
    printf("test_cuda_smoke: %d checks passed on %d GPU(s)\n", atomic_load(&checks),
           count >= 2 ? 2 : 1);
    return 0;
}
