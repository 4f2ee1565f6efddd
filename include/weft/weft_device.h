/* weft: data on the rank's accelerators (home devices, device memory the
 * user holds, copies kept across waits, custom stage layouts) and host
 * memory the user page-locks for them. Part of the public API, included
 * by weft/weft.h (include that one); the conventions of weft/weft.h
 * (handle checks, status values, the main thread) apply. */
#ifndef WEFT_WEFT_DEVICE_H
#define WEFT_WEFT_DEVICE_H

#ifndef WEFT_WEFT_H
#error "include weft/weft.h, which includes this header"
#endif

/* Page-locks host memory the user owns, [ptr, ptr + bytes), for the
 * rank's devices, so that weft's copies of the tiles in it to and from a
 * GPU are asynchronous and at the link's rate (from pageable memory they
 * run at a fraction of it and hold a device manager's thread): worth it
 * when tiles go back and forth, out of core. Pin whole allocations once;
 * weft_host_unpin(ptr) with the same start before freeing them. Memory
 * weft allocates itself is pinned by weft when it pays (parameter
 * host_pin). Returns 0; on a rank without devices or with emulated ones
 * only no page is locked, but the range is recorded and checked as
 * elsewhere (a program gets the same answers on every machine):
 * WEFT_ERR_INVALID (named) for NULL, 0 bytes, a range already pinned, or
 * an unpin of memory not pinned here;
 * WEFT_ERR_NOMEM when the record of the range cannot be kept;
 * WEFT_ERR_INTERNAL when the driver refuses. Main thread. */
WEFT_API WEFT_NODISCARD int weft_host_pin(weft_context_t *ctx, void *ptr, size_t bytes);
WEFT_API WEFT_NODISCARD int weft_host_unpin(weft_context_t *ctx, void *ptr);

/* With keep non-zero, the device copies of MANAGED host data survive
 * weft_taskpool_wait (no stage-in again in the next taskpool); the user
 * then promises to write the host memory only between a
 * weft_data_host_acquire (WEFT_W or WEFT_RW) and its release, otherwise
 * tasks on devices may read an older device copy. 0 restores the default
 * at once: the copies kept by earlier waits are stale from then on.
 * Runtime-owned memory (weft_data_new, weft_matrix_new) keeps its device
 * copies across waits anyway. Between taskpools. */
WEFT_API int weft_data_set_keep_device_copies(weft_data_t *data, int keep);

/* The data's home device on its owner rank (0 = host, 1..weft_ndevices):
 * a task with WEFT_AFFINITY on it runs there when its class has a body for
 * that device type (an emu device runs an emu body, else a CPU one; tiles too big:
 * docs/SEMANTICS.md 5.2); set to 0, its tasks stay
 * on the host. Matrix tiles get home devices by local tile row, dealt
 * back and forth over the rank's devices (devices 1 2 2 1 1 2 ... with
 * two); by local tile column where the rank's tiles sit in fewer rows
 * than it has devices (a row of tiles), by tile where in fewer columns
 * too, so that every device gets tiles; NEW and registered data have none: their tasks go where
 * they should finish first. Between taskpools. WEFT_ERR_INVALID for a device below 0, or past the
 * owner's devices on the owner rank; another rank (fewer devices, or none) takes any device >= 0
 * and ignores it. A refusal on the owner only is named on every rank at the next agreement
 * (docs/SEMANTICS.md section 4), whose wait returns WEFT_ERR_MISMATCH. */
WEFT_API int weft_data_set_device(weft_data_t *data, int device);
/* The data's home device on this rank (1..weft_ndevices; 0 = the host when
 * weft_data_set_device or a distribution's device function chose it), -1
 * when it has none (or data is NULL): a rank without accelerators gives
 * -1 for every data, and registered and NEW data have no home unless
 * given one (their tasks go where they finish first). -1 is not "not on
 * the host": host-resident data mostly answers -1. */
WEFT_API int weft_data_device(const weft_data_t *data);

/* Device memory the user already holds (from cudaMalloc for a CUDA device;
 * any memory of this process for an emu device) becomes data's MANAGED copy
 * on `device` (1..weft_ndevices): weft keeps the tile there and never
 * evicts nor frees it (the user frees it after weft_data_release). ld is
 * its leading dimension in elements (>= rows). With `current` non-zero the
 * memory holds the data's contents now: it becomes the newest version and
 * other copies stale, host memory the user registered (which holds the
 * data between taskpools) getting it at once, a failure of that copy
 * returned, named, and retried at the next wait, acquire or release (all
 * on the data's owner only: another rank's copy comes
 * from the owner, and current there is refused, WEFT_ERR_INVALID); with 0,
 * weft fills it when a task needs the data there. On a rank that does not
 * own the data, what a task left in it is stale after each wait (the owner
 * may write the data between taskpools): the next task there fills it
 * again. On several ranks, current contents given to a
 * NEW data that no task wrote yet are a write outside tasks that the other ranks cannot see: a
 * task that reads the data before one writes it is refused on every rank (weft_data_set_init:
 * with initial contents, the registration itself is refused). A runtime copy already on that device
 * is written back if needed and dropped. Between taskpools: while a taskpool not waited for uses
 * the data it is refused (WEFT_ERR_INVALID, named), as an acquire is. WEFT_ERR_NOMEM without host
 * memory for its record; the status of a failed write-back of the runtime copy it replaces, whose
 * newest version would be lost (nothing is registered); WEFT_ERR_INVALID for a bad argument, or for
 * memory that shares a byte with another live registration of this rank (another data's device
 * memory; for an emu device, whose memory is the host's, any registered host memory, the data's own
 * included), named; the memory is free again once the holding data is released and no task of it
 * runs (docs/SEMANTICS.md section 1). */
WEFT_API WEFT_NODISCARD int weft_data_register_device(weft_data_t *data, int device, void *ptr,
                                                      int64_t ld, int current);

/* A custom transfer of a tile between host memory and a device copy, in
 * place of weft's own 2D copy: e.g. a tile stored in another layout on
 * the host. On an accelerator with streams (CUDA) the function enqueues its
 * copies on `stream` (a cudaStream_t) and returns; with stream NULL (emu,
 * whose memory the host reads) it copies before returning. It returns 0,
 * or any other value, which fails the transfer (named with the value). */
typedef struct weft_stage {
    void *dst;
    int64_t dst_ld;
    int dst_device; /* device index on this rank, 0 = host */
    const void *src;
    int64_t src_ld;
    int src_device;
    int rows, cols;
    size_t elem;
    void *stream;
} weft_stage_t;
typedef int (*weft_stage_fn)(const weft_stage_t *s, void *arg);

/* Sets the stage-in (host to device) and stage-out (device to host)
 * functions of d; NULL keeps weft's copy for that direction. Call before
 * the tasks that use d are inserted: while a taskpool not waited for uses
 * d the call is refused (WEFT_ERR_INVALID, named; the same for
 * weft_data_set_device and weft_data_set_keep_device_copies). A stage function runs on a device's
 * or the comm thread: like a task body it may not call what belongs to the
 * thread of weft_init (such a call is refused and the copy fails). Between
 * ranks such a data travels in its host layout, from and into host copies
 * only (stage_out before a send, stage_in after a receive, where a device
 * needs it): every rank sets the same functions (which of the two are set
 * is compared at the next agreement: WEFT_ERR_MISMATCH, named). A body
 * sees the layout of the copy it runs on: a host body the host layout (the
 * user's, which no stage function touches), a device body what stage_in
 * made; so a class whose bodies may run on the host and on a device must
 * read both layouts, or the task be placed (WEFT_DEVICE_HINT). The
 * partial results of a reduction into d (weft_data_set_reduction) move by
 * the same functions: its init, contribution and combine bodies see the
 * same layouts as any other. */
WEFT_API int weft_data_set_stage(weft_data_t *d, weft_stage_fn stage_in, weft_stage_fn stage_out,
                                 void *arg);

#endif /* WEFT_WEFT_DEVICE_H */
