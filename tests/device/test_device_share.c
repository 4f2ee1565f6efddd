/* Ranks of a node that use the same device split its memory (issue 13,
 * item 9): with every rank on emu devices, each rank's zone
 * (weft_device_counters mem_capacity) is device_memory_use percent of
 * device_emu_memory divided by the node's ranks, then capped by this
 * rank's device_memory_limit; and the zones of all ranks fit in the
 * device. The number of ranks a node is found here with MPI, apart from
 * weft. (weft-potrf on ranks sharing emu devices, tests/device/share.cmake,
 * runs a factorization in such zones.)
 *
 * With the argument "open-fails" the process expects weft_init to fail
 * (its environment asks for a device that is absent) and stays alive 3 s
 * before it exits: the ranks whose devices opened must get past the
 * collective that counts the sharers all the same, and say so. */
#include <mpi.h>
#include <unistd.h>

#include "devtest.h"

static int64_t param(weft_context_t *ctx, const char *name)
{
    int64_t v = 0;
    CHECK(weft_param_get_int(ctx, name, &v) == WEFT_SUCCESS);
    return v;
}

/* The node's ranks, counted apart from weft. */
static int ranks_on_node(void)
{
    MPI_Comm node;
    int n = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &n);
    MPI_Comm_free(&node);
    return n;
}

static void check_shares(weft_context_t *ctx)
{
    int k = ranks_on_node();
    int64_t mem = param(ctx, "device_emu_memory"), use = param(ctx, "device_memory_use");
    int64_t limit = param(ctx, "device_memory_limit");
    int64_t expect = mem * use / 100 / k;
    if (limit > 0 && expect > limit) expect = limit;
    expect &= ~(int64_t)255;
    for (int d = 1; d <= weft_ndevices(ctx); d++) {
        weft_device_counters_t c;
        CHECK(weft_device_counters_get(ctx, d, &c) == WEFT_SUCCESS);
        CHECK(c.mem_capacity == expect);
        CHECK((int64_t)k * c.mem_capacity <= mem);
        printf("rank %d device %d: zone %lld bytes, 1 of %d ranks on the node\n", weft_rank(ctx), d,
               (long long)c.mem_capacity, k);
    }
}

int main(int argc, char **argv)
{
    int expect_fail = argc > 1 && strcmp(argv[1], "open-fails") == 0;
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (expect_fail) {
        printf("failing rank: weft_init returned %s\n", ctx ? "a context" : "NULL");
        fflush(stdout);
        sleep(3);
        return 1;
    }
    printf("opened rank: weft_init returned %s\n", ctx ? "a context" : "NULL");
    fflush(stdout);
    if (!ctx) return 1;
    CHECK(weft_ndevices(ctx) >= 1);
    check_shares(ctx);
    CHECK(weft_fini(ctx) == WEFT_SUCCESS);
    return check_report("device_share");
}
