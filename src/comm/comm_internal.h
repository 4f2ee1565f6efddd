/* State of the comm engine, shared by its files; engine thread only unless
 * noted. */
#ifndef WEFT_COMM_COMM_INTERNAL_H
#define WEFT_COMM_COMM_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "comm/comm.h"

#define WEFT_COMM_CTRL_TAG 1
#define WEFT_COMM_FIRST_DATA_TAG 16
#define WEFT_COMM_NCTRL 16 /* control receives kept posted */
#define WEFT_COMM_BUCKETS 4096

/* CANCEL: the receiver will not fetch (its receive failed); ABORT: the
 * sender failed after a GET, no more bytes will come. */
enum { MSG_ACTIVATE = 1, MSG_GET = 2, MSG_DONE = 3, MSG_REJECT = 4, MSG_CANCEL = 5, MSG_ABORT = 6 };

/* A control message; an eager activation's payload follows it. */
typedef struct msg_hdr {
    int32_t type;
    int32_t src;
    uint64_t key;
    uint32_t version;
    int32_t rows, cols, elem;
    int32_t eager;  /* ACTIVATE: payload follows */
    int32_t failed; /* ACTIVATE: the version was not produced; nothing follows */
    int64_t bytes;
    /* ACTIVATE: where the sender's bytes are. */
    int32_t on_device; /* in an accelerator's memory */
    int32_t dev_type;  /* weft_device_type_t of that accelerator */
    uint32_t dev_caps; /* WEFT_DEVCAP_* of that accelerator */
    int32_t node;      /* sender's node (ranks of one node share it) */
    int64_t ld;        /* sender copy's leading dimension, elements */
    int64_t offset;    /* byte offset of the copy in the sender's zone */
    int32_t ipc_len;   /* 0: the zone is not exported */
    /* GET: how to send, chosen by the receiver. */
    int32_t mode;       /* weft_transport_t */
    int32_t tag;        /* first tag of the bytes */
    int32_t chunk_cols; /* STAGED: columns a chunk carries */
    unsigned char ipc[WEFT_IPC_HANDLE_MAX];
} msg_hdr_t;

typedef void (*weft_comm_cb_fn)(weft_comm_t *c, void *a, void *b);
typedef struct req_cb {
    weft_comm_cb_fn fn;
    void *a, *b;
} req_cb_t;

/* A rendezvous half waiting for its other half, keyed by (peer, key,
 * version, kind): a RECV task waiting for its activation, an activation
 * waiting for its RECV task, or a SEND task waiting for the GET (or, for
 * ipc, the DONE). */
enum { PEND_RECV_TASK = 0, PEND_ACTIVATION = 1, PEND_SEND = 2, PEND_FETCH = 3 };
typedef struct pending {
    int kind, peer;
    uint64_t key;
    uint32_t version;
    weft_task_t *task;
    msg_hdr_t *act; /* an activation received (+ payload), in the same allocation */
    struct pending *next;
} pending_t;

/* Activations this rank could not keep (no memory), so that their RECV
 * task, arriving later, fails instead of waiting. */
#define WEFT_COMM_LOST 64
typedef struct lost_act {
    int peer, eager;
    uint64_t key;
    uint32_t version;
} lost_act_t;

typedef struct ctrl_slot {
    msg_hdr_t *buf;
    size_t bytes;
} ctrl_slot_t;

/* A device event the engine polls, and what to do when it completes. */
typedef struct dev_wait {
    weft_device_t *dev;
    weft_event_t ev;
    weft_comm_cb_fn fn;
    void *a, *b;
    int *status; /* set to the event's error, if any */
} dev_wait_t;

/* A mapped zone of a peer rank (ipc), kept for the life of the engine. */
typedef struct ipc_map {
    int peer, by; /* peer rank, local device index it is mapped on */
    size_t len;
    unsigned char handle[WEFT_IPC_HANDLE_MAX];
    void *base;
    struct ipc_map *next;
} ipc_map_t;

/* A pinned host buffer of the staged transport, reused by size. */
typedef struct bounce {
    void *ptr;
    size_t bytes;
    weft_device_t *dev; /* the device it serves (its copies are the fast ones) */
    int pinned;
    struct bounce *next;
} bounce_t;

/* One tile transfer in flight (sender or receiver side). */
typedef struct xfer {
    weft_task_t *t;
    weft_data_copy_t *copy; /* sender: the source; receiver: the target */
    int mode, peer, tag;
    int rendezvous; /* counted in ndata_inflight (receiver) */
    int counter;    /* receiver: transport counter the bytes go to (AUTO: host to host) */
    int chunk_cols, nchunks;
    int left; /* parts posted and not over: chunks, device events, a notice */
    bounce_t *bounce;
    weft_device_t *dev; /* device whose streams do the copies */
    uint64_t t0;        /* trace: when the transfer started */
    int status;
    int dev_status;   /* a device event of it failed (set by the engine's poll) */
    int fetch_listed; /* receiver: in the table as PEND_FETCH (an ABORT finds it) */
    int get_sent;     /* receiver: the GET left, the sender's bytes may be coming */
} xfer_t;

/* A SEND/RECV action and the engine's state for it, in one allocation
 * (weft_comm_action_new): the transfer, its table entry and a message
 * buffer for the notice that ends it. */
typedef struct action_block {
    weft_comm_action_t act;
    xfer_t x;
    pending_t p;
    msg_hdr_t notice;
} action_block_t;

static inline action_block_t *weft_comm_block(weft_task_t *t) { return t->action; }

struct weft_comm {
    weft_comm_config_t cfg;
    int rank, nranks, tag_ub, next_tag;
    int *node_of; /* node id of every rank */
    pthread_t thread;
    atomic_int stop;
    atomic_int dump; /* log the open rendezvous on the next turn */
    pthread_mutex_t qlock;
    pthread_cond_t qcond;
    weft_task_t *qhead, *qtail;
    MPI_Request *reqs;
    req_cb_t *cbs;
    int *idx;
    int nreq, req_cap;
    dev_wait_t *waits;
    int nwaits, waits_cap;
    ctrl_slot_t ctrl[WEFT_COMM_NCTRL];
    pending_t *table[WEFT_COMM_BUCKETS];
    int ndata_inflight;
    /* RECVs ready to fetch but over max_requests (or short of device
     * memory for a moment): started by priority. */
    pending_t **throttled;
    int nthrottled, throttled_cap;
    ipc_map_t *maps;
    bounce_t *bounces; /* free bounce buffers */
    /* This rank's exported zones, by device index (len 0: not exported). */
    unsigned char (*zone_handle)[WEFT_IPC_HANDLE_MAX];
    size_t *zone_handle_len;
    int warned_transport;
    lost_act_t lost[WEFT_COMM_LOST];
    int nlost;
    int ctrl_reposts; /* control receives to post again (a post failed) */
    atomic_llong n_act, n_eager, n_get, n_bytes_out, n_bytes_in, n_rejected;
    atomic_llong n_from_dev, n_into_dev, n_staged, n_by_transport[4];
};

/* Posts a send or a receive and records cb(c, a, b) for its completion.
 * Tile-transfer posts count as the fault site comm_post. On failure (no
 * room to track it, an injected fault, an MPI error) nothing is posted and
 * an error status returns; the caller ends the transfer. */
int weft_comm_isend(weft_comm_t *c, const void *buf, int count, MPI_Datatype type, int dest,
                    int tag, weft_comm_cb_fn cb, void *a, void *b);
int weft_comm_irecv(weft_comm_t *c, void *buf, int count, MPI_Datatype type, int src, int tag,
                    weft_comm_cb_fn cb, void *a, void *b);
/* The control-plane receive, not a fault site. */
int weft_comm_irecv_ctrl(weft_comm_t *c, void *buf, int count, weft_comm_cb_fn cb, void *a);
/* Zeroed host memory for the engine (fault site comm_alloc); NULL: none. */
void *weft_comm_alloc(weft_comm_t *c, size_t bytes);
/* Cancels the receives posted for x (cb argument a == x): they complete,
 * cancelled, on the next turns. */
void weft_comm_cancel_recvs(weft_comm_t *c, const void *x);
/* Polls ev of dev on the engine's turns and calls fn(c, a, b) once the
 * work before it is over; a failure is stored in *status first. */
int weft_comm_wait_device(weft_comm_t *c, weft_device_t *dev, weft_event_t ev, weft_comm_cb_fn fn,
                          void *a, void *b, int *status);
int weft_comm_ctrl_start(weft_comm_t *c);
/* Posts again the control receives whose post failed (engine turns). */
void weft_comm_ctrl_repost(weft_comm_t *c);
void weft_comm_ctrl_stop(weft_comm_t *c);
/* Sends m (allocated; freed once sent, or on failure) to dest. */
int weft_comm_send_ctrl(weft_comm_t *c, msg_hdr_t *m, int dest);
/* Sends t's notice buffer (type, failed, tag filled from the arguments) to
 * the peer of t's action and calls cb(c, a, b) once it left, or at once
 * when it could not be posted (logged: the peer is not told). */
void weft_comm_send_notice(weft_comm_t *c, weft_task_t *t, int type, int tag, weft_comm_cb_fn cb,
                           void *a, void *b);
void weft_comm_handle_task(weft_comm_t *c, weft_task_t *t);
int weft_comm_start_throttled(weft_comm_t *c);
void weft_comm_table_clear(weft_comm_t *c);
void weft_comm_table_dump(weft_comm_t *c);
void weft_comm_task_done(weft_comm_t *c, weft_task_t *t, int status);
int weft_comm_next_tags(weft_comm_t *c, int n);
/* Receiver: x enters (1) or leaves (0) the table as a fetch in progress,
 * so that an ABORT from its sender finds it. */
void weft_comm_xfer_listed(weft_comm_t *c, xfer_t *x, int listed);

/* ---- transfer.c: moving the bytes ---------------------------------------- */

/* The transport a receiver picks for a rendezvous activation m landing in
 * a copy on local device `target` (0 = host). */
int weft_xfer_choose(weft_comm_t *c, const msg_hdr_t *m, int target);
/* Receiver: starts the transfer of m into x->copy by x->mode. */
void weft_xfer_recv_start(weft_comm_t *c, xfer_t *x, const msg_hdr_t *m);
/* Sender: answers a GET for the copy in x. */
void weft_xfer_send_start(weft_comm_t *c, xfer_t *x, const msg_hdr_t *get);
/* Copies an eager payload (contiguous) into x->copy, on a device if there. */
int weft_xfer_eager_in(weft_comm_t *c, xfer_t *x, const void *payload);
/* Fills the location fields of an activation for the sender's copy. */
void weft_xfer_describe(weft_comm_t *c, const weft_data_copy_t *cp, msg_hdr_t *m);
/* Both ends: one part of x is over (a chunk, an event, a notice): the
 * last one finishes x. */
void weft_xfer_part_done(weft_comm_t *c, xfer_t *x);
/* A failure after x started: x->status set, the peer told (ABORT from the
 * sender, CANCEL from the receiver, whose own posted receives are
 * cancelled), x ends once its posted parts are over. */
void weft_xfer_fail(weft_comm_t *c, xfer_t *x, int status, const char *what);
/* Both ends: the transfer of x is over (status in x->status). */
void weft_xfer_recv_finished(weft_comm_t *c, xfer_t *x);
void weft_xfer_send_finished(weft_comm_t *c, xfer_t *x);
void weft_xfer_release_all(weft_comm_t *c);

#endif
