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
 * Each rank uses GPU (rank % count). NCCL refuses two ranks on one GPU: with
 * one GPU the nccl column says so and only ipc runs.
 *
 * Usage: mpiexec -n 2 bare_p2p [--min-size B] [--max-size B] [--iters N]
 * Prints one line a size: bytes, iters, nccl lat (us) and GB/s, ipc lat
 * (us) and GB/s, ipc_pp lat (us); the best of 3 measurements each. */
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

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n, ndev = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int64_t min = 8, max = (int64_t)256 << 20, iters = 100;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--min-size")) min = parse_size(argv[i + 1]);
        if (!strcmp(argv[i], "--max-size")) max = parse_size(argv[i + 1]);
        if (!strcmp(argv[i], "--iters")) iters = atoll(argv[i + 1]);
    }
    if (n != 2 || cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
        if (rank == 0) fprintf(stderr, "bare_p2p: needs 2 ranks and a GPU\n");
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
        printf("# bare_p2p: GPUs %d and %d%s\n%10s %6s %12s %10s %12s %10s %12s\n", 0, 1 % ndev,
               use_nccl ? "" : " (one GPU: no nccl)", "bytes", "iters", "nccl_lat", "nccl_bw",
               "ipc_lat", "ipc_bw", "ipc_pp_lat");
    for (int64_t size = min; size <= max; size *= 2) {
        int64_t it = iters_for(size, iters);
        double tn = use_nccl ? nccl_time(comm, st, buf, size, it, rank) : 0;
        double ti = ipc_time(local, peer, st, size, it, rank);
        double tp = ipc_pp_time(buf, peer, st, size, it, rank);
        if (rank == 0)
            printf("%10lld %6lld %12.2f %10.4g %12.2f %10.4g %12.2f\n", (long long)size,
                   (long long)it, tn * 1e6, use_nccl ? (double)size / tn / 1e9 : 0.0, ti * 1e6,
                   (double)size / ti / 1e9, tp * 1e6);
        fflush(stdout);
    }
    if (comm) ncclCommDestroy(comm);
    if (peer) cudaIpcCloseMemHandle(peer);
    cudaFree(buf);
    cudaFree(local);
    MPI_Finalize();
    return 0;
}
