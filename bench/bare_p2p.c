/* The bare side of the GPU ping-pong (bench/gpu_pingpong.sh): what NCCL and
 * CUDA IPC give between the GPUs of two ranks with no runtime around them,
 * for the same sizes as weft-pingpong -g 1.
 *
 *   nccl: ncclSend / ncclRecv ping-pong on a 2-rank communicator, each
 *         operation waited for on the host; lat = half a round trip;
 *   ipc:  rank 1 maps rank 0's buffer (cudaIpcOpenMemHandle) and pulls it
 *         with one cudaMemcpyAsync, waited for; lat = one pull;
 *   ipc_pp: the ranks pull each other's buffer in turn, a zero-byte MPI
 *         message handing the turn over after each pull, as the tile goes
 *         back and forth in weft-pingpong; lat = one pull and its message.
 *         It tells what the alternation itself costs (the other GPU
 *         process's turn, the caches) from what the runtime adds.
 *   mpi:  host MPI_Send / MPI_Recv ping-pong of pinned host buffers of the
 *         same size (what weft-pingpong's mpi column measures);
 *   staged: the device buffer goes through a pinned host buffer in chunks
 *         of --chunk bytes (default 4 MiB), pipelined by hand: the sender
 *         queues every chunk's device-to-host copy, each with an event, and
 *         sends a chunk as soon as its event is over; the receiver posts
 *         every chunk's receive and queues its host-to-device copy as soon
 *         as it arrives. What a staged move can reach on this machine with
 *         no runtime around it; lat = half a round trip.
 *   staged1: the same with one chunk send in flight at a time (the next
 *         posted once the last is over): whether concurrent chunk messages
 *         slow a shared-memory MPI (on one H100 host, 2026-12-06: no).
 * Each rank uses GPU (rank % count). NCCL refuses two ranks on one GPU: with
 * one GPU the nccl column says so and only ipc runs.
 *
 * Usage: mpiexec -n 2 bare_p2p [--min-size B] [--max-size B] [--iters N]
 * Prints one line a size: bytes, iters, nccl lat (us) and GB/s, ipc lat
 * (us) and GB/s, ipc_pp lat (us), mpi and staged GB/s and their ratio,
 * staged1 GB/s and its ratio to mpi;
 * the best of 3 measurements each. */
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BYTES_PER_SIZE ((int64_t)512 << 20)
#define REPS 3

#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "bare_p2p: %s: %s\n", #call, cudaGetErrorString(e_));                 \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

static int64_t parse_size(const char *s)
{
    char *end;
    int64_t v = strtoll(s, &end, 10);
    if (*end == 'K') v <<= 10;
    if (*end == 'M') v <<= 20;
    if (*end == 'G') v <<= 30;
    return v;
}

static int64_t iters_for(int64_t size, int64_t iters)
{
    int64_t cap = BYTES_PER_SIZE / size;
    if (cap < iters) iters = cap;
    return iters < 3 ? 3 : iters;
}

/* Best time of REPS for `iters` half round trips of nccl. */
static double nccl_time(ncclComm_t comm, cudaStream_t st, char *buf, int64_t size, int64_t iters,
                        int rank)
{
    double best = 1e30;
    for (int r = 0; r < REPS; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int64_t i = 0; i < iters; i++) {
            if (rank == 0) {
                ncclSend(buf, (size_t)size, ncclChar, 1, comm, st);
                ncclRecv(buf, (size_t)size, ncclChar, 1, comm, st);
            } else {
                ncclRecv(buf, (size_t)size, ncclChar, 0, comm, st);
                ncclSend(buf, (size_t)size, ncclChar, 0, comm, st);
            }
            CK(cudaStreamSynchronize(st));
        }
        double t = (MPI_Wtime() - t0) / (2.0 * (double)iters);
        if (t < best) best = t;
    }
    return best;
}

/* Best time of REPS for one pull of size bytes from rank 0's buffer (rank
 * 1 pulls; rank 0 waits in the barrier). */
static double ipc_time(char *local, const char *peer, cudaStream_t st, int64_t size, int64_t iters,
                       int rank)
{
    double best = 1e30;
    for (int r = 0; r < REPS; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int64_t i = 0; rank == 1 && i < iters; i++) {
            CK(cudaMemcpyAsync(local, peer, (size_t)size, cudaMemcpyDeviceToDevice, st));
            CK(cudaStreamSynchronize(st));
        }
        double t = (MPI_Wtime() - t0) / (double)iters;
        if (t < best) best = t;
    }
    MPI_Bcast(&best, 1, MPI_DOUBLE, 1, MPI_COMM_WORLD);
    return best;
}

/* Best time of REPS for one move of the ping-pong of pulls: move i is rank
 * 1's when i is even; each waits for the other's message, pulls into its
 * own buffer (the one the other pulls next), and hands the turn over. */
static double ipc_pp_time(char *mine, const char *peer, cudaStream_t st, int64_t size,
                          int64_t iters, int rank)
{
    int other = 1 - rank, last = (iters - 1) % 2 == 0 ? 1 : 0;
    double best = 1e30;
    for (int r = 0; r < REPS; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int64_t i = 0; i < iters; i++) {
            if (rank != (i % 2 == 0 ? 1 : 0)) continue;
            if (i > 0) MPI_Recv(NULL, 0, MPI_BYTE, other, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CK(cudaMemcpyAsync(mine, peer, (size_t)size, cudaMemcpyDeviceToDevice, st));
            CK(cudaStreamSynchronize(st));
            if (i + 1 < iters) MPI_Send(NULL, 0, MPI_BYTE, other, 0, MPI_COMM_WORLD);
        }
        double t = (MPI_Wtime() - t0) / (double)iters;
        if (rank == last && t < best) best = t;
    }
    MPI_Bcast(&best, 1, MPI_DOUBLE, last, MPI_COMM_WORLD);
    return best;
}

/* One staged move of size bytes from dev on this rank to the peer's device
 * (send) or into dev from the peer (receive), in chunks through host; at
 * most `sends` chunk sends in flight (0: all). */
static void staged_move(char *dev, char *host, cudaStream_t st, cudaEvent_t *ev, MPI_Request *req,
                        int64_t size, int64_t chunk, int peer, int send, int sends)
{
    int n = (int)((size + chunk - 1) / chunk);
    for (int k = 0; k < n; k++) {
        int64_t off = (int64_t)k * chunk, len = size - off < chunk ? size - off : chunk;
        if (send) {
            CK(cudaMemcpyAsync(host + off, dev + off, (size_t)len, cudaMemcpyDeviceToHost, st));
            CK(cudaEventRecord(ev[k], st));
        } else {
            MPI_Irecv(host + off, (int)len, MPI_BYTE, peer, 2 + k, MPI_COMM_WORLD, &req[k]);
        }
    }
    for (int done = 0; done < n; done++) {
        int k = done;
        if (send) {
            if (sends > 0 && k >= sends) MPI_Wait(&req[k - sends], MPI_STATUS_IGNORE);
            CK(cudaEventSynchronize(ev[k]));
        } else {
            MPI_Waitany(n, req, &k, MPI_STATUS_IGNORE);
        }
        int64_t off = (int64_t)k * chunk, len = size - off < chunk ? size - off : chunk;
        if (send)
            MPI_Isend(host + off, (int)len, MPI_BYTE, peer, 2 + k, MPI_COMM_WORLD, &req[k]);
        else
            CK(cudaMemcpyAsync(dev + off, host + off, (size_t)len, cudaMemcpyHostToDevice, st));
    }
    if (send) MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    CK(cudaStreamSynchronize(st));
}

/* Best time of REPS for half a round trip: host MPI of pinned buffers
 * (staged == 0) or staged moves between the device buffers (staged == 1:
 * every chunk send at once, 2: one at a time). */
static double host_time(char *dev, char *host, cudaStream_t st, cudaEvent_t *ev, MPI_Request *req,
                        int64_t size, int64_t chunk, int64_t iters, int rank, int staged)
{
    double best = 1e30;
    for (int r = 0; r < REPS; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int64_t i = 0; i < iters; i++) {
            for (int leg = 0; leg < 2; leg++) {
                int send = (leg == 0) == (rank == 0);
                if (staged)
                    staged_move(dev, host, st, ev, req, size, chunk, 1 - rank, send,
                                staged == 2 ? 1 : 0);
                else if (send)
                    MPI_Send(host, (int)size, MPI_BYTE, 1 - rank, 1, MPI_COMM_WORLD);
                else
                    MPI_Recv(host, (int)size, MPI_BYTE, 1 - rank, 1, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
            }
        }
        double t = (MPI_Wtime() - t0) / (2.0 * (double)iters);
        if (t < best) best = t;
    }
    MPI_Bcast(&best, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return best;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n, ndev = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int64_t min = 8, max = (int64_t)256 << 20, iters = 100, chunk = (int64_t)4 << 20;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--min-size")) min = parse_size(argv[i + 1]);
        if (!strcmp(argv[i], "--max-size")) max = parse_size(argv[i + 1]);
        if (!strcmp(argv[i], "--iters")) iters = atoll(argv[i + 1]);
        if (!strcmp(argv[i], "--chunk")) chunk = parse_size(argv[i + 1]);
    }
    if (n != 2 || cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1 || chunk < 1 ||
        max > INT32_MAX) {
        if (rank == 0)
            fprintf(stderr, "bare_p2p: needs 2 ranks, a GPU, --chunk >= 1, --max-size < 2G\n");
        MPI_Finalize();
        return 1;
    }
    CK(cudaSetDevice(rank % ndev));
    char *buf, *local;
    cudaStream_t st;
    CK(cudaMalloc((void **)&buf, (size_t)max));
    CK(cudaMalloc((void **)&local, (size_t)max));
    CK(cudaMemset(buf, rank + 1, (size_t)max));
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    char *host;
    int nchunks = (int)((max + chunk - 1) / chunk);
    cudaEvent_t *ev = calloc((size_t)nchunks, sizeof *ev);
    MPI_Request *req = calloc((size_t)nchunks, sizeof *req);
    CK(cudaMallocHost((void **)&host, (size_t)max));
    for (int k = 0; k < nchunks; k++) CK(cudaEventCreateWithFlags(&ev[k], cudaEventDisableTiming));
    /* Each rank maps the other's buf: rank 1 pulls rank 0's for ipc, and
     * both pull for ipc_pp. */
    cudaIpcMemHandle_t h, theirs;
    CK(cudaIpcGetMemHandle(&h, buf));
    MPI_Sendrecv(&h, sizeof h, MPI_BYTE, 1 - rank, 1, &theirs, sizeof theirs, MPI_BYTE, 1 - rank, 1,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    char *peer = NULL;
    CK(cudaIpcOpenMemHandle((void **)&peer, theirs, cudaIpcMemLazyEnablePeerAccess));
    ncclComm_t comm = NULL;
    int use_nccl = ndev >= 2;
    if (use_nccl) {
        ncclUniqueId id;
        if (rank == 0) ncclGetUniqueId(&id);
        MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
        use_nccl = ncclCommInitRank(&comm, 2, id, rank) == ncclSuccess;
    }
    if (rank == 0)
        printf("# bare_p2p: GPUs %d and %d%s, staged chunk %lld B\n%10s %6s %12s %10s %12s %10s "
               "%12s %10s %10s %8s %10s %8s\n",
               0, 1 % ndev, use_nccl ? "" : " (one GPU: no nccl)", (long long)chunk, "bytes",
               "iters", "nccl_lat", "nccl_bw", "ipc_lat", "ipc_bw", "ipc_pp_lat", "mpi_bw",
               "staged_bw", "st/mpi", "staged1_bw", "st1/mpi");
    for (int64_t size = min; size <= max; size *= 2) {
        int64_t it = iters_for(size, iters);
        double tn = use_nccl ? nccl_time(comm, st, buf, size, it, rank) : 0;
        double ti = ipc_time(local, peer, st, size, it, rank);
        double tp = ipc_pp_time(buf, peer, st, size, it, rank);
        double tm = host_time(buf, host, st, ev, req, size, chunk, it, rank, 0);
        double ts = host_time(buf, host, st, ev, req, size, chunk, it, rank, 1);
        double t1 = host_time(buf, host, st, ev, req, size, chunk, it, rank, 2);
        if (rank == 0)
            printf("%10lld %6lld %12.2f %10.4g %12.2f %10.4g %12.2f %10.4g %10.4g %8.3f %10.4g "
                   "%8.3f\n",
                   (long long)size, (long long)it, tn * 1e6,
                   use_nccl ? (double)size / tn / 1e9 : 0.0, ti * 1e6, (double)size / ti / 1e9,
                   tp * 1e6, (double)size / tm / 1e9, (double)size / ts / 1e9, tm / ts,
                   (double)size / t1 / 1e9, tm / t1);
        fflush(stdout);
    }
    if (comm) ncclCommDestroy(comm);
    if (peer) cudaIpcCloseMemHandle(peer);
    for (int k = 0; k < nchunks; k++) cudaEventDestroy(ev[k]);
    free(ev);
    free(req);
    cudaFreeHost(host);
    cudaFree(buf);
    cudaFree(local);
    MPI_Finalize();
    return 0;
}
