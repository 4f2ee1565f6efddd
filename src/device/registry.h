/* The accelerators of one process: opened at weft_init from the device_*
 * parameters, module by module in the order of the registry's list, and
 * numbered 1..n (0 is the host). The peer matrix says which pairs copy
 * directly (hardware support and the device_peer_mask parameter). */
#ifndef WEFT_DEVICE_REGISTRY_H
#define WEFT_DEVICE_REGISTRY_H

#include "device/device.h"
#include "util/fault.h"

typedef struct weft_devices {
    int n;                                /* accelerators, indices 1..n */
    weft_device_t *dev[WEFT_MAX_DEVICES]; /* dev[0] is NULL: the host */
    unsigned char peer[WEFT_MAX_DEVICES][WEFT_MAX_DEVICES];
} weft_devices_t;

/* The modules compiled in. */
extern const weft_device_ops_t weft_emu_ops;
#ifdef WEFT_HAVE_CUDA
extern const weft_device_ops_t weft_cuda_ops;
#endif
#ifdef WEFT_HAVE_HIP
extern const weft_device_ops_t weft_hip_ops;
#endif

/* Opens what the parameters ask for: device_<module>_enabled (-1 every
 * device present, N exactly N: fewer present, or a module not compiled
 * in, is WEFT_ERR_NODEV after an error naming it), and measures each
 * device's memory (dev->share, one sharer). No zone yet: the ranks of the
 * node first count who shares which device (weft_devshare_count), then
 * weft_devices_make_zones. fault (NULL: none) may fail an opening on
 * purpose (fault_inject device_open). *out is set on success (n may be 0).
 * Main thread. */
int weft_devices_open(const weft_params_t *p, int local_rank, weft_fault_t *fault,
                      weft_devices_t **out) __attribute__((warn_unused_result));
/* Makes every device's zone, of weft_device_zone_share bytes.
 * WEFT_ERR_DEVMEM (after an error with the sizes) when a share is empty or
 * cannot be reserved. Main thread. */
int weft_devices_make_zones(weft_devices_t *ds) __attribute__((warn_unused_result));
/* Closes every device (its streams drained) and frees its zone, if made.
 * NULL ok. */
void weft_devices_close(weft_devices_t *ds);

/* The zone of one rank on one device: device_memory_use percent of the
 * device's memory (total) is split evenly among the devices of the node's
 * ranks that use it (sharers), no more than the free memory left after the
 * driver's part and each sharer's headroom; then capped by this rank's
 * device_memory_limit (a cap per rank: the percentage is per device, the
 * limit per rank), rounded down to the zone's alignment. */
typedef struct weft_zone_share_in {
    size_t total, free_min, headroom, limit;
    int use_pct, sharers;
} weft_zone_share_in_t;
size_t weft_device_zone_share(const weft_zone_share_in_t *in);

/* 1 when data may move directly between devices a and b (both > 0). */
static inline int weft_devices_peer(const weft_devices_t *ds, int a, int b)
{
    return a > 0 && b > 0 && ds->peer[a][b];
}

#endif
