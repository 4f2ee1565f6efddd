/* weft's own distributions over a P x Q grid of ranks, as weft_dist_t rank
 * functions: plain 2D block-cyclic (weft_matrix_new's) and its reflected
 * form, where every other round of the deal runs backwards. */
#include <limits.h>

#include "api/data_api.h"
#include "util/log.h"

/* Whether g is a grid whose ranks an int can name and (i, j) a tile; else
 * says so on behalf of fn. A grid of more than INT_MAX ranks has ranks an
 * int cannot name (the product wrapped to a rank that looked valid). */
static int grid_ok(const char *fn, const weft_grid_t *g, int i, int j)
{
    if (g != NULL && g->P > 0 && g->Q > 0 && i >= 0 && j >= 0 && (long long)g->P * g->Q <= INT_MAX)
        return 1;
    if (g == NULL)
        weft_error("%s: arg is NULL: pass a weft_grid_t", fn);
    else
        weft_error("%s: tile (%d, %d) on a %d x %d grid: the grid needs P, Q >= 1, P x Q <= %d "
                   "and the tile indices >= 0",
                   fn, i, j, g->P, g->Q, INT_MAX);
    return 0;
}

int weft_dist_block_cyclic_rank(int i, int j, void *arg)
{
    const weft_grid_t *g = arg;
    if (!grid_ok("weft_dist_block_cyclic_rank", g, i, j)) return -1;
    return (i % g->P) * g->Q + (j % g->Q);
}

/* Index i's place in a deal over n that runs 0 .. n-1, then n-1 .. 0, and
 * so on. */
static int reflected(int i, int n)
{
    int r = i % n;
    return (i / n) % 2 == 0 ? r : n - 1 - r;
}

int weft_dist_block_reflected_rank(int i, int j, void *arg)
{
    const weft_grid_t *g = arg;
    if (!grid_ok("weft_dist_block_reflected_rank", g, i, j)) return -1;
    return reflected(i, g->P) * g->Q + reflected(j, g->Q);
}
