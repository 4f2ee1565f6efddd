/* The emu module and the registry on their own, through device.h only:
 * asynchronous 2D copies in stream order, events, kernels and their
 * failures, IPC through the shared-memory name, the peer matrix and its
 * mask, and the errors for devices asked for and absent. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/registry.h"

#include "../check.h"

static weft_devices_t *open_with(weft_params_t **p, const char *const *kv, int *rc)
{
    *rc = weft_params_create(p);
    for (int i = 0; kv[i] && *rc == 0; i += 2) *rc = weft_params__set(*p, kv[i], kv[i + 1]);
    weft_devices_t *ds = NULL;
    if (*rc == 0) *rc = weft_devices_open(*p, 0, NULL, &ds);
    /* Alone: no other rank shares the devices, the zones follow at once. */
    if (*rc == 0) *rc = weft_devices_make_zones(ds);
    if (*rc != 0 && ds) {
        weft_devices_close(ds);
        ds = NULL;
    }
    return ds;
}

/* The environment the last kernel ran with (written on the device thread,
 * read after an event of its stream said it is done). */
static weft_device_env_t seen;

static int sleepy_kernel(const weft_device_env_t *env, void *arg)
{
    double *x = arg;
    for (int i = 0; i < 1000; i++) x[i] = x[i] * 2.0 + 1.0;
    seen = *env;
    return 0;
}

static int failing_kernel(const weft_device_env_t *env, void *arg) { return -1; }

/* A strided 5 x 3 block into a contiguous one and back, then a kernel
 * that must see the copy's result, all queued before anything ran. */
static void copies_and_kernels(weft_device_t *dev)
{
    double host[8 * 3], back[8 * 3];
    for (int i = 0; i < 24; i++) host[i] = i;
    memset(back, 0, sizeof back);
    double *d = weft_zone_malloc(dev->zone, 1000 * sizeof(double));
    CHECK(d != NULL);
    const weft_device_ops_t *o = dev->ops;
    CHECK(o->copy_async(dev, WEFT_STREAM_IN, (weft_region_t){d, 5}, dev->index,
                        (weft_region_t){host, 8}, 0, 5, 3, sizeof(double)) == 0);
    CHECK(o->launch(dev, WEFT_STREAM_IN, sleepy_kernel, d) == 0);
    CHECK(o->copy_async(dev, WEFT_STREAM_IN, (weft_region_t){back, 8}, 0, (weft_region_t){d, 5},
                        dev->index, 5, 3, sizeof(double)) == 0);
    weft_event_t ev;
    CHECK(o->event_record(dev, WEFT_STREAM_IN, &ev) == 0);
    CHECK(o->event_sync(dev, &ev) == 0);
    CHECK(o->event_query(dev, &ev) == 0);
    o->event_destroy(dev, &ev);
    int ok = 1;
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 8; i++)
            ok &= back[i + 8 * j] == (i < 5 ? host[i + 8 * j] * 2.0 + 1.0 : 0.0);
    CHECK(ok);
    CHECK(seen.device == dev->index && seen.stream == WEFT_STREAM_IN);
    CHECK(seen.stream_handle != NULL && seen.blas == NULL && seen.solver == NULL);
    CHECK(seen.workspace == NULL && seen.workspace_bytes == 0); /* stream IN has none */
    /* A failing kernel shows in the next event of its stream only. */
    weft_event_t e1, e2;
    CHECK(o->launch(dev, WEFT_STREAM_EXEC0, failing_kernel, NULL) == 0);
    CHECK(o->event_record(dev, WEFT_STREAM_EXEC0, &e1) == 0);
    CHECK(o->launch(dev, WEFT_STREAM_EXEC0, sleepy_kernel, d) == 0);
    CHECK(o->event_record(dev, WEFT_STREAM_EXEC0, &e2) == 0);
    CHECK(o->event_sync(dev, &e1) == WEFT_ERR_TASK);
    CHECK(o->event_sync(dev, &e2) == WEFT_SUCCESS);
    CHECK(seen.stream == WEFT_STREAM_EXEC0 && seen.workspace != NULL);
    CHECK(seen.workspace_bytes == dev->workspace_bytes && seen.workspace_bytes > 0);
    CHECK(o->event_record(dev, 99, &e1) == WEFT_ERR_INVALID);
    CHECK(weft_zone_free(dev->zone, d) == 0);
}

/* The zone's name maps the same bytes in a second mapping. */
static void ipc(weft_device_t *a, weft_device_t *b)
{
    char handle[WEFT_IPC_HANDLE_MAX];
    size_t n = 0;
    CHECK(a->ops->ipc_export(a, handle, &n) == 0 && n > 1);
    void *base = NULL;
    CHECK(b->ops->ipc_import(b, handle, n, &base) == 0 && base != NULL);
    if (!base) return;
    ((volatile char *)a->zone_base)[123] = 42;
    CHECK(((volatile char *)base)[123] == 42);
    CHECK(b->ops->ipc_close(b, base) == 0);
    CHECK(b->ops->ipc_close(b, base) == WEFT_ERR_INVALID);
}

static void emu_devices(void)
{
    weft_params_t *p;
    int rc;
    const char *kv[] = {
        "device_emu_enabled", "3", "device_memory_limit", "1M", "device_cuda_enabled", "0", NULL};
    weft_devices_t *ds = open_with(&p, kv, &rc);
    CHECK(rc == 0 && ds && ds->n == 3);
    if (rc == 0) {
        CHECK(ds->dev[1]->zone_bytes == 1 << 20 && ds->dev[3]->type_index == 2);
        CHECK(weft_devices_peer(ds, 1, 2) && weft_devices_peer(ds, 3, 1));
        CHECK(!weft_devices_peer(ds, 1, 1) && !weft_devices_peer(ds, 0, 1));
        copies_and_kernels(ds->dev[2]);
        ipc(ds->dev[1], ds->dev[2]);
        weft_devices_close(ds);
    }
    weft_params_destroy(p);
}

static void peer_mask(void)
{
    weft_params_t *p;
    int rc;
    /* Devices 1 and 3 may copy directly; device 2 may not. */
    const char *kv[] = {"device_emu_enabled",
                        "3",
                        "device_peer_mask",
                        "5",
                        "device_memory_limit",
                        "1M",
                        "device_cuda_enabled",
                        "0",
                        NULL};
    weft_devices_t *ds = open_with(&p, kv, &rc);
    CHECK(rc == 0);
    if (rc == 0) {
        CHECK(weft_devices_peer(ds, 1, 3) && weft_devices_peer(ds, 3, 1));
        CHECK(!weft_devices_peer(ds, 1, 2) && !weft_devices_peer(ds, 2, 3));
        weft_devices_close(ds);
    }
    weft_params_destroy(p);
}

static void absent(void)
{
    weft_params_t *p;
    int rc;
    /* More CUDA devices than any machine here has, or no cuda module. */
    const char *kv[] = {"device_cuda_enabled", "16", NULL};
    weft_devices_t *ds = open_with(&p, kv, &rc);
    CHECK(rc == WEFT_ERR_NODEV && ds == NULL);
    weft_params_destroy(p);
    const char *kv2[] = {
        "device_emu_enabled", "2", "device_memory_limit", "100", "device_cuda_enabled", "0", NULL};
    ds = open_with(&p, kv2, &rc); /* a zone too small to hold anything */
    CHECK(rc == WEFT_ERR_DEVMEM && ds == NULL);
    weft_params_destroy(p);
}

int main(void)
{
    emu_devices();
    peer_mask();
    absent();
    return check_report("emu");
}
