/* weft's home-device rule for matrix tiles, used where a matrix is made
 * without a user device function (matrix.c's make_tiles). */
#ifndef WEFT_COLLECTIONS_MATRIX_HOME_H
#define WEFT_COLLECTIONS_MATRIX_HOME_H

#include "weft/weft.h"

/* What weft's rule deals over a rank's devices: its tile rows (their
 * ordinals among the rows where it holds a tile: i / P on a grid), dealt
 * back and forth (matrix_home.c), when its tiles sit in at least as many
 * rows as it has devices;
 * else its tile columns, when there are enough of them; else its tiles one
 * by one. Rows alone left devices without a tile wherever a rank's tiles
 * sit in fewer rows than it has devices (a 1 x n row of tiles, a matrix
 * of P tile rows on a P x Q grid, a user distribution giving a rank every
 * 2g-th row: a prefix sum over a row of tiles ran every task on device 1
 * of 2). */
typedef struct weft_matrix_deal {
    int *row, *col; /* ordinals of this rank's tile rows and columns, -1 where it has none */
    int by;         /* 0 rows, 1 columns, 2 tiles */
    int next;       /* the next tile's place, by tiles */
    int g;          /* the rank's devices */
} weft_matrix_deal_t;

/* Plans the deal of rank me's tiles of A (owners[k], k = j * mt + i) over
 * its g devices. WEFT_ERR_NOMEM, or WEFT_SUCCESS; free it either way. */
int weft_matrix__deal_plan(weft_matrix_deal_t *p, const weft_matrix_t *A, const int *owners, int me,
                           int g);
/* The home device (1..g) of this rank's tile (i, j); tiles asked in k order. */
int weft_matrix__deal_device(weft_matrix_deal_t *p, int i, int j);
void weft_matrix__deal_free(weft_matrix_deal_t *p);

#endif
