/* What the diagonal-tile chain of a tile Cholesky costs on a GPU busy with
 * trailing-update GEMMs, and whether green contexts (a disjoint set of SMs
 * for the chain) give it back its solo speed (issue "GPU speed where
 * runtimes lose"). The chain is one step's critical path: cusolverDnDpotrf
 * of an nb tile, then the inversion of its factor (cublasDtrsm of the
 * identity), as weft-potrf's POTRF and TRTRI tasks run it. The background
 * is 4 streams of nb x nb x nb DGEMMs.
 *
 * Cases, each printed as the chain's time per step and the GEMMs' rate:
 *   alone        the chain on an idle GPU; the GEMMs alone
 *   shared/prio  beside the GEMMs, the chain's stream at the highest
 *                priority (weft's urgent stream today)
 *   green S      the chain on a green context of S SMs, the GEMMs on one
 *                of the SMs left (S = 8, 16, 24, 32)
 *
 * Build: gcc -std=c11 -O2 -I<cuda>/include green_chain.c -L<cuda>/lib64
 *        -lcusolver -lcublas -lcudart -lcuda
 * Usage: green_chain [nb] (default 1024) */
#define _POSIX_C_SOURCE 200809L
#define CHAIN_BENCH_NAME "green_chain"
#include <cuda.h>

#include "chain_bench.h"

/* One step's chain: a fresh SPD tile, its factor, the factor's inverse. */
static void chain(const lane_t *l, const work_t *w)
{
    const double one = 1.0;
    size_t bytes = (size_t)w->nb * w->nb * sizeof(double);
    CK(cudaMemcpyAsync(w->a, w->spd, bytes, cudaMemcpyDeviceToDevice, l->s));
    CK(cusolverDnDpotrf(l->solver, CUBLAS_FILL_MODE_LOWER, w->nb, w->a, w->nb, w->ws, w->lwork,
                        w->info));
    CK(cudaMemcpyAsync(w->x, w->eye, bytes, cudaMemcpyDeviceToDevice, l->s));
    CK(cublasDtrsm(l->blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                   CUBLAS_DIAG_NON_UNIT, w->nb, w->nb, &one, w->a, w->nb, w->x, w->nb));
}

/* The chain's time per step beside `count` GEMMs a background lane (none
 * when count is 0), and the background's rate in TFLOP/s. Host clocks:
 * the lanes may belong to different (green) contexts, whose events do not
 * mix. */
static void run_case(const char *name, const lane_t *ch, const lane_t *bg, const work_t *w,
                     int count)
{
    CK(cudaDeviceSynchronize());
    for (int i = 0; ch && i < NGEMM_STREAMS; i++) CK(cudaStreamSynchronize(bg[i].s));
    double g0 = now_ms();
    for (int i = 0; i < NGEMM_STREAMS && count > 0; i++) gemms(&bg[i], w, i, count);
    double chain_ms = 0;
    if (ch) {
        double c0 = now_ms();
        for (int k = 0; k < CHAINS; k++) chain(ch, w);
        CK(cudaStreamSynchronize(ch->s));
        chain_ms = (now_ms() - c0) / CHAINS;
    }
    for (int i = 0; i < NGEMM_STREAMS && count > 0; i++) CK(cudaStreamSynchronize(bg[i].s));
    double gemm_ms = now_ms() - g0;
    double flops = 2.0 * w->nb * (double)w->nb * w->nb * count * NGEMM_STREAMS;
    printf("%-24s chain %8.3f ms/step   gemms %7.2f TFLOP/s\n", name, chain_ms,
           count > 0 ? flops / gemm_ms / 1e9 : 0.0);
}

/* Two green contexts: `sms` SMs for the chain, the rest for the GEMMs;
 * each lane's handles are made with its context current. */
static int green_split(int sms, lane_t *ch, lane_t *bg, CUcontext *prim)
{
    CUdevice dev;
    CK(cuDeviceGet(&dev, 0));
    CUdevResource all, part[2];
    CK(cuDeviceGetDevResource(dev, &all, CU_DEV_RESOURCE_TYPE_SM));
    unsigned groups = 1;
    CK(cuDevSmResourceSplitByCount(&part[0], &groups, &all, &part[1], 0, (unsigned)sms));
    printf("green: %u SMs for the chain, %u for the GEMMs (of %u)\n", part[0].sm.smCount,
           part[1].sm.smCount, all.sm.smCount);
    CUgreenCtx g[2];
    for (int k = 0; k < 2; k++) {
        CUdevResourceDesc desc;
        CK(cuDevResourceGenerateDesc(&desc, &part[k], 1));
        CK(cuGreenCtxCreate(&g[k], desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
        CUcontext c;
        CK(cuCtxFromGreenCtx(&c, g[k]));
        CK(cuCtxSetCurrent(c));
        int lo, hi;
        CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
        for (int i = 0; i < (k == 0 ? 1 : NGEMM_STREAMS); i++) {
            CUstream s;
            CK(cuGreenCtxStreamCreate(&s, g[k], CU_STREAM_NON_BLOCKING, k == 0 ? hi : lo));
            lane_make(k == 0 ? ch : &bg[i], (cudaStream_t)s);
        }
    }
    CK(cuCtxSetCurrent(*prim));
    return 0;
}

int main(int argc, char **argv)
{
    int nb = argc > 1 ? atoi(argv[1]) : 1024;
    CK(cudaSetDevice(0));
    CK(cudaFree(0));
    CUcontext prim;
    CK(cuCtxGetCurrent(&prim));
    work_t w;
    work_make(&w, nb);
    int lo, hi;
    CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    lane_t ch, bg[NGEMM_STREAMS];
    cudaStream_t s;
    CK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, hi));
    lane_make(&ch, s);
    for (int i = 0; i < NGEMM_STREAMS; i++) {
        CK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, lo));
        lane_make(&bg[i], s);
    }
    int count = gemm_count(nb);
    printf("nb %d, %d chains a case, %d GEMMs on each of %d streams\n", nb, CHAINS, count,
           NGEMM_STREAMS);
    run_case("warm-up", &ch, bg, &w, count / 4);
    run_case("alone", &ch, bg, &w, 0);
    run_case("gemms alone", NULL, bg, &w, count);
    run_case("shared/prio", &ch, bg, &w, count);
    for (int sms = 8; sms <= 32; sms += 8) {
        lane_t gch, gbg[NGEMM_STREAMS];
        green_split(sms, &gch, gbg, &prim);
        char name[32];
        snprintf(name, sizeof name, "green %d: chain alone", sms);
        run_case(name, &gch, gbg, &w, 0);
        snprintf(name, sizeof name, "green %d: gemms alone", sms);
        run_case(name, NULL, gbg, &w, count);
        snprintf(name, sizeof name, "green %d: both", sms);
        run_case(name, &gch, gbg, &w, count);
        lane_free(&gch);
        for (int i = 0; i < NGEMM_STREAMS; i++) lane_free(&gbg[i]);
    }
    lane_free(&ch);
    for (int i = 0; i < NGEMM_STREAMS; i++) lane_free(&bg[i]);
    return 0;
}
