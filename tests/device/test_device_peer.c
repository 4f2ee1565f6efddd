/* nvlink-like: tiles produced on one device and read on another. Tile
 * rows alternate between devices 1 and 2 (set as home devices); a fill
 * task with affinity on row 2i writes P on device 1, a GEMM with affinity
 * on row 2i+1 reads it on device 2. With peer access the bytes go device
 * to device (D2D > 0); with device_peer_mask=0 they stage through host
 * (D2D == 0, D2H on the producer). Results are checked on the host. */
#include "devtest.h"

#define NB 40
#define K 6 /* producer / consumer pairs */

int main(int argc, char **argv)
{
    weft_context_t *ctx = devtest_init(&argc, &argv, 2);
    int64_t mask = -1;
    CHECK(weft_param_get_int(ctx, "device_peer_mask", &mask) == 0);
    int peer = mask != 0;
    int ndev = weft_ndevices(ctx);
    /* 2K rows of tiles with ndev = 2: even rows homed on device 1, odd on 2. */
    weft_matrix_t *M = weft_matrix_new(ctx, WEFT_DOUBLE, (int64_t)NB * 2 * K, NB, NB, NB, 1, 1);
    for (int i = 0; i < 2 * K; i++) {
        memset(weft_data_host_ptr(weft_tile(M, i, 0), NULL), 0, sizeof(double) * NB * NB);
        CHECK(weft_data_set_device(weft_tile(M, i, 0), 1 + i % ndev) == 0);
    }
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "peer");
    int rc = 0;
    for (int i = 0; i < K && rc == 0; i++) {
        weft_data_t *p = weft_tile(M, 2 * i, 0), *q = weft_tile(M, 2 * i + 1, 0);
        double seed = 1.0 + i;
        rc = weft_insert_task(tp, &devtest_fill_dev, WEFT_VALUE, &seed, sizeof seed,
                              WEFT_W | WEFT_AFFINITY, p, 0);
        if (rc == 0)
            rc = weft_insert_task(tp, &devtest_gemm_dev, WEFT_R, p, WEFT_R, p,
                                  WEFT_RW | WEFT_AFFINITY, q, 0);
    }
    CHECK(rc == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    if (ndev == 2) {
        CHECK(atomic_load(&devtest_ran_on[1]) == K && atomic_load(&devtest_ran_on[2]) == K);
    }
    weft_device_counters_t c1 = devtest_counters(ctx, 1), c2 = devtest_counters(ctx, 2);
    if (peer) {
        CHECK(c2.bytes_d2d >= (int64_t)K * NB * NB * 8);
    } else {
        CHECK(c1.bytes_d2d == 0 && c2.bytes_d2d == 0);
        CHECK(c1.bytes_d2h >= (int64_t)K * NB * NB * 8); /* staged through host */
    }
    double *p = malloc(sizeof(double) * NB * NB), *ref = calloc(NB * NB, sizeof(double));
    for (int i = 0; i < K; i++) {
        devtest_fill_array(p, NB, NB, NB, 1.0 + i);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, NB, NB, NB, 1.0, p, NB, p, NB, 0.0,
                    ref, NB);
        double *q = weft_data_host_ptr(weft_tile(M, 2 * i + 1, 0), NULL);
        double *pp = weft_data_host_ptr(weft_tile(M, 2 * i, 0), NULL);
        CHECK(q && pp && devtest_maxdiff(q, NB, ref, NB, NB, NB) < 1e-9 * NB);
        CHECK(pp && devtest_maxdiff(pp, NB, p, NB, NB, NB) == 0.0);
    }
    printf("peer %s: D2D %lld bytes, D2H %lld + %lld bytes\n", peer ? "on" : "off",
           (long long)c2.bytes_d2d, (long long)c1.bytes_d2h, (long long)c2.bytes_d2h);
    free(p);
    free(ref);
    weft_taskpool_free(tp);
    weft_matrix_free(M);
    CHECK(weft_fini(ctx) == 0);
    return check_report(peer ? "device_peer" : "device_nopeer");
}
