/* weft's rule for the home devices of a matrix's tiles on one rank
 * (matrix_home.h), apart from the matrix's making (matrix.c). */
#include "collections/matrix_home.h"

#include <stdlib.h>

#include "api/data_api.h"
#include "collections/matrix_int.h"

/* The home device of the tiles at place r of the deal (local tile
 * row r, else column or tile): a tile's updates run where it lives, and
 * each device gets whole rows where there are enough, dealt out back and
 * forth (devices 1 2 .. g g .. 2 1 1 2 ..) rather than round robin: in a
 * lower-triangular factorization the work of a row grows with its index,
 * and plain round robin gives the last device the largest row of every
 * round (55% of the work to one of two devices with 16 tile rows; the
 * reflected order 50.6%). */
static int home_device(int r, int g)
{
    int k = r % (2 * g);
    return 1 + (k < g ? k : 2 * g - 1 - k);
}

int weft_matrix__deal_plan(weft_matrix_deal_t *p, const weft_matrix_t *A, const int *owners, int me,
                           int g)
{
    p->g = g;
    size_t n = (size_t)A->mt * (size_t)A->nt;
    p->row = calloc((size_t)A->mt, sizeof *p->row);
    p->col = calloc((size_t)A->nt, sizeof *p->col);
    p->next = 0;
    if (!p->row || !p->col) return WEFT_ERR_NOMEM;
    for (size_t k = 0; k < n; k++)
        if (owners[k] == me) p->row[k % (size_t)A->mt] = p->col[k / (size_t)A->mt] = 1;
    int nrows = 0, ncols = 0;
    for (int i = 0; i < A->mt; i++) p->row[i] = p->row[i] ? nrows++ : -1;
    for (int j = 0; j < A->nt; j++) p->col[j] = p->col[j] ? ncols++ : -1;
    p->by = nrows >= g ? 0 : ncols >= g ? 1 : 2;
    return WEFT_SUCCESS;
}

int weft_matrix__deal_device(weft_matrix_deal_t *p, int i, int j)
{
    return home_device(p->by == 0 ? p->row[i] : p->by == 1 ? p->col[j] : p->next++, p->g);
}

void weft_matrix__deal_free(weft_matrix_deal_t *p)
{
    free(p->row);
    free(p->col);
}
