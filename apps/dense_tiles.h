/* Tasks on general tiles shared by weft-gemm and weft-posv: the fill of a
 * tile of a dense_matrix.h matrix and the squared norm of a tile added into
 * a sums tile (app_sums.h). Header-only. */
#ifndef WEFT_APPS_DENSE_TILES_H
#define WEFT_APPS_DENSE_TILES_H

#include <stdint.h>

#include <weft/weft.h>

#include "app_sums.h"
#include "dense_matrix.h"

/* What a fill task (or a check task that regenerates a tile) needs: the
 * matrix's seed and the global index of the tile's first row and column. */
typedef struct dense_tile_arg {
    uint64_t seed;
    int64_t row0, col0;
} dense_tile_arg_t;

/* flow 0: a tile W; value 0: dense_tile_arg_t. */
static int dense_cpu_fill(weft_task_t *t)
{
    dense_tile_arg_t a;
    if (weft_task_value_get(t, 0, &a, sizeof a) != 0) return -1;
    double *p = weft_task_ptr(t, 0);
    int64_t ld = weft_task_ld(t, 0);
    for (int j = 0; j < weft_task_cols(t, 0); j++)
        for (int i = 0; i < weft_task_rows(t, 0); i++)
            p[i + j * ld] = dense_elem(a.seed, a.row0 + i, a.col0 + j);
    return 0;
}

/* flow 0: a tile R, flow 1: a sums tile RW; value 0: int column. Adds the
 * tile's squared Frobenius norm to that column of the sums. */
static int dense_cpu_sqnorm(weft_task_t *t)
{
    int c;
    if (weft_task_value_get(t, 0, &c, sizeof c) != 0) return -1;
    const double *p = weft_task_ptr(t, 0);
    int64_t ld = weft_task_ld(t, 0);
    double s2 = 0.0;
    for (int j = 0; j < weft_task_cols(t, 0); j++)
        for (int i = 0; i < weft_task_rows(t, 0); i++) s2 += p[i + j * ld] * p[i + j * ld];
    app_sums_put(t, 1, c, &s2, 1);
    return 0;
}

static const weft_task_class_t dense_class_fill = {
    .name = "fill", .body = {[WEFT_DEV_CPU] = dense_cpu_fill}, .flops = NULL};
static const weft_task_class_t dense_class_sqnorm = {
    .name = "sqnorm", .body = {[WEFT_DEV_CPU] = dense_cpu_sqnorm}, .flops = NULL};
/* flow 0: a tile W: zeroes all of it (new memory holds anything: a
 * device's or another rank's). */
static int dense_cpu_zero(weft_task_t *t)
{
    double *p = weft_task_ptr(t, 0);
    int64_t ld = weft_task_ld(t, 0);
    for (int j = 0; j < weft_task_cols(t, 0); j++)
        for (int i = 0; i < weft_task_rows(t, 0); i++) p[i + j * ld] = 0.0;
    return 0;
}

static const weft_task_class_t dense_class_zero = {
    .name = "zero", .body = {[WEFT_DEV_CPU] = dense_cpu_zero}, .flops = NULL};

#endif /* WEFT_APPS_DENSE_TILES_H */
