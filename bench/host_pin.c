/* What pinning host memory costs and buys on this GPU (issue 18): the time
 * to page-lock B bytes (cudaHostRegister of fresh memory, of memory already
 * touched, and cudaHostAlloc), in slabs of S bytes, and the 2D copy rate of
 * one tile H2D and D2H from pageable against pinned memory, with the time
 * the calling thread is held by an "asynchronous" copy (pageable D2H is
 * synchronous: the device manager's thread would wait it out).
 *
 *   gcc -std=c11 -O2 -I$CUDA/include bench/host_pin.c -o host_pin \
 *       -L$CUDA/lib64 -Wl,-rpath,$CUDA/lib64 -lcudart
 *   ./host_pin [total GiB = 8] [slab MiB = 256] [tile n = 2048]
 *
 * Prints figures only; never fails on a timing. */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

#define CK(x)                                                                                  \
    do {                                                                                       \
        cudaError_t e_ = (x);                                                                  \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                           \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

/* Registers `total` bytes in slabs; touch first when asked. Seconds. */
static double register_slabs(size_t total, size_t slab, int touch, char ***out, int *nout)
{
    int n = (int)(total / slab);
    char **p = calloc((size_t)n, sizeof *p);
    for (int i = 0; i < n; i++) {
        if (posix_memalign((void **)&p[i], 4096, slab)) exit(1);
        if (touch) memset(p[i], 1, slab);
    }
    double t0 = now();
    for (int i = 0; i < n; i++) CK(cudaHostRegister(p[i], slab, cudaHostRegisterPortable));
    double t = now() - t0;
    *out = p;
    *nout = n;
    return t;
}

static void unregister_slabs(char **p, int n, double *secs)
{
    double t0 = now();
    for (int i = 0; i < n; i++) CK(cudaHostUnregister(p[i]));
    *secs = now() - t0;
    for (int i = 0; i < n; i++) free(p[i]);
    free(p);
}

/* One n x n double tile copied `reps` times each way; GB/s and the
 * seconds the host thread spent inside the enqueue call. */
static void copy_rate(const char *what, double *host, double *dev, int n, cudaStream_t s)
{
    size_t pitch = (size_t)n * sizeof(double), bytes = pitch * (size_t)n;
    const int reps = 8;
    for (int dir = 0; dir < 2; dir++) {
        double call = 0, t0 = now();
        for (int r = 0; r < reps; r++) {
            double c0 = now();
            if (dir == 0)
                CK(cudaMemcpy2DAsync(dev, pitch, host, pitch, pitch, (size_t)n,
                                     cudaMemcpyHostToDevice, s));
            else
                CK(cudaMemcpy2DAsync(host, pitch, dev, pitch, pitch, (size_t)n,
                                     cudaMemcpyDeviceToHost, s));
            call += now() - c0;
        }
        CK(cudaStreamSynchronize(s));
        double t = now() - t0;
        printf("copy %-8s %s tile %d: %.1f GB/s, the enqueue call held the thread %.0f%% of it\n",
               what, dir == 0 ? "H2D" : "D2H", n, reps * bytes / t / 1e9, 100 * call / t);
    }
}

int main(int argc, char **argv)
{
    size_t total = (size_t)(argc > 1 ? atof(argv[1]) : 8) * (1ull << 30);
    size_t slab = (size_t)(argc > 2 ? atof(argv[2]) : 256) * (1ull << 20);
    int n = argc > 3 ? atoi(argv[3]) : 2048;
    CK(cudaFree(0));
    char **p;
    int np;
    double un;
    double t = register_slabs(total, slab, 0, &p, &np);
    unregister_slabs(p, np, &un);
    printf("cudaHostRegister fresh:   %.2f GiB in %d slabs: %.3f s (%.1f GB/s), unregister %.3f s\n",
           total / 1073741824.0, np, t, total / t / 1e9, un);
    t = register_slabs(total, slab, 1, &p, &np);
    unregister_slabs(p, np, &un);
    printf("cudaHostRegister touched: %.2f GiB in %d slabs: %.3f s (%.1f GB/s), unregister %.3f s\n",
           total / 1073741824.0, np, t, total / t / 1e9, un);
    double t0 = now();
    int nh = (int)(total / slab);
    void **h = calloc((size_t)nh, sizeof *h);
    for (int i = 0; i < nh; i++) CK(cudaHostAlloc(&h[i], slab, cudaHostAllocPortable));
    t = now() - t0;
    for (int i = 0; i < nh; i++) CK(cudaFreeHost(h[i]));
    free(h);
    printf("cudaHostAlloc:            %.2f GiB in %d slabs: %.3f s (%.1f GB/s)\n",
           total / 1073741824.0, nh, t, total / t / 1e9);
    /* Page faults alone, for scale: what a fill pays on first touch. */
    char *f;
    if (posix_memalign((void **)&f, 4096, total)) return 1;
    t0 = now();
    memset(f, 1, total);
    printf("first touch (memset, one thread): %.3f s (%.1f GB/s)\n", now() - t0,
           total / (now() - t0) / 1e9);
    free(f);

    size_t bytes = (size_t)n * n * sizeof(double);
    double *pageable, *pinned, *dev;
    if (posix_memalign((void **)&pageable, 64, bytes)) return 1;
    memset(pageable, 1, bytes);
    CK(cudaMallocHost((void **)&pinned, bytes));
    memset(pinned, 1, bytes);
    CK(cudaMalloc((void **)&dev, bytes));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    copy_rate("pageable", pageable, dev, n, s); /* warm-up of the driver's staging */
    copy_rate("pageable", pageable, dev, n, s);
    copy_rate("pinned", pinned, dev, n, s);
    CK(cudaStreamDestroy(s));
    CK(cudaFree(dev));
    CK(cudaFreeHost(pinned));
    free(pageable);
    return 0;
}
