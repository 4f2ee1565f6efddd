/* emu: an emulated accelerator, so that every device code path runs in CI
 * without a GPU. Its memory is a zone in POSIX shared memory (another
 * process of the node can map it, as it would a CUDA IPC handle); its
 * copies and kernels run on its own thread, asynchronously for the caller
 * and in order per stream; an event is a ticket in a stream. Kernels are
 * the launch's kernel functions run on that thread (for a task, the layer
 * above runs its emu body, or its CPU body). A broken device
 * (weft_device_set_broken: fault_inject device_fail) behaves as a CUDA
 * context after a sticky error: queued ops no longer run, and every later
 * record, copy, launch and IPC call fails with WEFT_ERR_DEVICE, as does
 * every query once the op running at the break ended; close and the frees
 * still give the memory back. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "device/device.h"
#include "device/emu/emu_fails.h"
#include "device/emu/emu_shm.h"
#include "device/emu/emu_sigbus.h"
#include "util/bodythread.h"
#include "util/fault.h"
#include "util/log.h"
#include "util/vec.h"

#define EMU_MAX_DEVICES 64

typedef enum { EMU_OP_COPY, EMU_OP_KERNEL } emu_op_kind_t;

typedef struct emu_op {
    emu_op_kind_t kind;
    int stream;
    weft_region_t dst, src; /* copy */
    int rows, cols;
    size_t elem;
    weft_device_kernel_fn kernel; /* kernel, with its environment */
    void *arg;
    weft_device_env_t env;
    struct emu_op *next;
} emu_op_t;

typedef struct emu_stream {
    uint64_t issued;    /* ops enqueued so far (guarded by the device lock) */
    uint64_t done;      /* ops finished so far */
    emu_fails_t fails;  /* the ops that failed */
    uint64_t last_event;
    void *workspace;
} emu_stream_t;

typedef struct emu_import {
    void *base;
    size_t bytes;
} emu_import_t;

typedef struct emu_dev {
    weft_device_t *dev; /* its broken flag: the thread stops running ops */
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t work; /* ops queued or stop */
    pthread_cond_t idle; /* an op finished */
    emu_op_t *head, *tail;
    int running; /* the thread runs an op it took off the queue */
    int stop;
    emu_stream_t streams[WEFT_MAX_STREAMS];
    weft_emu_shm_t shm; /* its zone's file (fd -1: none) */
    /* The peers' zones this device has mapped: one a device of each other
     * rank of the node that sends it tiles, so as many as the node has. */
    weft_vec_t imports; /* emu_import_t */
    long copy_delay_us; /* device_emu_copy_delay_us */
} emu_dev_t;

static int emu_probe(int *count)
{
    *count = EMU_MAX_DEVICES;
    return WEFT_SUCCESS;
}

/* ---- the device thread ------------------------------------------------ */

/* memmove, not util/cols.h's memcpy: an emulated device's memory is host
 * memory a user may register (weft_data_register_device), and nothing
 * here rules out a copy whose ranges overlap. */
static void copy_2d(const emu_op_t *op)
{
    size_t col = (size_t)op->rows * op->elem;
    if (op->dst.ld == op->rows && op->src.ld == op->rows) {
        memmove(op->dst.ptr, op->src.ptr, col * (size_t)op->cols);
        return;
    }
    for (int j = 0; j < op->cols; j++)
        memmove((char *)op->dst.ptr + (size_t)j * (size_t)op->dst.ld * op->elem,
                (const char *)op->src.ptr + (size_t)j * (size_t)op->src.ld * op->elem, col);
}

/* Tests make a copy slow (device_emu_copy_delay_us) to hold it in flight
 * for a known time: a write-back still landing, a pull not done yet. */
static void copy_delay(const emu_dev_t *e)
{
    if (e->copy_delay_us <= 0) return;
    struct timespec ts = {.tv_sec = e->copy_delay_us / 1000000,
                          .tv_nsec = (e->copy_delay_us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) continue;
}

static int run_op(const emu_dev_t *e, emu_op_t *op)
{
    if (op->kind == EMU_OP_COPY) {
        copy_delay(e);
        copy_2d(op);
        return 0;
    }
    return op->kernel(&op->env, op->arg) == 0 ? 0 : -1;
}

static void *emu_thread(void *arg)
{
    emu_dev_t *e = arg;
    pthread_mutex_lock(&e->lock);
    for (;;) {
        while (!e->head && !e->stop) pthread_cond_wait(&e->work, &e->lock);
        if (!e->head) break; /* stop with an empty queue */
        emu_op_t *op = e->head;
        e->head = op->next;
        if (!e->head) e->tail = NULL;
        e->running = 1;
        pthread_mutex_unlock(&e->lock);
        /* A broken device runs nothing more, as a CUDA context after a
         * sticky error: the op fails and so does the next event. */
        int failed = weft_device_is_broken(e->dev) ? -1 : run_op(e, op);
        pthread_mutex_lock(&e->lock);
        emu_stream_t *s = &e->streams[op->stream];
        s->done++;
        if (failed) weft_emu__fails_add(&s->fails, s->done);
        e->running = 0;
        pthread_cond_broadcast(&e->idle);
        free(op);
    }
    pthread_mutex_unlock(&e->lock);
    return NULL;
}

static int enqueue(weft_device_t *dev, emu_op_t *op)
{
    emu_dev_t *e = dev->priv;
    int rc = weft_device_check_alive(dev, op->kind == EMU_OP_COPY ? "copy" : "launch");
    if (rc != WEFT_SUCCESS) {
        free(op);
        return rc;
    }
    if (op->stream < 0 || op->stream >= dev->nstreams) {
        weft_log(WEFT_LOG_ERROR, dev->index, "emu: stream %d out of range", op->stream);
        free(op);
        return WEFT_ERR_INVALID;
    }
    op->next = NULL;
    pthread_mutex_lock(&e->lock);
    if (e->tail)
        e->tail->next = op;
    else
        e->head = op;
    e->tail = op;
    e->streams[op->stream].issued++;
    pthread_cond_signal(&e->work);
    pthread_mutex_unlock(&e->lock);
    return WEFT_SUCCESS;
}

/* ---- open and close ---------------------------------------------------- */

static int alloc_workspaces(weft_device_t *dev, emu_dev_t *e)
{
    for (int s = WEFT_STREAM_EXEC0; s < dev->nstreams; s++) {
        if (!dev->workspace_bytes) continue;
        e->streams[s].workspace = malloc(dev->workspace_bytes);
        if (!e->streams[s].workspace) {
            /* Named, as the CUDA device names its cudaMalloc: "out of host
             * memory" alone did not point at the parameter. */
            weft_log(WEFT_LOG_ERROR, dev->index,
                     "emu: the task workspace of execution stream %d, %zu bytes (parameter "
                     "device_workspace, one per execution stream), cannot be allocated",
                     s - WEFT_STREAM_EXEC0, dev->workspace_bytes);
            return WEFT_ERR_NOMEM;
        }
    }
    return WEFT_SUCCESS;
}

static void free_streams(emu_dev_t *e)
{
    for (int s = 0; s < WEFT_MAX_STREAMS; s++) {
        free(e->streams[s].workspace);
        weft_emu__fails_free(&e->streams[s].fails);
    }
}

/* What open made besides the thread: workspaces, lock and conditions. */
static void free_state(weft_device_t *dev)
{
    emu_dev_t *e = dev->priv;
    free_streams(e);
    pthread_cond_destroy(&e->idle);
    pthread_cond_destroy(&e->work);
    pthread_mutex_destroy(&e->lock);
    free(e);
    dev->priv = NULL;
}

static int emu_open(weft_device_t *dev, int index)
{
    weft_emu_shm_sweep(dev->index);
    emu_dev_t *e = calloc(1, sizeof *e);
    if (!e) return WEFT_ERR_NOMEM;
    dev->priv = e;
    e->dev = dev;
    weft_vec_init(&e->imports, sizeof(emu_import_t), 8);
    int urgent = 0;
    dev->nstreams = WEFT_STREAM_EXEC0 + weft_device_exec_streams(dev->params, 2, &urgent);
    /* The urgent stream exists (the managers' choice of stream is the same
     * code as on CUDA) but runs in the one queue like the others. */
    dev->urgent_stream = urgent ? dev->nstreams : -1;
    dev->nstreams += urgent;
    dev->caps = WEFT_DEVCAP_IPC | WEFT_DEVCAP_HOST_ADDRESSABLE;
    e->copy_delay_us =
        dev->params ? (long)weft_params_int(dev->params, "device_emu_copy_delay_us") : 0;
    e->shm.fd = -1;
    pthread_mutex_init(&e->lock, NULL);
    pthread_cond_init(&e->work, NULL);
    pthread_cond_init(&e->idle, NULL);
    if (alloc_workspaces(dev, e) != WEFT_SUCCESS) goto undo_workspaces;
    if (weft_body_thread_create(&e->thread, emu_thread, e) != 0) goto undo_workspaces;
    return WEFT_SUCCESS;

undo_workspaces:
    free_state(dev);
    return WEFT_ERR_NOMEM;
}

static void emu_close(weft_device_t *dev)
{
    emu_dev_t *e = dev->priv;
    if (!e) return;
    pthread_mutex_lock(&e->lock);
    e->stop = 1; /* the thread drains the queue first */
    pthread_cond_signal(&e->work);
    pthread_mutex_unlock(&e->lock);
    pthread_join(e->thread, NULL);
    for (size_t i = 0; i < e->imports.n; i++) {
        const emu_import_t *im = weft_vec_at(&e->imports, i);
        weft_emu_sigbus_unwatch(im->base);
        munmap(im->base, im->bytes);
    }
    weft_vec_fini(&e->imports);
    free_state(dev);
}

/* ---- memory ------------------------------------------------------------ */

/* The emulated memory size (device_emu_memory), no more than the shared
 * memory file system can hold: touching pages past its end would kill the
 * process with SIGBUS instead of making weft evict. The zones are only
 * sized (ftruncate) when made, so each device sees the whole free space:
 * it takes its part of it, as many parts as the process has emu devices
 * (two devices each given all of a 64 MiB /dev/shm died of SIGBUS). The
 * ranks sharing a device split its memory further (registry.c). */
static int emu_mem_info(weft_device_t *dev, size_t *free_bytes, size_t *total_bytes)
{
    size_t bytes = (size_t)weft_params_int(dev->params, "device_emu_memory");
    int64_t ndev = weft_params_int(dev->params, "device_emu_enabled");
    struct statvfs fs;
    if (statvfs(WEFT_EMU_SHM_DIR, &fs) == 0) {
        size_t avail = (size_t)fs.f_bavail * (size_t)fs.f_frsize;
        size_t part = ndev > 1 ? avail / (size_t)ndev : avail;
        if (part < bytes) {
            /* Said when the user asked for the size (a stranger's 1024G
             * became 21 GiB without a word); the default's bound is not
             * news. */
            int asked = weft_params_is_set(dev->params, "device_emu_memory");
            weft_log(asked ? WEFT_LOG_WARN : WEFT_LOG_INFO, dev->index,
                     "emu: %s has %zu bytes free, %zu for each of %lld emu devices, less than "
                     "device_emu_memory (%zu bytes): each has %zu",
                     WEFT_EMU_SHM_DIR, avail, part, (long long)(ndev > 1 ? ndev : 1), bytes, part);
            bytes = part;
        }
    }
    *free_bytes = *total_bytes = bytes;
    return WEFT_SUCCESS;
}

/* emu device i of every rank models device i of the node. */
static int emu_identity(weft_device_t *dev, char *key, size_t len)
{
    int n = snprintf(key, len, "emu%d", dev->type_index);
    return n > 0 && (size_t)n < len ? WEFT_SUCCESS : WEFT_ERR_INVALID;
}

static void emu_mem_release(weft_device_t *dev, void *base, size_t bytes);

static int emu_mem_reserve(weft_device_t *dev, size_t bytes, void **base)
{
    emu_dev_t *e = dev->priv;
    /* The name stays until mem_release: other ranks of the node open it
     * (ipc_import) when their first tile from this zone arrives, at any
     * time of the run, so it cannot be unlinked once mapped; an owner that
     * ends without its release leaves it to the next sweep (emu_shm.h). */
    if (weft_emu_shm_create(dev->type_index, bytes, &e->shm) != 0) {
        weft_log(WEFT_LOG_ERROR, dev->index, "emu: making %zu bytes of memory in %s: %s", bytes,
                 WEFT_EMU_SHM_DIR, strerror(errno));
        return WEFT_ERR_DEVMEM;
    }
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, e->shm.fd, 0);
    if (p == MAP_FAILED) {
        weft_log(WEFT_LOG_ERROR, dev->index, "emu: mapping %zu bytes of %s: %s", bytes, e->shm.name,
                 strerror(errno));
        weft_emu_shm_remove(&e->shm);
        return WEFT_ERR_DEVMEM;
    }
    weft_emu_sigbus_watch(p, bytes);
    /* The file system full as the zone is first touched: the file cut to
     * nothing under its mapping faults the same way. */
    if (weft_fault_hit(dev->fault, WEFT_FAULT_EMU_SHM, NULL)) {
        weft_log(WEFT_LOG_WARN, dev->index,
                 "fault_inject: the file of %s's memory is cut to nothing (emu_shm)", dev->name);
        if (ftruncate(e->shm.fd, 0) != 0) {
            emu_mem_release(dev, p, bytes);
            return WEFT_ERR_DEVMEM;
        }
    }
    *base = p;
    return WEFT_SUCCESS;
}

/* Waits until the thread has run or failed every op queued. */
static void drain(emu_dev_t *e)
{
    pthread_mutex_lock(&e->lock);
    while (e->head || e->running) pthread_cond_wait(&e->idle, &e->lock);
    pthread_mutex_unlock(&e->lock);
}

static void emu_mem_release(weft_device_t *dev, void *base, size_t bytes)
{
    emu_dev_t *e = dev->priv;
    drain(e); /* no op may touch the zone once it is gone */
    if (base) weft_emu_sigbus_unwatch(base);
    if (base) munmap(base, bytes);
    weft_emu_shm_remove(&e->shm);
}

/* ---- copies, kernels, events ------------------------------------------ */

static int emu_copy_async(weft_device_t *dev, int stream, weft_region_t dst, int dst_dev,
                          weft_region_t src, int src_dev, int rows, int cols, size_t elem)
{
    emu_op_t *op = calloc(1, sizeof *op);
    if (!op) return WEFT_ERR_NOMEM;
    *op = (emu_op_t){.kind = EMU_OP_COPY,
                     .stream = stream,
                     .dst = dst,
                     .src = src,
                     .rows = rows,
                     .cols = cols,
                     .elem = elem};
    return enqueue(dev, op);
}

/* The environment travels in the op: the kernel runs after launch
 * returned. The stream record stands for the native stream. */
static int emu_launch(weft_device_t *dev, int stream, weft_device_kernel_fn kernel, void *arg)
{
    emu_dev_t *e = dev->priv;
    emu_op_t *op = calloc(1, sizeof *op);
    if (!op) return WEFT_ERR_NOMEM;
    void *ws = e->streams[stream].workspace;
    *op = (emu_op_t){.kind = EMU_OP_KERNEL,
                     .stream = stream,
                     .kernel = kernel,
                     .arg = arg,
                     .env = {.device = dev->index,
                             .stream = stream,
                             .stream_handle = &e->streams[stream],
                             .workspace = ws,
                             .workspace_bytes = ws ? dev->workspace_bytes : 0}};
    return enqueue(dev, op);
}

/* ticket: the stream in the top byte, the op count in the rest; handle:
 * the op count of the stream's previous event, so that a failure between
 * the two events is reported by this one only. */
#define EMU_TICKET_SHIFT 56

static int emu_event_record(weft_device_t *dev, int stream, weft_event_t *ev)
{
    emu_dev_t *e = dev->priv;
    if (stream < 0 || stream >= dev->nstreams) return WEFT_ERR_INVALID;
    int rc = weft_device_check_alive(dev, "event_record");
    pthread_mutex_lock(&e->lock);
    emu_stream_t *s = &e->streams[stream];
    if (rc != WEFT_SUCCESS) {
        /* The op running when the device broke goes on to its end (the
         * ops behind it fail at once): the caller gives back what they
         * used once this returns (device.h), so it waits for them. */
        while (s->done < s->issued) pthread_cond_wait(&e->idle, &e->lock);
        pthread_mutex_unlock(&e->lock);
        return rc;
    }
    ev->handle = (void *)(uintptr_t)s->last_event;
    ev->ticket = ((uint64_t)stream << EMU_TICKET_SHIFT) | s->issued;
    s->last_event = s->issued;
    pthread_mutex_unlock(&e->lock);
    return WEFT_SUCCESS;
}

static int event_state_locked(emu_dev_t *e, const weft_event_t *ev)
{
    int stream = (int)(ev->ticket >> EMU_TICKET_SHIFT);
    uint64_t n = ev->ticket & ((1ULL << EMU_TICKET_SHIFT) - 1);
    emu_stream_t *s = &e->streams[stream];
    /* A broken device fails every event, but only once the ops before it
     * left the thread: the one running when the device broke goes on to
     * its end (a thread does not stop as a dead CUDA context does), and
     * the task that waits for the event must not free what it touches
     * (a weft_fini that unmapped the zone under it crashed the kernel).
     * The ops queued behind it fail at once, so this wait is short. */
    if (weft_device_is_broken(e->dev)) return s->done < n ? WEFT_AGAIN : WEFT_ERR_DEVICE;
    if (s->done < n) return WEFT_AGAIN;
    uint64_t prev = (uint64_t)(uintptr_t)ev->handle;
    if (weft_emu__fails_between(&s->fails, prev, n)) return WEFT_ERR_TASK;
    return WEFT_SUCCESS;
}

static int emu_event_query(weft_device_t *dev, weft_event_t *ev)
{
    emu_dev_t *e = dev->priv;
    pthread_mutex_lock(&e->lock);
    int rc = event_state_locked(e, ev);
    pthread_mutex_unlock(&e->lock);
    return rc;
}

static int emu_event_sync(weft_device_t *dev, weft_event_t *ev)
{
    emu_dev_t *e = dev->priv;
    pthread_mutex_lock(&e->lock);
    int rc;
    while ((rc = event_state_locked(e, ev)) == WEFT_AGAIN) pthread_cond_wait(&e->idle, &e->lock);
    pthread_mutex_unlock(&e->lock);
    return rc;
}

static void emu_event_destroy(weft_device_t *dev, weft_event_t *ev)
{
    ev->handle = NULL;
    ev->ticket = 0;
}

/* One thread runs the ops of every stream in the order they were
 * enqueued, so whatever was recorded before ev is done before anything
 * enqueued after this call starts: the wait holds already. A failure
 * before ev shows in the events of its own stream. */
static int emu_stream_wait(weft_device_t *dev, int stream, weft_event_t *ev)
{
    (void)ev;
    if (stream < 0 || stream >= dev->nstreams) return WEFT_ERR_INVALID;
    return weft_device_check_alive(dev, "stream_wait");
}

/* Every emu device lives in this process's memory: any two can copy. */
static int emu_can_access_peer(weft_device_t *dev, weft_device_t *peer)
{
    return peer->ops == dev->ops;
}

/* ---- IPC: the shared-memory name is the handle ------------------------- */

static int emu_ipc_export(weft_device_t *dev, void *handle, size_t *handle_bytes)
{
    emu_dev_t *e = dev->priv;
    int rc = weft_device_check_alive(dev, "ipc_export");
    if (rc != WEFT_SUCCESS) return rc;
    size_t n = e->shm.fd >= 0 ? strlen(e->shm.name) + 1 : 0;
    if (n <= 1 || n > WEFT_IPC_HANDLE_MAX) return WEFT_ERR_INVALID;
    memcpy(handle, e->shm.name, n);
    *handle_bytes = n;
    return WEFT_SUCCESS;
}

static int emu_ipc_import(weft_device_t *dev, const void *handle, size_t handle_bytes, void **base)
{
    emu_dev_t *e = dev->priv;
    char name[WEFT_IPC_HANDLE_MAX];
    int rc = weft_device_check_alive(dev, "ipc_import");
    if (rc != WEFT_SUCCESS) return rc;
    if (handle_bytes == 0 || handle_bytes > sizeof name) return WEFT_ERR_INVALID;
    memcpy(name, handle, handle_bytes);
    name[handle_bytes - 1] = '\0';
    int fd = shm_open(name, O_RDWR, 0);
    if (fd < 0) {
        weft_log(WEFT_LOG_ERROR, dev->index, "emu: cannot open %s: %s", name, strerror(errno));
        return WEFT_ERR_INVALID;
    }
    struct stat st;
    void *p = MAP_FAILED;
    if (fstat(fd, &st) == 0 && st.st_size > 0)
        p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd); /* the mapping stays valid */
    if (p == MAP_FAILED) return WEFT_ERR_INVALID;
    emu_import_t im = {.base = p, .bytes = (size_t)st.st_size};
    pthread_mutex_lock(&e->lock);
    rc = weft_vec_push(&e->imports, &im);
    pthread_mutex_unlock(&e->lock);
    if (rc != WEFT_SUCCESS) {
        weft_log(WEFT_LOG_ERROR, dev->index, "emu: no host memory to keep the mapping of %s", name);
        munmap(p, im.bytes);
        return rc;
    }
    weft_emu_sigbus_watch(p, im.bytes);
    *base = p;
    return WEFT_SUCCESS;
}

static int emu_ipc_close(weft_device_t *dev, void *base)
{
    emu_dev_t *e = dev->priv;
    size_t bytes = 0;
    pthread_mutex_lock(&e->lock);
    for (size_t i = 0; i < e->imports.n && !bytes; i++) {
        const emu_import_t *im = weft_vec_at(&e->imports, i);
        if (!base || im->base != base) continue;
        bytes = im->bytes;
        weft_vec_swap_remove(&e->imports, i);
    }
    pthread_mutex_unlock(&e->lock);
    if (!bytes) return WEFT_ERR_INVALID;
    weft_emu_sigbus_unwatch(base);
    munmap(base, bytes);
    return WEFT_SUCCESS;
}

/* Per-tile allocations of an emulated device: private host memory (so no
 * IPC for them: the transports fall back to mpi or staged). */
static int emu_mem_alloc_tile(weft_device_t *dev, size_t bytes, void **ptr)
{
    int rc = weft_device_check_alive(dev, "mem_alloc_tile");
    if (rc != WEFT_SUCCESS) return rc;
    void *p = weft_host_alloc(bytes);
    if (!p) return WEFT_ERR_DEVMEM;
    *ptr = p;
    return WEFT_SUCCESS;
}

static void emu_mem_free_tile(weft_device_t *dev, void *ptr, size_t bytes)
{
    weft_host_free(NULL, ptr, bytes);
}

static void *emu_stream_handle(weft_device_t *dev, int stream) { return NULL; }

/* emu memory is host memory: nothing to pin. */
static int emu_host_register(weft_device_t *dev, void *ptr, size_t bytes) { return WEFT_SUCCESS; }
static int emu_host_unregister(weft_device_t *dev, void *ptr) { return WEFT_SUCCESS; }

const weft_device_ops_t weft_emu_ops = {
    .name = "emu",
    .type = WEFT_DEV_EMU,
    .probe = emu_probe,
    .open = emu_open,
    .close = emu_close,
    .mem_info = emu_mem_info,
    .identity = emu_identity,
    .mem_reserve = emu_mem_reserve,
    .mem_release = emu_mem_release,
    .mem_alloc_tile = emu_mem_alloc_tile,
    .mem_free_tile = emu_mem_free_tile,
    .copy_async = emu_copy_async,
    .event_record = emu_event_record,
    .event_query = emu_event_query,
    .event_sync = emu_event_sync,
    .event_destroy = emu_event_destroy,
    .stream_wait = emu_stream_wait,
    .launch = emu_launch,
    .can_access_peer = emu_can_access_peer,
    .ipc_export = emu_ipc_export,
    .ipc_import = emu_ipc_import,
    .ipc_close = emu_ipc_close,
    .stream_handle = emu_stream_handle,
    .host_register = emu_host_register,
    .host_unregister = emu_host_unregister,
};
