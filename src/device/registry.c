/* The registry of device modules and the opening of the devices that the
 * parameters ask for. Adding a module is one line in `modules`. */
#include "device/registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/emu/emu_shm.h"
#include "util/log.h"

typedef struct module_entry {
    const char *param;            /* how many devices of this type */
    const char *what;             /* for messages */
    const weft_device_ops_t *ops; /* NULL: not compiled into this weft */
} module_entry_t;

static const module_entry_t modules[] = {
#ifdef WEFT_HAVE_CUDA
    {"device_cuda_enabled", "CUDA", &weft_cuda_ops},
#else
    {"device_cuda_enabled", "CUDA", NULL},
#endif
#ifdef WEFT_HAVE_HIP
    {"device_hip_enabled", "HIP", &weft_hip_ops},
#else
    {"device_hip_enabled", "HIP", NULL},
#endif
    {"device_emu_enabled", "emu", &weft_emu_ops},
};

void weft_device_set_broken(weft_device_t *dev, const char *why)
{
    int was = 0;
    if (!atomic_compare_exchange_strong(&dev->broken, &was, 1)) return;
    weft_log(WEFT_LOG_ERROR, dev->index,
             "device %s failed: %s; it is broken for the rest of the run: every later task, "
             "copy and transfer on it fails, and the tiles whose newest version only it held "
             "are lost",
             dev->name, why);
}

void weft_device_log_lost(const weft_device_t *dev, unsigned long long key, unsigned version)
{
    weft_error("data %llu: its newest version v%u is only on device %s, which failed: the "
               "version is lost",
               key, version, dev->name);
}

/* An event recorded by `record` (the module's own, or the one through the
 * fault site), waited for and destroyed. */
static int drain_with(weft_device_t *dev, int stream,
                      int (*record)(weft_device_t *, int, weft_event_t *))
{
    weft_event_t ev = {0};
    int rc = record(dev, stream, &ev);
    if (rc != WEFT_SUCCESS) return rc;
    rc = dev->ops->event_sync(dev, &ev);
    dev->ops->event_destroy(dev, &ev);
    return rc;
}

int weft_device_event_record(weft_device_t *dev, int stream, weft_event_t *ev)
{
    if (!weft_fault_hit(dev->fault, WEFT_FAULT_EVENT_RECORD, NULL))
        return dev->ops->event_record(dev, stream, ev);
    /* What a module does when its record fails: the work already on the
     * stream ends before the error returns (not counted by the site). */
    (void)drain_with(dev, stream, dev->ops->event_record);
    weft_log(WEFT_LOG_WARN, dev->index,
             "fault_inject: recording an event on stream %d of %s fails (injected)", stream,
             dev->name);
    return WEFT_ERR_INTERNAL; /* as an injected device_copy: the device itself is well */
}

int weft_device_stream_drain(weft_device_t *dev, int stream)
{
    return drain_with(dev, stream, weft_device_event_record);
}

int weft_device_check_alive(const weft_device_t *dev, const char *op)
{
    if (!weft_device_is_broken(dev)) return WEFT_SUCCESS;
    weft_debug(dev->index, "%s: %s refused: the device failed earlier", dev->name, op);
    return WEFT_ERR_DEVICE;
}

/* Of the free memory, what the driver keeps for itself (1/20). */
#define DRIVER_SHARE_DIV 20

size_t weft_device_zone_share(const weft_zone_share_in_t *in)
{
    size_t k = in->sharers > 1 ? (size_t)in->sharers : 1;
    /* floor(total * use / 100) without overflow */
    size_t budget =
        in->total / 100 * (size_t)in->use_pct + in->total % 100 * (size_t)in->use_pct / 100;
    /* Free memory was measured before the node's zones were reserved, but
     * maybe before another rank opened the device: each rank keeps room for
     * its own library workspaces and context beside the zones. */
    size_t room = in->free_min / DRIVER_SHARE_DIV + k * in->headroom;
    size_t avail = in->free_min > room ? in->free_min - room : 0;
    size_t share = (budget < avail ? budget : avail) / k;
    if (in->limit > 0 && share > in->limit) share = in->limit;
    return share & ~(size_t)(WEFT_ZONE_ALIGNMENT - 1);
}

static size_t zone_bytes(const weft_device_t *dev)
{
    weft_zone_share_in_t in = {
        .total = dev->share.total,
        .free_min = dev->share.free_min,
        .headroom = dev->headroom_bytes,
        .limit = (size_t)weft_params_int(dev->params, "device_memory_limit"),
        .use_pct = (int)weft_params_int(dev->params, "device_memory_use"),
        .sharers = dev->share.sharers,
    };
    return weft_device_zone_share(&in);
}

static int make_zone(weft_device_t *dev)
{
    size_t bytes = zone_bytes(dev);
    size_t limit = (size_t)weft_params_int(dev->params, "device_memory_limit");
    if (bytes < WEFT_ZONE_ALIGNMENT && limit > 0 && limit < WEFT_ZONE_ALIGNMENT) {
        /* The cap itself is below the zone's unit: the device's memory
         * was never the problem (the line below said 1 GiB free). */
        weft_error("%s: no memory for its zone: device_memory_limit=%zu is below the %d bytes "
                   "of the zone's smallest unit (raise it)",
                   dev->name, limit, (int)WEFT_ZONE_ALIGNMENT);
        return WEFT_ERR_DEVMEM;
    }
    if (bytes < WEFT_ZONE_ALIGNMENT) {
        /* The remedies that apply here only: the limit when it is set,
         * fewer ranks when several share the device, an emu device's own
         * size (a stranger was told to raise an unset limit and to run
         * fewer ranks, on one rank). */
        int emu = dev->ops && dev->ops->type == WEFT_DEV_EMU, shared = dev->share.sharers > 1;
        weft_error("%s: no memory for its zone: %zu bytes in all, %zu free, shared by %d "
                   "rank%s of the node, %zu bytes kept for each outside its zone: its share "
                   "(device_memory_use=%d%%%s) is below the %d bytes of the zone's smallest unit "
                   "(raise device_memory_use%s%s%s%s)",
                   dev->name, dev->share.total, dev->share.free_min, dev->share.sharers,
                   shared ? "s" : "", dev->headroom_bytes,
                   (int)weft_params_int(dev->params, "device_memory_use"),
                   limit > 0 ? ", capped by device_memory_limit" : "", (int)WEFT_ZONE_ALIGNMENT,
                   limit > 0 ? " or device_memory_limit" : "", emu ? " or device_emu_memory" : "",
                   shared ? ", or run fewer ranks a device" : "",
                   /* Its memory is a file there: a full file system was the
                    * cause the line did not name (a stranger's). */
                   emu ? "; an emu device's memory is a file in " WEFT_EMU_SHM_DIR
                         ", as large as its free space at most: free space there"
                       : "");
        return WEFT_ERR_DEVMEM;
    }
    dev->per_tile = weft_params_int(dev->params, "device_alloc") == 1;
    if (dev->per_tile) {
        /* The zone only counts: it hands out offsets in a range nobody
         * dereferences, and each copy gets its own allocation. */
        dev->zone_bytes = bytes;
        return weft_zone_create((void *)(uintptr_t)WEFT_ZONE_ALIGNMENT, bytes, WEFT_ZONE_ALIGNMENT,
                                &dev->zone) == WEFT_ZONE_OK
                   ? WEFT_SUCCESS
                   : WEFT_ERR_NOMEM;
    }
    int rc = dev->ops->mem_reserve(dev, bytes, &dev->zone_base);
    if (rc != WEFT_SUCCESS) {
        weft_error("%s: could not reserve %zu bytes of device memory", dev->name, bytes);
        return rc;
    }
    dev->zone_bytes = bytes;
    if (weft_zone_create(dev->zone_base, bytes, WEFT_ZONE_ALIGNMENT, &dev->zone) != WEFT_ZONE_OK) {
        dev->ops->mem_release(dev, dev->zone_base, bytes);
        dev->zone_base = NULL;
        return WEFT_ERR_NOMEM;
    }
    return WEFT_SUCCESS;
}

int weft_devices_make_zones(weft_devices_t *ds)
{
    for (int i = 1; i <= ds->n; i++) {
        int rc = make_zone(ds->dev[i]);
        if (rc != WEFT_SUCCESS) return rc;
    }
    return WEFT_SUCCESS;
}

/* The device alone on the node until weft_devshare_count says otherwise:
 * its memory as this rank sees it after opening it. */
static int measure(weft_device_t *dev)
{
    size_t free_b = 0, total = 0;
    int rc = dev->ops->mem_info(dev, &free_b, &total);
    if (rc != WEFT_SUCCESS) return rc;
    dev->share = (weft_device_share_t){.sharers = 1, .total = total, .free_min = free_b};
    return WEFT_SUCCESS;
}

/* The module's open, or the failure fault_inject asks for in its place
 * (*injected set: the line names it, not an absent device). */
static int open_device(weft_device_t *dev, weft_fault_t *fault, int *injected)
{
    *injected = weft_fault_hit(fault, WEFT_FAULT_DEVICE_OPEN, NULL);
    if (*injected) return WEFT_ERR_NODEV;
    return dev->ops->open(dev, dev->type_index);
}

static int open_one(weft_devices_t *ds, const weft_params_t *p, weft_fault_t *fault,
                    const weft_device_ops_t *ops, int type_index)
{
    if (ds->n + 1 >= WEFT_MAX_DEVICES) {
        weft_error("more than %d accelerators asked for in one process", WEFT_MAX_DEVICES - 1);
        return WEFT_ERR_INVALID;
    }
    weft_device_t *dev = calloc(1, sizeof *dev);
    if (!dev) return WEFT_ERR_NOMEM;
    dev->ops = ops;
    dev->index = ds->n + 1;
    dev->type_index = type_index;
    dev->params = p;
    dev->fault = fault;
    dev->workspace_bytes = (size_t)weft_params_int(p, "device_workspace");
    /* Named by its API index (weft_data_set_device, the log prefix, the trace
     * tracks, show_stats): one number for one device everywhere. */
    snprintf(dev->name, sizeof dev->name, "%s%d", ops->name, dev->index);
    int injected = 0, rc = open_device(dev, fault, &injected);
    if (rc != WEFT_SUCCESS) {
        weft_error("could not open %s (the %s runtime's device %d): %s", dev->name, ops->name,
                   type_index,
                   injected ? "failure injected (fault_inject device_open)" : weft_strerror(rc));
        free(dev);
        return rc;
    }
    rc = measure(dev);
    if (rc != WEFT_SUCCESS) {
        weft_error("could not read the memory of %s (the %s runtime's device %d): %s", dev->name,
                   ops->name, type_index, weft_strerror(rc));
        ops->close(dev);
        free(dev);
        return rc;
    }
    ds->dev[++ds->n] = dev;
    return WEFT_SUCCESS;
}

/* How many devices of a module to open: its parameter, checked against
 * what is present. An explicit request that cannot be met is an error. */
static int module_count(const module_entry_t *m, const weft_params_t *p, int *count,
                        int *present_out)
{
    int64_t want = weft_params_int(p, m->param);
    int present = 0;
    /* A type not asked for is not probed: its runtime is not started. */
    if (want != 0 && m->ops && m->ops->probe(&present) != WEFT_SUCCESS) present = 0;
    *present_out = present;
    if (want < 0) {
        *count = present;
        return WEFT_SUCCESS;
    }
    if (want > 0 && !m->ops) {
        weft_error("%s=%lld asks for %s devices but this weft was built without the %s module",
                   m->param, (long long)want, m->what, m->what);
        return WEFT_ERR_NODEV;
    }
    if (want > present) {
        weft_error("%s=%lld asks for %lld %s devices but only %d %s present", m->param,
                   (long long)want, (long long)want, m->what, present, present == 1 ? "is" : "are");
        return WEFT_ERR_NODEV;
    }
    *count = (int)want;
    return WEFT_SUCCESS;
}

/* Peer access where both ends are allowed by the mask and the hardware
 * agrees in both directions. */
static void find_peers(weft_devices_t *ds, const weft_params_t *p)
{
    int64_t mask = weft_params_int(p, "device_peer_mask");
    for (int a = 1; a <= ds->n; a++) {
        for (int b = 1; b <= ds->n; b++) {
            int allowed = a != b && (mask < 0 || ((mask >> (a - 1)) & (mask >> (b - 1)) & 1));
            weft_device_t *da = ds->dev[a], *db = ds->dev[b];
            ds->peer[a][b] = (unsigned char)(allowed && da->ops->can_access_peer(da, db) == 1);
        }
    }
    for (int a = 1; a <= ds->n; a++)
        for (int b = 1; b <= ds->n; b++)
            if (!ds->peer[b][a]) ds->peer[a][b] = 0;
}

/* Device parameters given to a rank that opened no device, said once
 * (a stranger's device_memory_limit on a CPU-only run was taken without a
 * word, as though it capped something). device_type and the *_enabled
 * counts are what ask for devices, so they are not among them. */
static void say_unused_without_devices(const weft_params_t *p)
{
    static const char prefix[] = "device_", enabled[] = "_enabled";
    for (int i = 0; i < weft_param_count; i++) {
        const char *name = weft_param_table[i].name;
        size_t len = strlen(name);
        if (strncmp(name, prefix, sizeof prefix - 1) != 0 || strcmp(name, "device_type") == 0 ||
            (len >= sizeof enabled - 1 &&
             strcmp(name + len - (sizeof enabled - 1), enabled) == 0) ||
            !weft_params_is_set(p, name))
            continue;
        weft_warn("%s=%s does nothing: this rank uses no accelerator (device_cuda_enabled, "
                  "device_hip_enabled and device_emu_enabled open none)",
                  name, weft_params_text(p, name));
    }
}

int weft_devices_open(const weft_params_t *p, int local_rank, weft_fault_t *fault,
                      weft_devices_t **out)
{
    weft_devices_t *ds = calloc(1, sizeof *ds);
    if (!ds) return WEFT_ERR_NOMEM;
    int rc = WEFT_SUCCESS;
    for (size_t m = 0; m < sizeof modules / sizeof modules[0] && rc == WEFT_SUCCESS; m++) {
        int count = 0, present = 0;
        rc = module_count(&modules[m], p, &count, &present);
        /* Ranks of one node take different physical devices when there are
         * enough: rank r of the node starts at device r * count. (Each
         * process has emulated devices of its own.) */
        int shared = modules[m].ops && modules[m].ops->type != WEFT_DEV_EMU;
        int first = shared && present > count && count > 0 ? (local_rank * count) % present : 0;
        for (int i = 0; i < count && rc == WEFT_SUCCESS; i++)
            rc = open_one(ds, p, fault, modules[m].ops, (first + i) % (present > 0 ? present : 1));
    }
    if (rc != WEFT_SUCCESS) {
        weft_devices_close(ds);
        return rc;
    }
    if (ds->n == 0) say_unused_without_devices(p);
    find_peers(ds, p);
    *out = ds;
    return WEFT_SUCCESS;
}

void weft_devices_close(weft_devices_t *ds)
{
    if (!ds) return;
    for (int i = ds->n; i >= 1; i--) {
        weft_device_t *dev = ds->dev[i];
        /* The zone goes before close: a module may need its context to free it. */
        weft_zone_destroy(dev->zone);
        dev->ops->mem_release(dev, dev->zone_base, dev->zone_bytes);
        dev->ops->close(dev);
        free(dev);
    }
    free(ds);
}
