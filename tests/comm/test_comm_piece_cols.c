/* How the mpi transport cuts a tile into messages (internal): whole
 * columns, at most comm_mpi_piece bytes a piece and one column at least,
 * the whole tile when it fits, and no more pieces than a quarter of the
 * data tags (a small tag_ub: comm/tags.h), as both ends compute it from
 * the tile's shape. */
#include <limits.h>
#include <stdio.h>

#include "comm/comm_internal.h"

static int fails;

static void expect(const char *what, int got, int want)
{
    if (got == want) return;
    printf("test_comm_piece_cols: %s: %d columns a piece, expected %d\n", what, got, want);
    fails++;
}

static int cut(weft_comm_t *c, size_t piece, int rows, int cols, size_t elem)
{
    c->cfg.mpi_piece = piece;
    weft_data_t d = {.rows = rows, .cols = cols, .elem = elem};
    return weft_comm__piece_cols(c, &d);
}

int main(void)
{
    weft_comm_t c = {0};
    weft_comm__tags_init(&c.tags, WEFT_COMM_FIRST_DATA_TAG, INT_MAX);
    size_t kib4 = 4096, gib = (size_t)1 << 30;
    expect("fits whole", cut(&c, kib4, 64, 8, 8), 8);
    expect("5 columns of 800 bytes", cut(&c, kib4, 100, 51, 8), 5);
    expect("a column wider than a piece", cut(&c, kib4, 1000, 37, 8), 1);
    expect("2 GiB + 1 MiB in 1 GiB pieces", cut(&c, gib, 131072, 2049, 8), 1024);
    expect("the default when unset", cut(&c, 0, 131072, 2049, 8), 1024);
    expect("exactly one piece", cut(&c, gib, 131072, 1024, 8), 1024);
    /* The standard's least tag_ub: (32767 - first + 1) / 4 pieces at most. */
    weft_comm__tags_init(&c.tags, WEFT_COMM_FIRST_DATA_TAG, 32767);
    int tags = (32767 - WEFT_COMM_FIRST_DATA_TAG + 1) / 4;
    int w = cut(&c, kib4, 512, 100000, 8); /* one column a piece: 100000 > tags */
    expect("widened for few tags", (100000 + w - 1) / w <= tags ? 1 : 0, 1);
    expect("no wider than needed", (100000 + (w - 1) - 1) / (w - 1) > tags ? 1 : 0, 1);
    printf("test_comm_piece_cols: %s\n", fails ? "FAILED" : "ok");
    return fails ? 1 : 0;
}
