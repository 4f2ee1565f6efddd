/* Remote dependency inference (ARCHITECTURE.md, Distributed runs): which tiles move
 * between ranks, derived from the insertion sequence alone. */
#ifndef WEFT_STF_REMOTE_H
#define WEFT_STF_REMOTE_H

#include "stf/taskpool.h"
#include "sched/task.h"

/* The ranks holding a data's newest version, kept by the rank that is its
 * source (writer, or owner) only: the rest of the view is inline in the
 * data (weft_data_t's net_* fields). Stamped with the view it belongs to. */
typedef struct weft_remote_rec {
    uint64_t wave; /* the view's taskpool wave and version */
    uint32_t version;
    uint64_t holders[]; /* bitset of ranks */
} weft_remote_rec_t;

/* The newest version of d in the whole run as far as inference knows, 0
 * before any remote inference. */
uint32_t weft_remote_version(const weft_data_t *d);

/* The rank that runs t: owner of its AFFINITY data (flow index, or -1),
 * else of its first written data, else of its first data, else rank 0. */
int weft_remote_exec_rank(const weft_task_t *t, int affinity_flow);

/* Updates the records for t running on exec_rank and inserts the SEND and
 * RECV tasks this rank takes part in. Sets the versions t's writes publish. */
int weft_remote_infer(weft_taskpool_t *tp, weft_task_t *t, int exec_rank);

/* A SEND (to peer) or RECV (from peer) task for version `version` of d,
 * not inserted; counted in the context's sends/recvs. version is what both
 * ranks match the transfer by; the flow publishes it too (a front-end
 * numbering versions locally sets the flow's out_version to 0 after).
 * device: where a RECV receives (0 = host). NULL: out of host memory. */
weft_task_t *weft_remote_action(weft_taskpool_t *tp, weft_task_kind_t kind, weft_data_t *d,
                                int peer, uint32_t version, int priority, int device);
/* At wait: final versions held only away from their owner go home. */
int weft_remote_flush(weft_taskpool_t *tp);

/* d, a NEW data, has no version on any rank after a failure (its first
 * writer failed): the versions inference counted for it are forgotten, so
 * that every rank sees it never written, as one rank alone does (a reader
 * is refused at insertion, weft_data_set_init accepted). Every rank. */
void weft_remote_forget(weft_data_t *d);

/* After wait: copies that were only visiting this rank are freed. */
void weft_remote_reclaim(weft_taskpool_t *tp);

#endif
