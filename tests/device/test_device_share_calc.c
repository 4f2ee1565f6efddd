/* The arithmetic of a rank's zone on a device shared by ranks of its node
 * (weft_device_zone_share, issue 13 item 9), on the sizes of an emulated
 * device and of an H200 shared by 1, 2, 4 and 8 ranks. The expected values
 * are worked out here by hand from the rule of registry.h. */
#include <stdint.h>
#include <stdio.h>

#include "device/registry.h"

#include "../check.h"

#define MIB ((size_t)1 << 20)
#define GIB ((size_t)1 << 30)

static size_t share(size_t total, size_t free_min, size_t headroom, size_t limit, int use,
                    int sharers)
{
    weft_zone_share_in_t in = {.total = total,
                               .free_min = free_min,
                               .headroom = headroom,
                               .limit = limit,
                               .use_pct = use,
                               .sharers = sharers};
    return weft_device_zone_share(&in);
}

static void emu_sizes(void)
{
    /* 64 MiB at 90 %: 60397977 bytes in all; 1 rank: rounded to 256. */
    CHECK(share(64 * MIB, 64 * MIB, 0, 0, 90, 1) == 60397824);
    /* 2 ranks: 30198988 -> 30198784; 4 ranks: 15099494 -> 15099392. */
    CHECK(share(64 * MIB, 64 * MIB, 0, 0, 90, 2) == 30198784);
    CHECK(share(64 * MIB, 64 * MIB, 0, 0, 90, 4) == 15099392);
    /* 100 %: the driver's twentieth of the free memory stays out. */
    CHECK(share(64 * MIB, 64 * MIB, 0, 0, 100, 1) == 63753216);
    /* The limit is per rank, applied after the split. */
    CHECK(share(64 * MIB, 64 * MIB, 0, 160 * 1024, 90, 2) == 160 * 1024);
    CHECK(share(64 * MIB, 64 * MIB, 0, 60 * MIB, 90, 2) == 30198784);
    /* Zero and one sharer are the same (a device nobody else reported). */
    CHECK(share(64 * MIB, 64 * MIB, 0, 0, 90, 0) == share(64 * MIB, 64 * MIB, 0, 0, 90, 1));
}

static void gpu_sizes(void)
{
    size_t total = (size_t)143771 * MIB, free_b = (size_t)143000 * MIB, head = 752 * MIB;
    /* 90 % of the total is less than the free memory less the driver's
     * part and the headrooms: the split of the percentage decides. */
    size_t budget = total / 100 * 90 + total % 100 * 90 / 100;
    for (int k = 1; k <= 8; k *= 2)
        CHECK(share(total, free_b, head, 0, 90, k) == (budget / (size_t)k & ~(size_t)255));
    /* 100 % on 8 ranks: the free memory decides, less 1/20 and 8 headrooms;
     * the 8 zones and 8 headrooms then fit in the free memory. */
    size_t avail = free_b - free_b / 20 - 8 * head;
    size_t s8 = share(total, free_b, head, 0, 100, 8);
    CHECK(s8 == (avail / 8 & ~(size_t)255));
    CHECK(8 * (s8 + head) <= free_b);
    /* Too little free for the headrooms: an empty share (make_zone then
     * fails naming the sizes). */
    CHECK(share(total, 4 * GIB, 1 * GIB, 0, 90, 8) == 0);
}

int main(void)
{
    emu_sizes();
    gpu_sizes();
    return check_report("device_share_calc");
}
