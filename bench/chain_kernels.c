/* Ways to run one step of a tile Cholesky's diagonal chain on a GPU: the
 * lower factor L of an nb x nb SPD tile and L's inverse W (weft-potrf's
 * POTRF and TRTRI tasks), timed alone and beside 4 streams of nb-sized
 * DGEMMs (the trailing update) with the chain's stream at the highest
 * priority (issue "GPU speed where runtimes lose": at N <= 16384 the chain
 * is the run's critical path).
 *
 * Variants:
 *   potrf+trsm   cusolverDnDpotrf, then a TRSM of the identity (today)
 *   rec LEAF     both at once by halves: factor and invert the leading
 *                half, L21 = A21 W11^T by a GEMM, A22 -= L21 L21^T, the
 *                trailing half likewise, W21 = -W22 (L21 W11); below LEAF
 *                columns potrf+trsm. The GEMMs replace cuSOLVER's own
 *                panel TRSMs and the inversion's, which run far below the
 *                GEMM rate on these sizes.
 * Every variant's L and W are compared with the first's (max abs diff).
 *
 * Build: gcc -std=c11 -O2 -I<cuda>/include chain_kernels.c -L<cuda>/lib64
 *        -lcusolver -lcublas -lcudart
 * Usage: chain_kernels [nb] (default 1024) */
#define _POSIX_C_SOURCE 200809L
#define CHAIN_BENCH_NAME "chain_kernels"
#include <math.h>

#include "chain_bench.h"

static void lane_at(lane_t *l, int prio)
{
    cudaStream_t s;
    CK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, prio));
    lane_make(l, s);
}

/* a (n x n, lda) := its lower factor; x (n x n, ldx) := the factor's
 * inverse, x's upper part left as it is (zero). */
static void potrf_trsm(const lane_t *l, const work_t *w, double *a, int lda, double *x, int ldx,
                       int n)
{
    const double one = 1.0;
    CK(cusolverDnDpotrf(l->solver, CUBLAS_FILL_MODE_LOWER, n, a, lda, w->ws, w->lwork, w->info));
    CK(cudaMemcpy2DAsync(x, (size_t)ldx * sizeof(double), w->eye, (size_t)w->nb * sizeof(double),
                         (size_t)n * sizeof(double), n, cudaMemcpyDeviceToDevice, l->s));
    CK(cublasDtrsm(l->blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                   CUBLAS_DIAG_NON_UNIT, n, n, &one, a, lda, x, ldx));
}

static void by_halves(const lane_t *l, const work_t *w, double *a, int lda, double *x, int ldx,
                      int n, int leaf)
{
    if (n <= leaf) {
        potrf_trsm(l, w, a, lda, x, ldx, n);
        return;
    }
    const double one = 1.0, zero = 0.0, minus = -1.0;
    int n1 = n / 2, n2 = n - n1;
    double *a21 = a + n1, *a22 = a + n1 + (size_t)n1 * lda;
    double *x21 = x + n1, *x22 = x + n1 + (size_t)n1 * ldx;
    by_halves(l, w, a, lda, x, ldx, n1, leaf);
    /* L21 = A21 W11^T, through x21 (free until W21 is formed) */
    CK(cublasDgemm(l->blas, CUBLAS_OP_N, CUBLAS_OP_T, n2, n1, n1, &one, a21, lda, x, ldx, &zero,
                   x21, ldx));
    CK(cudaMemcpy2DAsync(a21, (size_t)lda * sizeof(double), x21, (size_t)ldx * sizeof(double),
                         (size_t)n2 * sizeof(double), n1, cudaMemcpyDeviceToDevice, l->s));
    CK(cublasDsyrk(l->blas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, n2, n1, &minus, a21, lda, &one,
                   a22, lda));
    by_halves(l, w, a22, lda, x22, ldx, n2, leaf);
    CK(cublasDgemm(l->blas, CUBLAS_OP_N, CUBLAS_OP_N, n2, n1, n1, &one, a21, lda, x, ldx, &zero,
                   w->tmp, n2));
    CK(cublasDgemm(l->blas, CUBLAS_OP_N, CUBLAS_OP_N, n2, n1, n2, &minus, x22, ldx, w->tmp, n2,
                   &zero, x21, ldx));
}

/* One step: a fresh SPD tile, then variant `leaf` (0: potrf+trsm). */
static void chain(const lane_t *l, const work_t *w, int leaf)
{
    size_t bytes = (size_t)w->nb * w->nb * sizeof(double);
    CK(cudaMemcpyAsync(w->a, w->spd, bytes, cudaMemcpyDeviceToDevice, l->s));
    if (leaf == 0) {
        potrf_trsm(l, w, w->a, w->nb, w->x, w->nb, w->nb);
        return;
    }
    CK(cudaMemsetAsync(w->x, 0, bytes, l->s));
    by_halves(l, w, w->a, w->nb, w->x, w->nb, w->nb, leaf);
}

/* The chain's time per step beside `count` GEMMs a background stream. */
static double run_case(const lane_t *ch, const lane_t *bg, const work_t *w, int leaf, int count,
                       double *tflops)
{
    CK(cudaDeviceSynchronize());
    double g0 = now_ms();
    for (int i = 0; i < NGEMM_STREAMS && count > 0; i++) gemms(&bg[i], w, i, count);
    double c0 = now_ms();
    for (int k = 0; k < CHAINS; k++) chain(ch, w, leaf);
    CK(cudaStreamSynchronize(ch->s));
    double chain_ms = (now_ms() - c0) / CHAINS;
    CK(cudaDeviceSynchronize());
    double flops = 2.0 * w->nb * (double)w->nb * w->nb * count * NGEMM_STREAMS;
    *tflops = count > 0 ? flops / (now_ms() - g0) / 1e9 : 0.0;
    return chain_ms;
}

/* Largest |difference| between the variant's L (lower part) and W and the
 * reference's, relative to the reference's largest entry. */
static double compare(const work_t *w, const double *ref_l, const double *ref_w)
{
    size_t n2 = (size_t)w->nb * w->nb;
    double *l = malloc(n2 * sizeof(double)), *x = malloc(n2 * sizeof(double));
    CK(cudaMemcpy(l, w->a, n2 * sizeof(double), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(x, w->x, n2 * sizeof(double), cudaMemcpyDeviceToHost));
    double d = 0, big = 0;
    for (int j = 0; j < w->nb; j++)
        for (int i = 0; i < w->nb; i++) {
            size_t k = (size_t)j * w->nb + i;
            if (i >= j) d = fmax(d, fabs(l[k] - ref_l[k]));
            d = fmax(d, fabs(x[k] - ref_w[k]));
            big = fmax(big, fmax(fabs(ref_l[k]), fabs(ref_w[k])));
        }
    free(l);
    free(x);
    return d / big;
}

int main(int argc, char **argv)
{
    int nb = argc > 1 ? atoi(argv[1]) : 1024;
    CK(cudaSetDevice(0));
    work_t w;
    work_make(&w, nb);
    int lo, hi;
    CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    lane_t ch, bg[NGEMM_STREAMS];
    lane_at(&ch, hi);
    for (int i = 0; i < NGEMM_STREAMS; i++) lane_at(&bg[i], lo);
    int count = gemm_count(nb);
    size_t n2 = (size_t)nb * nb;
    double *ref_l = malloc(n2 * sizeof(double)), *ref_w = malloc(n2 * sizeof(double));
    chain(&ch, &w, 0);
    CK(cudaStreamSynchronize(ch.s));
    CK(cudaMemcpy(ref_l, w.a, n2 * sizeof(double), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(ref_w, w.x, n2 * sizeof(double), cudaMemcpyDeviceToHost));
    double tf;
    run_case(&ch, bg, &w, 0, count / 4, &tf); /* warm-up */
    run_case(&ch, bg, &w, 0, 0, &tf);
    printf("nb %d, %d chains a case, %d GEMMs on each of %d streams\n", nb, CHAINS, count,
           NGEMM_STREAMS);
    int leaves[] = {0, 512, 256, 128, 64};
    for (size_t v = 0; v < sizeof leaves / sizeof leaves[0]; v++) {
        int leaf = leaves[v];
        if (leaf >= nb) continue;
        chain(&ch, &w, leaf);
        CK(cudaStreamSynchronize(ch.s));
        double diff = compare(&w, ref_l, ref_w);
        run_case(&ch, bg, &w, leaf, 0, &tf); /* its kernels loaded */
        double alone = run_case(&ch, bg, &w, leaf, 0, &tf);
        double shared = run_case(&ch, bg, &w, leaf, count, &tf);
        char name[32];
        snprintf(name, sizeof name, leaf ? "rec %d" : "potrf+trsm", leaf);
        printf("%-12s alone %7.3f ms   beside gemms %7.3f ms (gemms %5.1f TFLOP/s)   diff %.1e\n",
               name, alone, shared, tf, diff);
    }
    free(ref_l);
    free(ref_w);
    return 0;
}
