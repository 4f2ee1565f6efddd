/* CUDA module: the operations table, probing, open/close (streams, library
 * handles, workspaces), device memory, peer access and launch. Copies,
 * events and IPC are in cuda_copy.c. */
#include <stdlib.h>

#include "device/cuda/cuda_internal.h"
/* launch fills the device fields of the task (device.h's contract). */
#include "sched/task.h"
#include "util/log.h"

/* ---- probe and memory ------------------------------------------------ */

static int cuda_probe(int *count)
{
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver) {
        (void)cudaGetLastError();
        weft_debug(-1, "cuda: no device (%s)", cudaGetErrorString(err));
        *count = 0;
        return WEFT_SUCCESS;
    }
    int rc = weft_cuda_check(NULL, err, "cudaGetDeviceCount");
    if (rc == WEFT_SUCCESS) *count = n;
    return rc;
}

static int cuda_mem_info(weft_device_t *dev, size_t *free_bytes, size_t *total_bytes)
{
    size_t f = 0, t = 0;
    int rc = weft_cuda_use(dev);
    if (rc == WEFT_SUCCESS) rc = weft_cuda_check(dev, cudaMemGetInfo(&f, &t), "cudaMemGetInfo");
    if (rc == WEFT_SUCCESS) {
        *free_bytes = f;
        *total_bytes = t;
    }
    return rc;
}

/* The UUID: the same in every process whatever CUDA_VISIBLE_DEVICES says,
 * and distinct for MIG instances of one GPU (which have their own memory). */
static int cuda_identity(weft_device_t *dev, char *key, size_t len)
{
    struct cudaDeviceProp prop;
    int rc = weft_cuda_check(dev, cudaGetDeviceProperties(&prop, weft_cuda_priv(dev)->ordinal),
                             "cudaGetDeviceProperties");
    if (rc != WEFT_SUCCESS) return rc;
    int n = snprintf(key, len, "cuda-");
    for (int i = 0; i < 16 && n > 0 && (size_t)n < len; i++)
        n += snprintf(key + n, len - (size_t)n, "%02x", (unsigned char)prop.uuid.bytes[i]);
    return n > 0 && (size_t)n < len ? WEFT_SUCCESS : WEFT_ERR_INVALID;
}

/* What a rank still takes on its GPU outside its zone once open: the
 * context's growth and the workspaces cuBLAS and cuSOLVER allocate on
 * first use, for each execution stream, plus the task workspaces of a
 * rank that opens the GPU after another one measured its free memory. */
#define CUDA_HEADROOM_CONTEXT ((size_t)512 << 20)
#define CUDA_HEADROOM_PER_STREAM ((size_t)32 << 20)

static size_t cuda_headroom(size_t workspace_bytes, int nstreams)
{
    size_t nexec = (size_t)(nstreams - WEFT_STREAM_EXEC0);
    return CUDA_HEADROOM_CONTEXT + nexec * (CUDA_HEADROOM_PER_STREAM + workspace_bytes);
}

static int cuda_mem_reserve(weft_device_t *dev, size_t bytes, void **base)
{
    void *p = NULL;
    int rc = weft_cuda_use(dev);
    if (rc == WEFT_SUCCESS)
        rc = weft_cuda_check(dev, cudaMalloc(&p, bytes), "cudaMalloc (device zone)");
    if (rc == WEFT_SUCCESS) *base = p;
    return rc;
}

static void cuda_mem_release(weft_device_t *dev, void *base, size_t bytes)
{
    (void)bytes;
    if (base == NULL || weft_cuda_use(dev) != WEFT_SUCCESS) return;
    (void)weft_cuda_check(dev, cudaFree(base), "cudaFree (device zone)");
}

/* ---- open and close -------------------------------------------------- */

/* Streams IN and OUT at the highest priority (copies only: priorities
 * order kernels, copies use the copy engines), the execution streams at
 * the lowest, and the urgent one, if asked for, at the highest, so that
 * the block scheduler serves its kernels before theirs
 * (cudaDeviceGetStreamPriorityRange: "greatest" is numerically smallest). */
static int cuda_open_streams(weft_device_t *dev, weft_cuda_dev_t *c, int nstreams)
{
    int least = 0, greatest = 0;
    int rc = weft_cuda_check(dev, cudaDeviceGetStreamPriorityRange(&least, &greatest),
                             "cudaDeviceGetStreamPriorityRange");
    for (int s = 0; s < nstreams && rc == WEFT_SUCCESS; s++) {
        int prio = s < WEFT_STREAM_EXEC0 || s == dev->urgent_stream ? greatest : least;
        rc = weft_cuda_check(
            dev, cudaStreamCreateWithPriority(&c->stream[s], cudaStreamNonBlocking, prio),
            "cudaStreamCreateWithPriority");
    }
    return rc;
}

/* One cuBLAS handle, one cuSOLVER handle and one workspace per execution
 * stream, the handles bound to their stream. */
static int cuda_open_exec(weft_device_t *dev, weft_cuda_dev_t *c, int s)
{
    int rc = weft_cuda_check_blas(dev, cublasCreate(&c->blas[s]), "cublasCreate");
    if (rc == WEFT_SUCCESS)
        rc =
            weft_cuda_check_blas(dev, cublasSetStream(c->blas[s], c->stream[s]), "cublasSetStream");
    if (rc == WEFT_SUCCESS)
        rc = weft_cuda_check_solver(dev, cusolverDnCreate(&c->solver[s]), "cusolverDnCreate");
    if (rc == WEFT_SUCCESS)
        rc = weft_cuda_check_solver(dev, cusolverDnSetStream(c->solver[s], c->stream[s]),
                                    "cusolverDnSetStream");
    if (rc == WEFT_SUCCESS && c->workspace_bytes > 0)
        rc = weft_cuda_check(dev, cudaMalloc(&c->workspace[s], c->workspace_bytes),
                             "cudaMalloc (task workspace; see parameter device_workspace)");
    return rc;
}

/* Frees what cuda_open_streams/cuda_open_exec made, in reverse order;
 * tolerates a partial open. The device is current. */
static void cuda_teardown(weft_device_t *dev, weft_cuda_dev_t *c)
{
    for (int s = WEFT_MAX_STREAMS - 1; s >= 0; s--) {
        if (c->workspace[s] != NULL)
            (void)weft_cuda_check(dev, cudaFree(c->workspace[s]), "cudaFree (workspace)");
        if (c->solver[s] != NULL)
            (void)weft_cuda_check_solver(dev, cusolverDnDestroy(c->solver[s]), "cusolverDnDestroy");
        if (c->blas[s] != NULL)
            (void)weft_cuda_check_blas(dev, cublasDestroy(c->blas[s]), "cublasDestroy");
        if (c->stream[s] != NULL)
            (void)weft_cuda_check(dev, cudaStreamDestroy(c->stream[s]), "cudaStreamDestroy");
    }
}

static int cuda_open_ordinal(weft_device_t *dev, int index)
{
    int count = 0;
    int rc = cuda_probe(&count);
    if (rc != WEFT_SUCCESS) return rc;
    if (index < 0 || index >= count) {
        weft_log(WEFT_LOG_ERROR, dev->index,
                 "cuda: device %d asked for but %d visible (check device_cuda_enabled "
                 "and CUDA_VISIBLE_DEVICES)",
                 index, count);
        return WEFT_ERR_NODEV;
    }
    return weft_cuda_check(dev, cudaSetDevice(index), "cudaSetDevice");
}

static int cuda_open(weft_device_t *dev, int index)
{
    int rc = cuda_open_ordinal(dev, index);
    if (rc != WEFT_SUCCESS) return rc;
    weft_cuda_dev_t *c = calloc(1, sizeof *c);
    if (c == NULL) return WEFT_ERR_NOMEM;
    c->ordinal = index;
    c->workspace_bytes = dev->workspace_bytes;
    if (pthread_mutex_init(&c->pool_lock, NULL) != 0) {
        free(c);
        return WEFT_ERR_NOMEM;
    }
    int urgent = 0;
    int nstreams = WEFT_STREAM_EXEC0 +
                   weft_device_exec_streams(dev->params, WEFT_CUDA_EXEC_STREAMS_DEFAULT, &urgent);
    dev->urgent_stream = urgent ? nstreams : -1;
    nstreams += urgent;
    rc = cuda_open_streams(dev, c, nstreams);
    for (int s = WEFT_STREAM_EXEC0; s < nstreams && rc == WEFT_SUCCESS; s++)
        rc = cuda_open_exec(dev, c, s);
    if (rc != WEFT_SUCCESS) goto undo_resources;
    dev->priv = c;
    dev->nstreams = nstreams;
    dev->caps = WEFT_DEVCAP_IPC;
    dev->headroom_bytes = cuda_headroom(c->workspace_bytes, nstreams);
    weft_debug(dev->index, "cuda: device %d open, %d execution streams, %zu B workspace each",
               index, nstreams - WEFT_STREAM_EXEC0, c->workspace_bytes);
    return WEFT_SUCCESS;

undo_resources:
    cuda_teardown(dev, c);
    pthread_mutex_destroy(&c->pool_lock);
    free(c);
    return rc;
}

static void cuda_close(weft_device_t *dev)
{
    weft_cuda_dev_t *c = weft_cuda_priv(dev);
    if (c == NULL) return;
    if (weft_cuda_use(dev) == WEFT_SUCCESS) {
        for (int s = 0; s < dev->nstreams; s++)
            (void)weft_cuda_check(dev, cudaStreamSynchronize(c->stream[s]),
                                  "cudaStreamSynchronize (close)");
        weft_cuda_event_pool_drain(dev);
        cuda_teardown(dev, c);
    }
    pthread_mutex_destroy(&c->pool_lock);
    free(c);
    dev->priv = NULL;
}

/* ---- peer access ----------------------------------------------------- */

static int cuda_can_access_peer(weft_device_t *dev, weft_device_t *peer)
{
    if (peer == NULL || peer->ops == NULL || peer->ops->type != WEFT_DEV_CUDA || peer->priv == NULL)
        return 0;
    int me = weft_cuda_priv(dev)->ordinal, other = weft_cuda_priv(peer)->ordinal;
    if (me == other) return 1;
    int can = 0;
    if (weft_cuda_check(dev, cudaDeviceCanAccessPeer(&can, me, other), "cudaDeviceCanAccessPeer") !=
            WEFT_SUCCESS ||
        !can)
        return 0;
    if (weft_cuda_use(dev) != WEFT_SUCCESS) return 0;
    cudaError_t err = cudaDeviceEnablePeerAccess(other, 0);
    if (err == cudaErrorPeerAccessAlreadyEnabled) {
        (void)cudaGetLastError();
        err = cudaSuccess;
    }
    if (weft_cuda_check(dev, err, "cudaDeviceEnablePeerAccess") != WEFT_SUCCESS) return 0;
    weft_debug(dev->index, "cuda: peer access %d -> %d enabled", me, other);
    return 1;
}

/* ---- launch ---------------------------------------------------------- */

static int cuda_launch(weft_device_t *dev, int stream, struct weft_task *t, weft_body_fn body)
{
    if (stream < WEFT_STREAM_EXEC0 || stream >= dev->nstreams) {
        weft_log(WEFT_LOG_ERROR, dev->index,
                 "cuda launch: stream %d is not an execution stream [%d, %d)", stream,
                 WEFT_STREAM_EXEC0, dev->nstreams);
        return WEFT_ERR_INVALID;
    }
    weft_cuda_dev_t *c = weft_cuda_priv(dev);
    int rc = weft_cuda_use(dev);
    if (rc != WEFT_SUCCESS) return rc;
    t->stream = c->stream[stream];
    t->blas = c->blas[stream];
    t->solver = c->solver[stream];
    t->workspace = c->workspace[stream];
    t->workspace_bytes = c->workspace[stream] != NULL ? c->workspace_bytes : 0;
    rc = body(t);
    cudaError_t err = cudaGetLastError(); /* a failed launch of the body's own kernels */
    if (err != cudaSuccess) {
        weft_log(WEFT_LOG_ERROR, dev->index, "cuda: task '%s' left a CUDA error: %s (%s)",
                 t->cls != NULL && t->cls->name != NULL ? t->cls->name : "?",
                 cudaGetErrorString(err), cudaGetErrorName(err));
        return rc < 0 ? rc : WEFT_ERR_TASK;
    }
    return rc;
}

/* ---- the table ------------------------------------------------------- */

static void *cuda_stream_handle(weft_device_t *dev, int stream)
{
    if (stream < 0 || stream >= dev->nstreams) return NULL;
    return weft_cuda_priv(dev)->stream[stream];
}

static int cuda_host_register(weft_device_t *dev, void *ptr, size_t bytes)
{
    return weft_cuda_host_register(ptr, bytes);
}

static int cuda_host_unregister(weft_device_t *dev, void *ptr)
{
    return weft_cuda_host_unregister(ptr);
}

const weft_device_ops_t weft_cuda_ops = {
    .name = "cuda",
    .type = WEFT_DEV_CUDA,
    .probe = cuda_probe,
    .open = cuda_open,
    .close = cuda_close,
    .mem_info = cuda_mem_info,
    .identity = cuda_identity,
    .mem_reserve = cuda_mem_reserve,
    .mem_release = cuda_mem_release,
    .mem_alloc_tile = cuda_mem_reserve, /* a cudaMalloc either way */
    .mem_free_tile = cuda_mem_release,
    .copy_async = weft_cuda_copy_async,
    .event_record = weft_cuda_event_record,
    .event_query = weft_cuda_event_query,
    .event_sync = weft_cuda_event_sync,
    .event_destroy = weft_cuda_event_destroy,
    .stream_wait = weft_cuda_stream_wait,
    .launch = cuda_launch,
    .can_access_peer = cuda_can_access_peer,
    .ipc_export = weft_cuda_ipc_export,
    .ipc_import = weft_cuda_ipc_import,
    .ipc_close = weft_cuda_ipc_close,
    .stream_handle = cuda_stream_handle,
    .host_register = cuda_host_register,
    .host_unregister = cuda_host_unregister,
};
