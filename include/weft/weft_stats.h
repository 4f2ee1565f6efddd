/* weft: the counters of a rank (weft_stats_get) and of each of its
 * accelerators (weft_device_counters_get). Part of the public API,
 * included by weft/weft.h (include that one); the conventions of
 * weft/weft.h (handle checks, status values) apply. */
#ifndef WEFT_WEFT_STATS_H
#define WEFT_WEFT_STATS_H

#ifndef WEFT_WEFT_H
#error "include weft/weft.h, which includes this header"
#endif

/* Counters of this rank since weft_init. */
typedef struct weft_stats {
    int64_t tasks_run;        /* task bodies run on this rank (failed ones included; not an
                                 injected failure, which runs none) */
    int64_t activations_sent; /* one per tile version per destination rank */
    int64_t eager_sent;       /* activations that carried the tile inline */
    /* Rendezvous requests this rank sent as a receiver, for the tiles it
     * did not get inline; a tile pulled by ipc (between devices of one
     * node) needs none, so summed over the ranks, activations_sent is
     * eager_sent plus gets_sent plus the tiles pulled by ipc (no counter
     * of their own: net_bytes_ipc counts their bytes). */
    int64_t gets_sent;
    int64_t net_bytes_sent, net_bytes_received;
    int64_t recv_rejected; /* incoming tiles refused: shape mismatch */
    /* GPU-aware communication: where network bytes left from and landed. */
    int64_t net_bytes_from_device; /* sent from device memory */
    int64_t net_bytes_into_device; /* received into device memory */
    int64_t net_bytes_staged;      /* moved through host bounce buffers */
    int64_t net_bytes_mpi;         /* received by the mpi transport from or into device memory */
    int64_t net_bytes_ipc;         /* pulled by the ipc transport */
    int64_t net_bytes_staged_transport; /* received by the staged transport */
    int64_t net_bytes_host;             /* received host to host, eager tiles (inline in their
                                           activation) included, also those for a device copy */
    int64_t net_bytes_nccl;             /* received by the nccl transport */
    /* Failures (docs/SEMANTICS.md section 3): tasks of this rank that
     * failed (body, device or transfer error), and tasks that did not run
     * because a task they depend on failed, the transfers weft inserts
     * (a send, a receive) counted among them as the wait's line counts
     * them apart ("N tasks cancelled here (and M transfers)"). */
    int64_t tasks_failed;
    int64_t tasks_cancelled;
    /* Waits of the comm thread, between its polls, while a task ran on the
     * core it shares with the workers (parameter comm_nap_us). */
    int64_t comm_naps;
    /* The comm thread never waits on one transfer (it serves them all):
     * tries of receives and sends whose copy was busy (a write-back still
     * landing in the host copy, a task writing it), put off to a later
     * turn; and sends of a tile only in device memory, with GPU-aware
     * sends off, whose copy to host the thread polled. */
    int64_t comm_recv_retries, comm_send_retries, comm_send_pulls;
    /* Activations met without their bytes: a parameterized graph passed
     * this rank a version it had already (from another rank, or made
     * here), so no byte moved (docs/PTG.md). */
    int64_t recv_skipped;
    /* Receives put off until transfers still in flight from this rank's
     * earlier receives ended, whose message tags the new ones would have
     * repeated (an MPI with a small MPI_TAG_UB; never with Open MPI's). */
    int64_t comm_tag_waits;
} weft_stats_t;

/* Fills *out with the counters now (each read atomically, not all at one
 * instant). Any thread, bodies included: it changes nothing. */
WEFT_API int weft_stats_get(weft_context_t *ctx, weft_stats_t *out);

/* Counters of accelerator `index` (1..weft_ndevices) since weft_init.
 * mem_capacity is this rank's zone: its share of a device that ranks of
 * the node share (docs/SEMANTICS.md 5.1). The byte counters count every
 * copy the device made, whoever asked for it: tasks' stage-ins, prefetches
 * and write-backs, and the moves between ranks (an ipc pull is D2D into the
 * receiving device, or D2H on the receiving rank's device when the copy it
 * fills is in host memory; small tiles landing and staged chunks are H2D,
 * staged sends D2H; the mpi and nccl transports make no copy of their
 * own). */
typedef struct weft_device_counters {
    int64_t tasks;                            /* task bodies run there, as tasks_run */
    int64_t bytes_h2d;                        /* host to device */
    int64_t bytes_d2h;                        /* device to host: pushouts, write-backs */
    int64_t bytes_d2d;                        /* into it from device memory (peer, ipc) */
    int64_t evictions;                        /* copies dropped to make room */
    int64_t writebacks;                       /* dirty copies written to host before eviction */
    int64_t mem_capacity, mem_used, mem_peak; /* bytes of its memory zone */
    int64_t copies;                           /* runtime-owned tile copies alive in the zone */
    int64_t busy_ns;                /* summed time from kernel launch to completion seen */
    int64_t batches, batched_tasks; /* batch-body calls launched, and their tasks */
    int64_t prefetches; /* tiles copied in ahead, for tasks not started (device_prefetch_ahead) */
    int64_t prefetches_unused; /* of those, evicted or freed before any task used them */
    /* Tasks handed to the device while a tile they read from another rank
     * was still being pulled in, their kernel queued behind the pull
     * (device_launch_ahead). */
    int64_t launched_ahead;
} weft_device_counters_t;

/* WEFT_ERR_INVALID for an index out of range. Any thread. */
WEFT_API int weft_device_counters_get(const weft_context_t *ctx, int index,
                                      weft_device_counters_t *out);

#endif /* WEFT_WEFT_STATS_H */
