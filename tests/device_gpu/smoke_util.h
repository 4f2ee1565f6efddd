/* What the GPU smoke tests (test_gpu_smoke.c, through any vendor's ops;
 * tests/device_cuda/test_cuda_smoke.c, the CUDA module with its libraries)
 * share: a tile pattern and its check, an event waited for, opening a
 * device with a 64 MiB zone and closing it, all through the device's own
 * operations table, without a weft context. Include after ../check.h. */
#ifndef WEFT_TESTS_SMOKE_UTIL_H
#define WEFT_TESTS_SMOKE_UTIL_H

#include <stdio.h>
#include <string.h>

#include "data/zone.h"
#include "device/device.h"
#include "device/gpu/gpu.h"

#define SMOKE_ZONE_BYTES ((size_t)64 << 20)

static double pattern(int i, int j, int salt) { return i + 1000.0 * j + 0.5 * salt; }

static void fill(double *h, int64_t ld, int rows, int cols, int salt)
{
    for (int j = 0; j < cols; j++)
        for (int i = 0; i < rows; i++) h[i + j * ld] = pattern(i, j, salt);
}

/* Every element of the tile matches; padding rows [rows, ld) kept pad. */
static int same(const double *h, int64_t ld, int rows, int cols, int salt, double pad)
{
    for (int j = 0; j < cols; j++) {
        for (int i = 0; i < rows; i++)
            if (h[i + j * ld] != pattern(i, j, salt)) return 0;
        for (int64_t i = rows; i < ld; i++)
            if (h[i + j * ld] != pad) return 0;
    }
    return 1;
}

/* The work on `stream` is over: an event recorded there is synced,
 * queried done and given back. */
static void wait_event(weft_device_t *dev, int stream)
{
    weft_event_t ev;
    REQUIRE(dev->ops->event_record(dev, stream, &ev) == WEFT_SUCCESS);
    REQUIRE(dev->ops->event_sync(dev, &ev) == WEFT_SUCCESS);
    REQUIRE(dev->ops->event_query(dev, &ev) == WEFT_SUCCESS);
    dev->ops->event_destroy(dev, &ev);
    REQUIRE(ev.handle == NULL);
}

static weft_region_t region(void *ptr, int64_t ld) { return (weft_region_t){ptr, ld}; }

/* Opens GPU `ordinal` of `ops` as weft device ordinal + 1, with the
 * default execution streams and an IPC-capable zone-less state. */
static void smoke_open(weft_device_t *dev, const weft_device_ops_t *ops, int ordinal,
                       size_t workspace)
{
    memset(dev, 0, sizeof *dev);
    dev->ops = ops;
    dev->index = ordinal + 1;
    dev->type_index = ordinal;
    snprintf(dev->name, sizeof dev->name, "%s%d", ops->name, ordinal);
    dev->workspace_bytes = workspace;
    REQUIRE(ops->open(dev, ordinal) == WEFT_SUCCESS);
    REQUIRE(dev->priv != NULL && (dev->caps & WEFT_DEVCAP_IPC));
    REQUIRE(dev->nstreams == WEFT_STREAM_EXEC0 + WEFT_GPU_EXEC_STREAMS_DEFAULT);
}

/* A zone of SMOKE_ZONE_BYTES on dev, which has at least that free. */
static void smoke_zone(weft_device_t *dev)
{
    size_t free_b = 0, total = 0;
    REQUIRE(dev->ops->mem_info(dev, &free_b, &total) == WEFT_SUCCESS);
    REQUIRE(total > 0 && free_b <= total && free_b >= SMOKE_ZONE_BYTES);
    void *base = NULL;
    REQUIRE(dev->ops->mem_reserve(dev, SMOKE_ZONE_BYTES, &base) == WEFT_SUCCESS && base != NULL);
    REQUIRE(weft_zone_create(base, SMOKE_ZONE_BYTES, WEFT_ZONE_ALIGNMENT, &dev->zone) ==
            WEFT_ZONE_OK);
    dev->zone_base = base;
    dev->zone_bytes = SMOKE_ZONE_BYTES;
    printf("device %d: %zu MiB free of %zu MiB, zone of %zu MiB at %p\n", dev->type_index,
           free_b >> 20, total >> 20, SMOKE_ZONE_BYTES >> 20, base);
}

static void close_device(weft_device_t *dev)
{
    weft_zone_destroy(dev->zone);
    dev->ops->mem_release(dev, dev->zone_base, dev->zone_bytes);
    dev->ops->close(dev);
    REQUIRE(dev->priv == NULL);
}

#endif
