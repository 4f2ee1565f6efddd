/* The device interface: one const table of operations per device type
 * (emu, cuda, hip), registered in one list (registry.c). State and statistics
 * live in weft_device_t, apart from the operations. An operation a module
 * lacks points to a function returning WEFT_ERR_UNSUPPORTED, never NULL.
 * Device index 0 is always the host; accelerators are 1..n.
 *
 * Threads: every operation may be called from any thread (the per-device
 * managers of weft call the operations of other devices for peer and staged
 * copies), so a module makes its device current itself (cudaSetDevice) and
 * guards its own queues. Modules do not count statistics: the core does. */
#ifndef WEFT_DEVICE_DEVICE_H
#define WEFT_DEVICE_DEVICE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "data/data.h"
#include "data/zone.h"
#include "params/params.h"
#include "weft/weft.h"

typedef struct weft_device weft_device_t;

/* Streams of an accelerator: stage-in (the comm engine's receives),
 * stage-out (write-backs, sends), prefetch (the device manager's stage-in
 * copies, apart so that neither waits behind the other's), then execution
 * streams WEFT_STREAM_EXEC0 .. dev->nstreams - 1, the last of which may be
 * the urgent one (dev->urgent_stream). */
enum { WEFT_STREAM_IN = 0, WEFT_STREAM_OUT = 1, WEFT_STREAM_PREFETCH = 2, WEFT_STREAM_EXEC0 = 3 };
#define WEFT_MAX_STREAMS 10

/* An event marks a point in a stream; query says whether work before it is
 * done. Opaque storage big enough for a cudaEvent_t or an emu counter.
 * event_record initializes *ev (its previous content is ignored);
 * event_destroy releases it once the caller is done with it. */
typedef struct weft_event {
    void *handle;
    uint64_t ticket;
} weft_event_t;

/* Transfer kinds, for statistics and traces. */
typedef enum {
    WEFT_XFER_H2D = 0,
    WEFT_XFER_D2H = 1,
    WEFT_XFER_D2D = 2,
    WEFT_XFER_KINDS = 3
} weft_xfer_kind_t;

/* A 2D region: columns ld elements apart (ld == rows: contiguous). */
typedef struct weft_region {
    void *ptr;
    int64_t ld;
} weft_region_t;

/* What a kernel launched on a device runs with: the module fills it at
 * launch and hands it to the kernel function, which is all a module knows
 * of the work (a task body, a batch: the layer above maps it onto its
 * task). The handles are the module's and stay valid while the device is
 * open; a kernel must not keep the pointer to the environment itself. */
typedef struct weft_device_env {
    int device;          /* weft device index (1..n) */
    int stream;          /* weft stream number */
    void *stream_handle; /* the native stream (cudaStream_t, hipStream_t;
                            emu: its stream record, opaque) */
    void *blas, *solver; /* vendor library handles bound to that stream
                            (cublasHandle_t, cusolverDnHandle_t); NULL none */
    void *workspace;     /* scratch of that stream on the device, NULL none */
    size_t workspace_bytes;
} weft_device_env_t;

/* A kernel: runs with the environment of its stream; 0 or a weft status
 * (cuda, hip: returned by launch; emu: a non-zero value fails the next
 * event of the stream). */
typedef int (*weft_device_kernel_fn)(const weft_device_env_t *env, void *arg);

/* Capabilities a module sets in dev->caps at open. */
enum {
    WEFT_DEVCAP_IPC = 0x1,              /* ipc_export/ipc_import work */
    WEFT_DEVCAP_HOST_ADDRESSABLE = 0x2, /* host code (and any MPI) can dereference its memory */
    /* The device runs one process's kernels at a time and switches
     * between processes (a CUDA GPU without MPS): ranks that share it
     * lose part of its rate to the switching. */
    WEFT_DEVCAP_TIME_SLICED = 0x4
};

/* Room for an exported IPC handle (a cudaIpcMemHandle_t, a shm name). */
#define WEFT_IPC_HANDLE_MAX 128

/* Every allocation of a device zone is rounded up to this. */
#define WEFT_ZONE_ALIGNMENT 256

/* Room for the name of a physical device (module prefix and UUID). */
#define WEFT_DEVICE_KEY_MAX 48

/* Tasks named one line each when a broken device fails them; the rest are
 * counted (weft_device_stats.failed_broken). */
#define WEFT_DEVICE_BROKEN_NAMED 8

typedef struct weft_device_ops {
    const char *name;
    weft_device_type_t type;
    /* How many devices of this type this process could open (0 when none or
     * when the driver is missing). Called before any open. */
    int (*probe)(int *count);
    /* Opens the module's instance `index` (0-based within the type); sets
     * dev->nstreams (>= WEFT_STREAM_EXEC0 + 1), dev->caps and dev->priv.
     * dev->params and dev->workspace_bytes are set before the call. */
    int (*open)(weft_device_t *dev, int index);
    /* Waits for every stream, then frees what open made. Called after
     * mem_release of the zone. */
    void (*close)(weft_device_t *dev);
    /* Physical memory of the device (free and total bytes). */
    int (*mem_info)(weft_device_t *dev, size_t *free_bytes, size_t *total_bytes);
    /* Writes a name of the physical device that every process of the node
     * computes alike for the same device and differently for another one
     * (cuda: its UUID; emu: its index, since emu device i of each rank
     * models one device of the node): ranks that share a device split its
     * memory. A NUL-terminated string of at most WEFT_DEVICE_KEY_MAX bytes. */
    int (*identity)(weft_device_t *dev, char *key, size_t len);
    /* Raw memory for the device zone (one large block), and its release. */
    int (*mem_reserve)(weft_device_t *dev, size_t bytes, void **base);
    void (*mem_release)(weft_device_t *dev, void *base, size_t bytes);
    /* One allocation per tile (parameter device_alloc=tile): the zone then
     * only counts bytes, and each copy is allocated and freed by these. */
    int (*mem_alloc_tile)(weft_device_t *dev, size_t bytes, void **ptr);
    void (*mem_free_tile)(weft_device_t *dev, void *ptr, size_t bytes);
    /* Asynchronous 2D copy of rows x cols elements of elem bytes on `stream`
     * of this device. dst_dev and src_dev are weft device indices (0 = host
     * memory, which may be pageable: the module then copies synchronously
     * for the host side or stages it). A device-to-device copy between two
     * accelerators is issued only when can_access_peer said yes. */
    int (*copy_async)(weft_device_t *dev, int stream, weft_region_t dst, int dst_dev,
                      weft_region_t src, int src_dev, int rows, int cols, size_t elem);
    int (*event_record)(weft_device_t *dev, int stream, weft_event_t *ev);
    /* WEFT_SUCCESS when done, WEFT_AGAIN when not yet; a negative status when
     * work before it failed (an emu kernel whose body returned non-zero:
     * WEFT_ERR_TASK; a CUDA error: WEFT_ERR_INTERNAL after logging it). */
    int (*event_query)(weft_device_t *dev, weft_event_t *ev);
    int (*event_sync)(weft_device_t *dev, weft_event_t *ev);
    void (*event_destroy)(weft_device_t *dev, weft_event_t *ev);
    /* Work enqueued on `stream` after this call starts once the work before
     * ev (recorded on another stream of the same device) is done; the
     * caller does not wait. */
    int (*stream_wait)(weft_device_t *dev, int stream, weft_event_t *ev);
    /* Runs kernel(env, arg) on `stream`, env describing that stream (cuda,
     * hip: on the calling thread, the kernel enqueues its work on the
     * stream and its return value is returned, WEFT_ERR_TASK when it left
     * a launch error behind; emu: the kernel itself runs later on the
     * device thread, in stream order, and a failure shows in the next
     * event of that stream). cuda and hip accept execution streams only. */
    int (*launch)(weft_device_t *dev, int stream, weft_device_kernel_fn kernel, void *arg);
    /* Called once per ordered pair of open devices (after every device is
     * open, and only where device_peer_mask allows): enables direct copies
     * between dev and peer when the hardware can, and returns 1 if copies
     * dev <-> peer work from now on, 0 otherwise (another type: 0). */
    int (*can_access_peer)(weft_device_t *dev, weft_device_t *peer);
    /* IPC: export the zone (dev->zone_base) so another process of the node
     * can map it: writes at most WEFT_IPC_HANDLE_MAX bytes to handle. */
    int (*ipc_export)(weft_device_t *dev, void *handle, size_t *handle_bytes);
    /* Maps another process's exported zone for copies on dev; *base is the
     * address of its first byte here. */
    int (*ipc_import)(weft_device_t *dev, const void *handle, size_t handle_bytes, void **base);
    int (*ipc_close)(weft_device_t *dev, void *base);
    /* The native handle of a stream (cudaStream_t, hipStream_t) for user
     * functions that enqueue their own work; NULL when the module has none
     * (emu). */
    void *(*stream_handle)(weft_device_t *dev, int stream);
    /* Pins host memory for fast asynchronous copies (bounce buffers of the
     * staged transport); a module without the notion returns success. */
    int (*host_register)(weft_device_t *dev, void *ptr, size_t bytes);
    int (*host_unregister)(weft_device_t *dev, void *ptr);
} weft_device_ops_t;

/* Counted by the core (the device managers), read by show_stats and tests. */
typedef struct weft_device_stats {
    atomic_llong tasks;
    /* Bytes of every copy enqueued on it (weft_device_copy, the one door):
     * H2D and D2D into it, D2H out of it, whoever asked: the device
     * manager's stage-ins, prefetches and write-backs, and the comm
     * engine's ipc pulls (D2D), eager landings and staged chunks. */
    atomic_llong bytes[WEFT_XFER_KINDS];
    atomic_llong evictions;
    atomic_llong writebacks;        /* evictions that first copied a dirty copy to host */
    atomic_llong prefetches;        /* copies in for tasks not started yet (devahead.c) */
    atomic_llong prefetches_unused; /* of those, freed before any task used them */
    atomic_llong busy_ns;
    atomic_llong batches, batched_tasks;
    atomic_llong launched_ahead; /* tasks queued behind a receive's pull (devgate.c) */
    atomic_llong failed_broken;  /* tasks failed because the device broke (devlaunch.c) */
} weft_device_stats_t;

/* What the ranks of the node found about one physical device before any
 * of them reserved its zone (weft_devshare_count), and the zone it gives. */
typedef struct weft_device_share {
    int sharers;     /* devices of the node's ranks with this identity (>= 1) */
    size_t total;    /* the device's memory */
    size_t free_min; /* the least free memory any of them measured */
} weft_device_share_t;

struct weft_device {
    const weft_device_ops_t *ops;
    int index;      /* weft device index on this rank (1..n) */
    int type_index; /* index among devices of its type */
    char name[32];
    int nstreams;      /* set by open: IN, OUT, then the execution streams */
    int urgent_stream; /* set by open: the execution stream whose kernels the
                          device schedules first (the critical path), -1 none */
    unsigned caps;     /* WEFT_DEVCAP_* set by open */
    const weft_params_t *params;
    struct weft_fault *fault;  /* fault_inject's rules (NULL: none): weft_device_event_record */
    size_t workspace_bytes;    /* per execution stream, parameter device_workspace */
    size_t headroom_bytes;     /* set by open: device memory the rank will still use
                                  outside its zone (library workspaces made on first
                                  use, context growth), 0 when none */
    weft_device_share_t share; /* set before the zone is made (1 sharer by default) */
    weft_zone_t *zone;
    int per_tile; /* device_alloc=tile: zone_base is NULL, the zone only counts */
    void *zone_base;
    size_t zone_bytes;
    void *priv; /* module state */
    void *mgr;  /* core state: the device manager (stf layer) */
    weft_device_stats_t stats;
    /* 1 once the device failed for good (weft_device_set_broken): a GPU
     * with a sticky error (an illegal address in a kernel), or fault_inject
     * device_fail. From then on every operation of the module on it fails
     * with WEFT_ERR_DEVICE (queries, records, copies, launches, IPC), as a
     * CUDA context does after such an error; close, mem_release,
     * mem_free_tile and ipc_close still give back what the process holds,
     * and report nothing. */
    atomic_int broken;
};

/* Marks dev failed for good and logs, once per device, an error naming it
 * and `why` (what failed, e.g. the task whose completion reported the
 * error). Any thread. */
void weft_device_set_broken(weft_device_t *dev, const char *why);

static inline int weft_device_is_broken(const weft_device_t *dev)
{
    return atomic_load_explicit(&((weft_device_t *)dev)->broken, memory_order_acquire);
}

/* WEFT_ERR_DEVICE when dev is broken (logged at debug level with `op`, the
 * operation refused), else 0: the first check of each module operation. */
int weft_device_check_alive(const weft_device_t *dev, const char *op);

/* ops->event_record for the core and the comm engine, through the fault
 * site event_record. On a failure, injected or the module's, nothing the
 * stream held runs on after it (the modules wait for the stream then), so
 * the caller may give back what that work read or wrote. Any thread. */
int weft_device_event_record(weft_device_t *dev, int stream, weft_event_t *ev)
    __attribute__((warn_unused_result));

/* Waits until the work on `stream` of dev so far has ended: an event
 * recorded (weft_device_event_record) and synchronized. Its status, or
 * the record's failure (the work is over then too). Any thread. */
int weft_device_stream_drain(weft_device_t *dev, int stream) __attribute__((warn_unused_result));

/* Logs that version `version` of data `key`, whose newest copy is only on
 * dev (broken), is lost: what a send or a read to the host of it says
 * instead of moving what the dead memory holds. */
void weft_device_log_lost(const weft_device_t *dev, unsigned long long key, unsigned version);

/* The execution streams the parameters ask for (device_streams, the
 * default when p is NULL) and whether one more, urgent, stream comes after
 * them (device_urgent_stream); open calls this and sets nstreams and
 * urgent_stream from it. */
static inline int weft_device_exec_streams(const weft_params_t *p, int dflt, int *urgent)
{
    int n = p ? (int)weft_params_int(p, "device_streams") : dflt;
    int max = WEFT_MAX_STREAMS - WEFT_STREAM_EXEC0 - 1;
    if (n < 1) n = 1;
    if (n > max) n = max;
    *urgent = p ? (int)weft_params_int(p, "device_urgent_stream") != 0 : 0;
    return n;
}

/* Statistics kind of a copy into device dst from device src (0: host). */
static inline weft_xfer_kind_t weft_device_xfer_kind(int dst_dev, int src_dev)
{
    return src_dev == 0 ? WEFT_XFER_H2D : dst_dev == 0 ? WEFT_XFER_D2H : WEFT_XFER_D2D;
}

/* The one door for copies on a device: dev->ops->copy_async, its bytes
 * counted in dev's statistics by kind once enqueued. Every copy weft makes
 * goes through here (or, for a data's stage function, is counted by its
 * caller; the ipc transport's warm-up of 256 B at connect, no tile's, is
 * not counted), so that the counters tell how many times a tile's bytes were
 * copied: a move between ranks by ipc is one D2D copy of the tile on the
 * receiving device, and a test holds it to that. */
/* Counts a copy of `bytes` enqueued on dev, by kind. */
static inline void weft_device_count_copy(weft_device_t *dev, int dst_dev, int src_dev,
                                          long long bytes)
{
    atomic_fetch_add(&dev->stats.bytes[weft_device_xfer_kind(dst_dev, src_dev)], bytes);
}

static inline int weft_device_copy(weft_device_t *dev, int stream, weft_region_t dst, int dst_dev,
                                   weft_region_t src, int src_dev, int rows, int cols, size_t elem)
{
    int rc = dev->ops->copy_async(dev, stream, dst, dst_dev, src, src_dev, rows, cols, elem);
    if (rc == WEFT_SUCCESS)
        weft_device_count_copy(dev, dst_dev, src_dev, (long long)rows * cols * (long long)elem);
    return rc;
}

#endif
