/* The device interface: one const table of operations per device type
 * (cpu, emu, cuda), registered in one list (device_registry.c). State and
 * statistics live in weft_device_t, apart from the operations. An operation
 * a module lacks points to a function returning WEFT_ERR_UNSUPPORTED, never
 * NULL. Device index 0 is always the host; accelerators are 1..n. */
#ifndef WEFT_DEVICE_DEVICE_H
#define WEFT_DEVICE_DEVICE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "data/data.h"
#include "data/zone.h"
#include "weft/weft.h"

struct weft_task;
typedef struct weft_device weft_device_t;

/* Streams of an accelerator: stage-in, stage-out, then execution streams. */
enum { WEFT_STREAM_IN = 0, WEFT_STREAM_OUT = 1, WEFT_STREAM_EXEC0 = 2 };
#define WEFT_MAX_STREAMS 8

/* An event marks a point in a stream; query says whether work before it is
 * done. Opaque storage big enough for a cudaEvent_t or an emu counter. */
typedef struct weft_event {
    void *handle;
    uint64_t ticket;
} weft_event_t;

/* Transfer kinds, for statistics and traces. */
typedef enum { WEFT_XFER_H2D = 0, WEFT_XFER_D2H = 1, WEFT_XFER_D2D = 2, WEFT_XFER_KINDS = 3 } weft_xfer_kind_t;

/* A 2D region: rows x cols elements of elem bytes, columns ld elements
 * apart (ld == rows: contiguous). */
typedef struct weft_region {
    void *ptr;
    int64_t ld;
} weft_region_t;

typedef struct weft_device_ops {
    const char *name;
    weft_device_type_t type;
    /* Opens the device module's instance `index` (0-based within the type). */
    int (*open)(weft_device_t *dev, int index);
    void (*close)(weft_device_t *dev);
    /* Raw memory for the device zone, and its release. */
    int (*mem_reserve)(weft_device_t *dev, size_t bytes, void **base);
    void (*mem_release)(weft_device_t *dev, void *base, size_t bytes);
    /* Asynchronous 2D copy on `stream` of this device: src and dst are on
     * the devices named (0 = host memory; host memory is pinned or the copy
     * is synchronous for it). */
    int (*copy_async)(weft_device_t *dev, int stream, weft_region_t dst, int dst_dev,
                      weft_region_t src, int src_dev, int rows, int cols, size_t elem);
    int (*event_record)(weft_device_t *dev, int stream, weft_event_t *ev);
    /* WEFT_SUCCESS when done, WEFT_AGAIN when not yet. */
    int (*event_query)(weft_device_t *dev, weft_event_t *ev);
    int (*event_sync)(weft_device_t *dev, weft_event_t *ev);
    void (*event_destroy)(weft_device_t *dev, weft_event_t *ev);
    /* Runs the task's body for this device type with t->stream etc. set:
     * the body enqueues its kernels on the stream (emu: runs them there). */
    int (*launch)(weft_device_t *dev, int stream, struct weft_task *t, weft_body_fn body);
    /* Whether this device can copy directly to/from `peer`. */
    int (*can_access_peer)(weft_device_t *dev, weft_device_t *peer);
    /* IPC: export the zone base so another process of the node can map it. */
    int (*ipc_export)(weft_device_t *dev, void *handle, size_t *handle_bytes);
    int (*ipc_import)(weft_device_t *dev, const void *handle, size_t handle_bytes, void **base);
    int (*ipc_close)(weft_device_t *dev, void *base);
} weft_device_ops_t;

typedef struct weft_device_stats {
    atomic_llong tasks;
    atomic_llong bytes[WEFT_XFER_KINDS];
    atomic_llong evictions;
    atomic_llong busy_ns;
} weft_device_stats_t;

struct weft_device {
    const weft_device_ops_t *ops;
    int index;      /* weft device index on this rank (1..n) */
    int type_index; /* index among devices of its type */
    char name[32];
    weft_zone_t *zone;
    void *zone_base;
    size_t zone_bytes;
    void *priv; /* module state */
    weft_device_stats_t stats;
};

#endif
