/*
 * The GPU layer (src/device/gpu/) on a machine without a GPU: a vendor
 * table of this test's own over host memory (copies are memcpy, streams
 * and events records of the test) counts every call the layer makes and
 * fails the calls the test chooses. Checked: what open makes (streams and
 * their priorities, library handles and workspaces per execution stream)
 * and that close or a failed open gives all of it back; the event pool
 * (a second round creates no event); which copy call each kind of copy
 * takes; the error map and the message of a failed call; launch and the
 * environment its kernel gets, a kernel's left-behind error; peer access,
 * IPC handles and pinned host memory, each with its vendor code that is
 * not a failure.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/zone.h"
#include "device/gpu/gpu.h"

#include "../check.h"

/* ---- the fake vendor --------------------------------------------------- */

enum {
    FAKE_INVALID = 1,
    FAKE_OOM = 2,
    FAKE_NODEV = 100,
    FAKE_NOT_READY = 600,
    FAKE_PEER_ENABLED = 704,
    FAKE_REGISTERED = 712,
    FAKE_NOT_REGISTERED = 713,
    FAKE_STICKY = 700, /* an illegal address: the context is broken */
    FAKE_OTHER = 999
};
enum { FAKE_LEAST = 0, FAKE_GREATEST = -5, FAKE_DEVICES = 2 };

typedef enum { CALL_ALLOC, CALL_STREAM, CALL_EVENT, CALL_LIBS, CALL_KINDS } fake_call_t;

/* Everything the fake runtime did, and the failure it is told to make. */
static struct {
    int current, last_error;
    int made[CALL_KINDS], freed[CALL_KINDS];
    int copies_1d, copies_2d, copies_peer, queries_pending, peer_enables;
    int query_error; /* what every event query returns (a sticky error), 0 none */
    int calls;       /* runtime calls on streams, events, copies and memory */
    int fail_call, fail_after, fail_code; /* fail_call's call number fail_after + 1 fails */
    int record_error;                     /* what the next event record returns (then 0), 0 none */
    int syncs;                            /* stream synchronizations */
    void *pinned;
    int prio[WEFT_MAX_STREAMS], nprio;
} fake = {.fail_call = -1};

static int fake_fails(fake_call_t call)
{
    if ((int)call != fake.fail_call || fake.fail_after-- > 0) return 0;
    fake.fail_call = -1;
    fake.last_error = fake.fail_code;
    return fake.fail_code;
}

static const char *fake_name(int err) { return err == FAKE_OOM ? "fakeErrorOOM" : "fakeError"; }
static const char *fake_string(int err) { return err == FAKE_OOM ? "out of memory" : "failure"; }

static int fake_last(void)
{
    int e = fake.last_error;
    fake.last_error = 0;
    return e;
}

static int fake_count(int *n)
{
    *n = FAKE_DEVICES;
    return 0;
}

static int fake_set(int o) { return o < FAKE_DEVICES ? (fake.current = o, 0) : FAKE_NODEV; }

static int fake_get(int *o)
{
    *o = fake.current;
    return 0;
}

static int fake_mem_info(size_t *f, size_t *t)
{
    *f = (size_t)900 << 20;
    *t = (size_t)1 << 30;
    return 0;
}

static int fake_uuid(int o, unsigned char u[16])
{
    for (int i = 0; i < 16; i++) u[i] = (unsigned char)(16 * o + i);
    return 0;
}

static int fake_alloc(void **p, size_t bytes)
{
    fake.calls++;
    int err = fake_fails(CALL_ALLOC);
    if (err) return err;
    *p = aligned_alloc(256, (bytes + 255) & ~(size_t)255);
    fake.made[CALL_ALLOC]++;
    return *p ? 0 : FAKE_OOM;
}

static int fake_free(void *p)
{
    fake.calls++;
    free(p);
    fake.freed[CALL_ALLOC]++;
    return 0;
}

static int fake_prios(int *least, int *greatest)
{
    *least = FAKE_LEAST;
    *greatest = FAKE_GREATEST;
    return 0;
}

static int fake_stream_create(void **s, int prio)
{
    int err = fake_fails(CALL_STREAM);
    if (err) return err;
    fake.prio[fake.nprio++ % WEFT_MAX_STREAMS] = prio;
    fake.made[CALL_STREAM]++;
    *s = malloc(1);
    return 0;
}

static int fake_stream_destroy(void *s)
{
    fake.calls++;
    free(s);
    fake.freed[CALL_STREAM]++;
    return 0;
}

static int fake_ok_stream(void *s)
{
    fake.calls++;
    return 0;
}

static int fake_stream_sync(void *s)
{
    fake.syncs++;
    return fake_ok_stream(s);
}

static int fake_event_record(void *e, void *s)
{
    fake.calls++;
    int err = fake.record_error;
    fake.record_error = 0;
    return err ? (fake.last_error = err) : 0;
}

static int fake_ok_2(void *a, void *b)
{
    fake.calls++;
    return 0;
}

static int fake_event_create(void **e)
{
    fake.made[CALL_EVENT]++;
    *e = malloc(1);
    return 0;
}

static int fake_event_destroy(void *e)
{
    fake.calls++;
    free(e);
    fake.freed[CALL_EVENT]++;
    return 0;
}

static int fake_event_query(void *e)
{
    fake.calls++;
    if (fake.query_error) return fake.last_error = fake.query_error;
    if (fake.queries_pending == 0) return 0;
    fake.queries_pending--;
    return FAKE_NOT_READY;
}

static int fake_copy_1d(void *dst, const void *src, size_t bytes, void *s)
{
    memcpy(dst, src, bytes);
    fake.copies_1d++;
    return 0;
}

static int fake_copy_2d(void *dst, size_t dp, const void *src, size_t sp, size_t w, size_t rows,
                        void *s)
{
    for (size_t r = 0; r < rows; r++) memcpy((char *)dst + r * dp, (const char *)src + r * sp, w);
    fake.copies_2d++;
    return 0;
}

static int fake_copy_peer(void *dst, const void *src, size_t bytes, void *s)
{
    memcpy(dst, src, bytes);
    fake.copies_peer++;
    return 0;
}

static int fake_peer_can(int *can, int a, int b)
{
    *can = 1;
    return 0;
}

/* Already enabled from the second time on, as the runtimes say. */
static int fake_peer_enable(int o) { return fake.peer_enables++ ? FAKE_PEER_ENABLED : 0; }

static int fake_ipc_get(void *h, void *base)
{
    memcpy(h, &base, sizeof base);
    return 0;
}

static int fake_ipc_open(void **base, const void *h)
{
    memcpy(base, h, sizeof *base);
    return 0;
}

static int fake_ipc_close(void *base) { return 0; }

static int fake_register(void *p, size_t bytes)
{
    if (fake.pinned == p) return FAKE_REGISTERED;
    fake.pinned = p;
    return 0;
}

static int fake_unregister(void *p)
{
    if (fake.pinned != p) return FAKE_NOT_REGISTERED;
    fake.pinned = NULL;
    return 0;
}

static void fake_is_pinned(const void *p, int *pinned) { *pinned = p == fake.pinned; }

static int fake_libs_open(const weft_device_t *dev, void *s, void **blas, void **solver)
{
    int err = fake_fails(CALL_LIBS);
    if (err) return WEFT_ERR_INTERNAL;
    fake.made[CALL_LIBS]++;
    *blas = malloc(1);
    *solver = s; /* any non-NULL handle: the layer only hands it on */
    return 0;
}

static void fake_libs_close(const weft_device_t *dev, void *blas, void *solver)
{
    if (blas == NULL) return;
    free(blas);
    fake.freed[CALL_LIBS]++;
}

static const weft_gpu_errmap_t fake_errors[] = {{FAKE_OOM, WEFT_ERR_DEVMEM},
                                                {FAKE_NODEV, WEFT_ERR_NODEV},
                                                {FAKE_INVALID, WEFT_ERR_INVALID},
                                                {FAKE_STICKY, WEFT_ERR_DEVICE},
                                                {0, 0}};

static const weft_gpu_vendor_t fake_vendor = {
    .name = "fake",
    .type = WEFT_DEV_HIP, /* any type with a table of its own */
    .headroom_context = 1000,
    .headroom_per_stream = 10,
    .ipc_handle_bytes = sizeof(void *),
    .err_not_ready = FAKE_NOT_READY,
    .err_peer_enabled = FAKE_PEER_ENABLED,
    .err_host_registered = FAKE_REGISTERED,
    .err_host_not_registered = FAKE_NOT_REGISTERED,
    .errors = fake_errors,
    .error_name = fake_name,
    .error_string = fake_string,
    .last_error = fake_last,
    .device_count = fake_count,
    .set_device = fake_set,
    .get_device = fake_get,
    .mem_info = fake_mem_info,
    .uuid = fake_uuid,
    .mem_alloc = fake_alloc,
    .mem_free = fake_free,
    .stream_priorities = fake_prios,
    .stream_create = fake_stream_create,
    .stream_destroy = fake_stream_destroy,
    .stream_sync = fake_stream_sync,
    .stream_wait_event = fake_ok_2,
    .event_create = fake_event_create,
    .event_destroy = fake_event_destroy,
    .event_record = fake_event_record,
    .event_query = fake_event_query,
    .event_sync = fake_ok_stream,
    .copy_1d = fake_copy_1d,
    .copy_2d = fake_copy_2d,
    .copy_peer = fake_copy_peer,
    .peer_can = fake_peer_can,
    .peer_enable = fake_peer_enable,
    .ipc_get = fake_ipc_get,
    .ipc_open = fake_ipc_open,
    .ipc_close = fake_ipc_close,
    .host_register = fake_register,
    .host_unregister = fake_unregister,
    .host_is_pinned = fake_is_pinned,
    .libs_open = fake_libs_open,
    .libs_close = fake_libs_close,
};

static int fake_open(weft_device_t *dev, int index)
{
    return weft_gpu_open(&fake_vendor, dev, index);
}

static const weft_device_ops_t fake_ops = {
    .name = "fake",
    .type = WEFT_DEV_HIP,
    .open = fake_open,
    .close = weft_gpu_close,
    .identity = weft_gpu_identity,
    .mem_reserve = weft_gpu_mem_reserve,
    .mem_release = weft_gpu_mem_release,
    .copy_async = weft_gpu_copy_async,
    .event_record = weft_gpu_event_record,
    .event_query = weft_gpu_event_query,
    .event_sync = weft_gpu_event_sync,
    .event_destroy = weft_gpu_event_destroy,
    .launch = weft_gpu_launch,
    .can_access_peer = weft_gpu_can_access_peer,
    .ipc_export = weft_gpu_ipc_export,
    .ipc_import = weft_gpu_ipc_import,
    .stream_handle = weft_gpu_stream_handle,
};

/* ---- the checks -------------------------------------------------------- */

#define WS_BYTES 4096
#define NEXEC WEFT_GPU_EXEC_STREAMS_DEFAULT

static int made(fake_call_t c) { return fake.made[c] - fake.freed[c]; }

static int open_at(weft_device_t *dev, int ordinal)
{
    memset(dev, 0, sizeof *dev);
    dev->ops = &fake_ops;
    dev->index = ordinal + 1;
    dev->workspace_bytes = WS_BYTES;
    return fake_ops.open(dev, ordinal);
}

/* Three copy streams first and the urgent one (none here) served first,
 * execution streams last; a library pair and a workspace each. */
static void test_open(weft_device_t *dev)
{
    fake.nprio = 0;
    REQUIRE(open_at(dev, 0) == WEFT_SUCCESS);
    CHECK(dev->nstreams == WEFT_STREAM_EXEC0 + NEXEC && dev->urgent_stream == -1);
    CHECK(made(CALL_STREAM) == WEFT_STREAM_EXEC0 + NEXEC && made(CALL_LIBS) == NEXEC);
    CHECK(made(CALL_ALLOC) == NEXEC); /* the workspaces */
    for (int s = 0; s < fake.nprio; s++)
        CHECK(fake.prio[s] == (s < WEFT_STREAM_EXEC0 ? FAKE_GREATEST : FAKE_LEAST));
    CHECK(dev->headroom_bytes == 1000 + NEXEC * (10 + WS_BYTES));
    CHECK(dev->caps == WEFT_DEVCAP_IPC);
    char key[WEFT_DEVICE_KEY_MAX];
    CHECK(fake_ops.identity(dev, key, sizeof key) == 0);
    CHECK(strcmp(key, "fake-000102030405060708090a0b0c0d0e0f") == 0);
    CHECK(fake_ops.identity(dev, key, 10) == WEFT_ERR_INVALID);
}

/* A failure part way through open gives back what was made. */
static void test_open_fails(void)
{
    weft_device_t dev;
    int streams = made(CALL_STREAM), libs = made(CALL_LIBS), allocs = made(CALL_ALLOC);
    static const fake_call_t calls[] = {CALL_STREAM, CALL_ALLOC, CALL_LIBS};
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        fake_call_t call = calls[i];
        fake.fail_call = (int)call;
        fake.fail_after = 2;
        fake.fail_code = FAKE_OOM;
        int rc = open_at(&dev, 1);
        CHECK(rc == (call == CALL_LIBS ? WEFT_ERR_INTERNAL : WEFT_ERR_DEVMEM));
        CHECK(dev.priv == NULL);
        CHECK(made(CALL_STREAM) == streams && made(CALL_LIBS) == libs);
        CHECK(made(CALL_ALLOC) == allocs);
    }
    CHECK(open_at(&dev, FAKE_DEVICES) == WEFT_ERR_NODEV && dev.priv == NULL);
}

static void test_events(weft_device_t *dev)
{
    enum { N = 70 };
    weft_event_t ev[N];
    int before = fake.made[CALL_EVENT];
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < N; i++)
            CHECK(fake_ops.event_record(dev, i % dev->nstreams, &ev[i]) == 0);
        for (int i = 0; i < N; i++) fake_ops.event_destroy(dev, &ev[i]);
    }
    CHECK(fake.made[CALL_EVENT] - before == N); /* the second round from the pool */
    CHECK(fake_ops.event_record(dev, WEFT_STREAM_IN, &ev[0]) == 0);
    fake.queries_pending = 3;
    int again = 0, rc;
    while ((rc = fake_ops.event_query(dev, &ev[0])) == WEFT_AGAIN) again++;
    CHECK(rc == WEFT_SUCCESS && again == 3);
    fake_ops.event_destroy(dev, &ev[0]);
    CHECK(ev[0].handle == NULL);
    CHECK(fake_ops.event_record(dev, dev->nstreams, &ev[0]) == WEFT_ERR_INVALID);
    /* A record that fails (the device still well) returns once the
     * stream's work is over: the caller gives back what it used. */
    int syncs = fake.syncs;
    fake.record_error = FAKE_OOM;
    capture_begin();
    CHECK(fake_ops.event_record(dev, WEFT_STREAM_IN, &ev[0]) == WEFT_ERR_DEVMEM);
    capture_end();
    CHECK(fake.syncs == syncs + 1 && !weft_device_is_broken(dev));
}

/* Contiguous on one device: 1D; strided: 2D; contiguous between two
 * devices: the peer copy. The bytes arrive each time. */
static void test_copies(weft_device_t *dev)
{
    enum { R = 5, C = 4, LD = 7 };
    double src[LD * C], dst[LD * C];
    for (int i = 0; i < LD * C; i++) src[i] = i;
    weft_region_t s = {src, LD}, d = {dst, LD}, sc = {src, R}, dc = {dst, R};
    memset(dst, 0, sizeof dst);
    CHECK(fake_ops.copy_async(dev, WEFT_STREAM_IN, d, 1, s, 0, R, C, sizeof(double)) == 0);
    int ok = 1;
    for (int j = 0; j < C; j++)
        for (int i = 0; i < LD; i++) ok &= dst[i + j * LD] == (i < R ? src[i + j * LD] : 0.0);
    CHECK(ok && fake.copies_2d == 1);
    CHECK(fake_ops.copy_async(dev, WEFT_STREAM_IN, dc, 1, sc, 1, R, C, sizeof(double)) == 0);
    CHECK(fake.copies_1d == 1 && memcmp(dst, src, sizeof(double) * R * C) == 0);
    CHECK(fake_ops.copy_async(dev, WEFT_STREAM_IN, dc, 1, sc, 2, R, C, sizeof(double)) == 0);
    CHECK(fake.copies_peer == 1 && fake.copies_1d == 1 && fake.copies_2d == 1);
    CHECK(fake_ops.copy_async(dev, 0, d, 1, s, 0, R, C, 0) == WEFT_ERR_INVALID);
    CHECK(fake_ops.copy_async(dev, 0, (weft_region_t){dst, R - 1}, 1, s, 0, R, C, 8) ==
          WEFT_ERR_INVALID);
    CHECK(fake.copies_peer + fake.copies_1d + fake.copies_2d == 3);
}

/* A failed call: its weft status from the map (unlisted: internal), its
 * message, and the thread's last error cleared. */
static void test_errors(weft_device_t *dev)
{
    void *p = NULL;
    fake.fail_call = CALL_ALLOC;
    fake.fail_after = 0;
    fake.fail_code = FAKE_OOM;
    capture_begin();
    int rc = fake_ops.mem_reserve(dev, 1 << 20, &p);
    const char *text = capture_end();
    CHECK(rc == WEFT_ERR_DEVMEM && p == NULL && fake.last_error == 0);
    CHECK(strstr(text, "fakeMalloc (device zone) failed: out of memory (fakeErrorOOM)") != NULL);
    fake.fail_call = CALL_ALLOC;
    fake.fail_code = FAKE_OTHER;
    CHECK(fake_ops.mem_reserve(dev, 1 << 20, &p) == WEFT_ERR_INTERNAL && p == NULL);
    CHECK(fake_ops.mem_reserve(dev, 1 << 20, &p) == WEFT_SUCCESS && p != NULL);
    fake_ops.mem_release(dev, p, 1 << 20);
}

typedef struct launch_arg {
    weft_device_env_t env;
    int leave_error, rc;
} launch_arg_t;

static int kernel(const weft_device_env_t *env, void *arg)
{
    launch_arg_t *a = arg;
    a->env = *env;
    if (a->leave_error) fake.last_error = FAKE_OTHER; /* as a failed kernel launch does */
    return a->rc;
}

static void test_launch(weft_device_t *dev)
{
    for (int x = WEFT_STREAM_EXEC0; x < dev->nstreams; x++) {
        launch_arg_t a = {.rc = 0};
        CHECK(fake_ops.launch(dev, x, kernel, &a) == WEFT_SUCCESS);
        CHECK(a.env.device == dev->index && a.env.stream == x);
        CHECK(a.env.stream_handle == fake_ops.stream_handle(dev, x) && a.env.stream_handle);
        CHECK(a.env.solver == a.env.stream_handle && a.env.blas != NULL); /* bound to it */
        CHECK(a.env.workspace != NULL && a.env.workspace_bytes == WS_BYTES);
    }
    launch_arg_t a = {.rc = -42};
    CHECK(fake_ops.launch(dev, WEFT_STREAM_EXEC0, kernel, &a) == -42);
    a = (launch_arg_t){.leave_error = 1};
    CHECK(fake_ops.launch(dev, WEFT_STREAM_EXEC0, kernel, &a) == WEFT_ERR_TASK);
    CHECK(fake.last_error == 0);
    a = (launch_arg_t){.leave_error = 1, .rc = WEFT_ERR_DEVMEM};
    CHECK(fake_ops.launch(dev, WEFT_STREAM_EXEC0, kernel, &a) == WEFT_ERR_DEVMEM);
    a = (launch_arg_t){.rc = 0, .env.stream = -1};
    CHECK(fake_ops.launch(dev, WEFT_STREAM_PREFETCH, kernel, &a) == WEFT_ERR_INVALID);
    CHECK(a.env.stream == -1); /* not run */
}

static void test_peer_ipc_pinned(weft_device_t *d0, weft_device_t *d1)
{
    fake.peer_enables = 0;
    CHECK(fake_ops.can_access_peer(d0, d1) == 1 && fake_ops.can_access_peer(d1, d0) == 1);
    CHECK(fake.peer_enables == 2); /* the second said "already enabled" */
    CHECK(fake_ops.can_access_peer(d0, d0) == 1 && fake.peer_enables == 2);
    weft_device_t other = {.ops = &(weft_device_ops_t){.type = WEFT_DEV_CUDA}, .priv = d1->priv};
    CHECK(fake_ops.can_access_peer(d0, &other) == 0);

    d0->zone_base = (void *)(uintptr_t)0x12345600;
    unsigned char h[WEFT_IPC_HANDLE_MAX];
    size_t n = 0;
    void *base = NULL;
    CHECK(fake_ops.ipc_export(d0, h, &n) == 0 && n == sizeof(void *));
    CHECK(fake_ops.ipc_import(d1, h, n, &base) == 0 && base == d0->zone_base);
    CHECK(fake_ops.ipc_import(d1, h, n + 1, &base) == WEFT_ERR_INVALID);
    d0->zone_base = NULL;
    CHECK(fake_ops.ipc_export(d0, h, &n) == WEFT_ERR_INVALID);

    static double buf[64];
    CHECK(weft_gpu_host_register(&fake_vendor, "reg", buf, sizeof buf) == WEFT_SUCCESS);
    CHECK(weft_gpu_host_is_pinned(&fake_vendor, buf) == 1);
    CHECK(weft_gpu_host_register(&fake_vendor, "reg", buf, sizeof buf) == WEFT_ERR_INVALID);
    CHECK(weft_gpu_host_register(&fake_vendor, "reg", NULL, 8) == WEFT_ERR_INVALID);
    CHECK(weft_gpu_host_unregister(&fake_vendor, "unreg", buf) == WEFT_SUCCESS);
    CHECK(weft_gpu_host_unregister(&fake_vendor, "unreg", buf) == WEFT_ERR_INVALID);
    CHECK(weft_gpu_host_is_pinned(&fake_vendor, buf) == 0);
}

/* A sticky error (an illegal address in a kernel, reported by the next
 * event query): the device is broken, named once; every later operation
 * fails with WEFT_ERR_DEVICE without calling the runtime, and close asks
 * nothing of the dead context (the driver takes it all back at exit). */
static void test_sticky(void)
{
    weft_device_t dev;
    int before[CALL_KINDS];
    for (int c = 0; c < CALL_KINDS; c++) before[c] = made(c);
    REQUIRE(open_at(&dev, 1) == WEFT_SUCCESS);
    snprintf(dev.name, sizeof dev.name, "fake9");
    weft_event_t ev;
    REQUIRE(fake_ops.event_record(&dev, WEFT_STREAM_EXEC0, &ev) == WEFT_SUCCESS);
    fake.query_error = FAKE_STICKY;
    capture_begin();
    CHECK(fake_ops.event_query(&dev, &ev) == WEFT_ERR_DEVICE);
    const char *text = capture_end();
    CHECK(weft_device_is_broken(&dev));
    CHECK(strstr(text, "device fake9 failed: fakeEventQuery reported fakeError (failure), a sticky "
                       "error; it is broken for the rest of the run") != NULL);
    fake_ops.event_destroy(&dev, &ev);
    int calls = fake.calls, copies = fake.copies_1d + fake.copies_2d + fake.copies_peer;
    double x[4] = {0}, y[4] = {0};
    weft_region_t rx = {x, 2}, ry = {y, 2};
    launch_arg_t a = {.rc = 0, .env.stream = -1};
    void *p = NULL;
    capture_begin();
    CHECK(fake_ops.event_query(&dev, &ev) == WEFT_ERR_DEVICE);
    CHECK(fake_ops.event_record(&dev, WEFT_STREAM_IN, &ev) == WEFT_ERR_DEVICE);
    CHECK(fake_ops.copy_async(&dev, WEFT_STREAM_IN, rx, 1, ry, 0, 2, 2, 8) == WEFT_ERR_DEVICE);
    CHECK(fake_ops.launch(&dev, WEFT_STREAM_EXEC0, kernel, &a) == WEFT_ERR_DEVICE);
    CHECK(fake_ops.mem_reserve(&dev, 256, &p) == WEFT_ERR_DEVICE && p == NULL);
    fake_ops.close(&dev);
    text = capture_end();
    CHECK(strstr(text, "error") == NULL); /* said once, above */
    CHECK(a.env.stream == -1);            /* not run */
    CHECK(fake.calls == calls && fake.copies_1d + fake.copies_2d + fake.copies_peer == copies);
    CHECK(dev.priv == NULL);
    fake.query_error = 0;
    fake.last_error = 0;
    /* What the dead context held goes back with the process. */
    for (int c = 0; c < CALL_KINDS; c++) fake.freed[c] += made(c) - before[c];
}

int main(void)
{
    int n = 0;
    CHECK(weft_gpu_probe(&fake_vendor, &n) == 0 && n == FAKE_DEVICES);
    weft_device_t d0, d1;
    test_open(&d0);
    test_open_fails();
    REQUIRE(open_at(&d1, 1) == WEFT_SUCCESS);
    test_events(&d0);
    test_copies(&d0);
    test_errors(&d0);
    test_launch(&d0);
    test_peer_ipc_pinned(&d0, &d1);
    test_sticky();
    fake_ops.close(&d1);
    fake_ops.close(&d0);
    CHECK(d0.priv == NULL && d1.priv == NULL);
    for (int c = 0; c < CALL_KINDS; c++) CHECK(made(c) == 0); /* everything given back */
    printf("made %d streams, %d events, %d library pairs, %d allocations\n", fake.made[CALL_STREAM],
           fake.made[CALL_EVENT], fake.made[CALL_LIBS], fake.made[CALL_ALLOC]);
    return check_report("test_gpu_layer");
}
