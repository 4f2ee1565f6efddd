/* State of the comm engine and the names its files share; never included
 * outside src/comm/. Engine thread only unless noted.
 *
 * Names: weft_comm_ for what other layers call (comm.h); weft_comm__ for
 * functions only the files of comm/ call; the types here carry weft_comm_.
 * "xfer" means one thing: a tile transfer in flight between this rank and
 * a peer, on either side (weft_comm_xfer_t and the weft_comm__xfer_
 * functions that drive it). */
#ifndef WEFT_COMM_COMM_INTERNAL_H
#define WEFT_COMM_COMM_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "comm/comm.h"
#include "comm/tags.h"
#include "trace/trace.h"
#include "comm/transport.h"
#include "util/vec.h"

#define WEFT_COMM_CTRL_TAG 1
#define WEFT_COMM_FIRST_DATA_TAG 16
#define WEFT_COMM_NCTRL 16 /* control receives kept posted */
#define WEFT_COMM_BUCKETS 4096

/* CANCEL: the receiver will not fetch (its receive failed); ABORT: the
 * sender failed after a GET, no more bytes will come; SKIP: the receiver
 * has the version from another rank, the send is over with no bytes;
 * LINK_DOWN: the sender gave up its end of a transport's link with this
 * rank (`mode` the transport, `tag` 1 when the link carried the sender's
 * sends, 0 its receives), whose operations queued at this end would
 * otherwise wait for ever for the other end's. */
enum {
    WEFT_COMM_MSG_ACTIVATE = 1,
    WEFT_COMM_MSG_GET = 2,
    WEFT_COMM_MSG_DONE = 3,
    WEFT_COMM_MSG_REJECT = 4,
    WEFT_COMM_MSG_CANCEL = 5,
    WEFT_COMM_MSG_ABORT = 6,
    WEFT_COMM_MSG_SKIP = 7,
    WEFT_COMM_MSG_LINK_DOWN = 8
};

/* A control message; an eager activation's payload follows it. */
typedef struct weft_comm_msg {
    int32_t type;
    int32_t src;
    uint64_t key;
    uint32_t version;
    int32_t rows, cols, elem;
    int32_t eager;  /* ACTIVATE: payload follows */
    int32_t failed; /* ACTIVATE: the version was not produced; nothing follows.
                       DONE: the pull failed (the receiver says it) */
    int64_t bytes;
    /* ACTIVATE: where the sender's bytes are. */
    int32_t on_device; /* in an accelerator's memory (GET: the receiver's copy is) */
    int32_t dev_type;  /* weft_device_type_t of that accelerator */
    uint32_t dev_caps; /* WEFT_DEVCAP_* of that accelerator */
    int32_t node;      /* sender's node (ranks of one node share it) */
    int64_t ld;        /* sender copy's leading dimension, elements */
    int64_t offset;    /* byte offset of the copy in the sender's zone */
    int32_t ipc_len;   /* 0: the zone is not exported */
    int32_t nccl;      /* 1: the copy is on the device of the sender's nccl communicators */
    /* GET: how to send, chosen by the receiver. */
    int32_t mode;       /* weft_transport_t */
    int32_t tag;        /* first tag of the bytes; nccl: the transfer's number in the
                           order of the pair's communicator */
    int32_t chunk_cols; /* STAGED: columns a chunk carries */
    unsigned char ipc[WEFT_IPC_HANDLE_MAX];
} weft_comm_msg_t;

typedef void (*weft_comm_cb_fn)(weft_comm_t *c, void *a, void *b);
typedef struct weft_comm_req_cb {
    weft_comm_cb_fn fn;
    void *a, *b;
    int send; /* an MPI_Isend (counted in nsends) */
} weft_comm_req_cb_t;

/* A control message the peer waits for whose post failed: posted again,
 * later and later, until it goes (comm/owed.c). */
typedef struct weft_comm_owed {
    const void *buf;
    int bytes, dest, tries;
    weft_comm_req_cb_t cb;
    int64_t first_ns, next_ns, wait_ns;
    char what[72]; /* "the DONE of data K vV", for the lines */
} weft_comm_owed_t;

/* A rendezvous half waiting for its other half, keyed by (peer, key,
 * version, kind): a RECV task waiting for its activation, an activation
 * waiting for its RECV task, a SEND task waiting for the GET (or, for ipc,
 * the DONE), or a receive whose GET left (an ABORT finds it). */
enum {
    WEFT_COMM_PEND_RECV_TASK = 0,
    WEFT_COMM_PEND_ACTIVATION = 1,
    WEFT_COMM_PEND_SEND = 2,
    WEFT_COMM_PEND_FETCH = 3,
    WEFT_COMM_PEND_KINDS
};
typedef struct weft_comm_pending {
    int kind, peer;
    uint64_t key;
    uint32_t version;
    weft_task_t *task;
    weft_comm_msg_t *act; /* an activation received (+ payload), in the same allocation */
    int put_off;          /* its transfer was put off once (copy busy): counted */
    int tag_wait;         /* it waited once for data tags (tags.h): counted */
    struct weft_comm_pending *next;
} weft_comm_pending_t;

/* Activations this rank could not keep (no memory), so that their RECV
 * task, arriving later, fails instead of waiting: the first
 * WEFT_COMM_LOST in the engine's own room, the rest on the heap. */
#define WEFT_COMM_LOST 64
typedef struct weft_comm_lost {
    int peer, eager;
    uint64_t key;
    uint32_t version;
} weft_comm_lost_t;

/* The engine's naps while a worker computes on its core (naps.c). */
typedef struct weft_comm_naps {
    long base_ns, max_ns;      /* comm_nap_us, comm_nap_max_us (<= base_ns: never grow) */
    long next_ns;              /* the next nap's length (base_ns at first) */
    int64_t short_until;       /* naps stay at base_ns until then (weft_clock_ns) */
    int64_t win_wall, win_ran; /* the window's naps: their length, the rank's CPU time in them */
    long win_n;                /* and how many */
} weft_comm_naps_t;

typedef struct weft_comm_ctrl_slot {
    weft_comm_msg_t *buf;
    size_t bytes;
} weft_comm_ctrl_slot_t;

/* A device event the engine polls, and what to do when it completes. */
typedef struct weft_comm_dev_wait {
    weft_device_t *dev;
    weft_event_t ev;
    weft_comm_cb_fn fn;
    void *a, *b;
    int *status; /* set to the event's error, if any */
} weft_comm_dev_wait_t;

/* One tile transfer in flight (sender or receiver side). */
typedef struct weft_comm_xfer {
    weft_task_t *t;
    weft_data_copy_t *copy; /* sender: the source; receiver: the target */
    int mode, peer, tag;    /* mode: the transport moving it (weft_transport_t) */
    int tags_held; /* receiver: tags taken (tags.h) from tags_v on, given back at its end */
    int64_t tags_v;
    int rendezvous;         /* counted in ndata_inflight (receiver) */
    int counter;            /* transport counter the bytes go to (AUTO: host to host) */
    int chunk_cols, nchunks;
    int left; /* parts posted and not over: chunks, device events, a notice */
    struct weft_comm_bounce *bounce; /* staged: the host buffer it holds */
    weft_device_t *dev;              /* device whose streams do the copies */
    uint64_t t0;                     /* trace: when the transfer started */
    int status;
    int dev_status;   /* a device event of it failed (set by the engine's poll) */
    int fetch_listed; /* receiver: in the table as PEND_FETCH (an ABORT finds it) */
    int get_sent;     /* receiver: the GET left, the sender's bytes may be coming */
    int skipped;      /* sender: the receiver had the version (SKIP), no byte moved */
    int pull_failed;  /* sender: DONE said the receiver's ipc pull failed */
} weft_comm_xfer_t;

/* A SEND/RECV action and the engine's state for it, in one allocation
 * (weft_comm_action_new): the transfer, its table entry and a message
 * buffer for the notice that ends it. */
typedef struct weft_comm_block {
    weft_comm_action_t act;
    weft_comm_xfer_t x;
    weft_comm_pending_t p;
    weft_comm_msg_t notice;
    weft_comm_pull_t pull; /* sender: its tile on the way to host memory (send.c) */
} weft_comm_block_t;

static inline weft_comm_block_t *weft_comm__block(weft_task_t *t) { return t->action; }

struct weft_comm {
    weft_comm_config_t cfg;
    weft_trace_lanes_t lanes; /* the comm track's, for transfers in flight at once */
    int rank, nranks;
    weft_comm_tags_t tags; /* the data tags of this rank's receives */
    int *node_of; /* node id of every rank */
    pthread_t thread;
    atomic_int stop;
    atomic_int dump; /* log the open rendezvous on the next turn, at level dump - 1 */
    pthread_mutex_t qlock;
    pthread_cond_t qcond;
    weft_task_t *qhead, *qtail;
    /* Requests in flight: reqs (MPI_Request, contiguous for MPI_Testsome)
     * and cbs (weft_comm_req_cb_t) have the same length; idx (int) only
     * the room for MPI_Testsome's indices. */
    weft_vec_t reqs, cbs, idx;
    weft_vec_t waits; /* weft_comm_dev_wait_t */
    weft_comm_ctrl_slot_t ctrl[WEFT_COMM_NCTRL];
    weft_comm_pending_t *table[WEFT_COMM_BUCKETS];
    int npend[WEFT_COMM_PEND_KINDS]; /* entries of the table, by kind */
    int ndata_inflight;
    int nsends;  /* MPI_Isends not yet seen complete */
    int nparked; /* RECVs waiting for another RECV of their version to land (arrival.c) */
    /* RECVs ready to fetch but over max_requests (or short of device
     * memory for a moment): started by priority. */
    weft_vec_t throttled; /* weft_comm_pending_t * */
    /* SENDs whose tile must come to a host copy that is busy now (a
     * write-back landing, a task writing it): tried again each turn. */
    weft_vec_t deferred; /* weft_task_t * */
    /* The transports of this build, by weft_transport_t (ops NULL: not
     * registered), each with its own state. */
    weft_comm_transport_t tp[WEFT_TRANSPORT_COUNT];
    int warned_transport; /* the reasons a comm_transport was replaced, said once each */
    weft_comm_lost_t lost_room[WEFT_COMM_LOST];
    weft_vec_t lost;         /* weft_comm_lost_t, in lost_room first */
    int ctrl_reposts;        /* control receives to post again (a post failed) */
    weft_vec_t owed;         /* weft_comm_owed_t: control sends to post again */
    int tp_busy;             /* parts the transports wait for by themselves (nccl operations):
                                the engine does not sleep while there are some */
    weft_comm_naps_t naps;   /* the next nap's length (nap_while_busy) */
    atomic_llong n_act, n_eager, n_get, n_bytes_out, n_bytes_in, n_rejected, n_naps;
    atomic_llong n_from_dev, n_into_dev, n_staged, n_by_transport[WEFT_TRANSPORT_COUNT];
    atomic_llong n_recv_retries, n_send_retries, n_send_pulls, n_skipped, n_tag_waits;
};

/* Local device `index` (1..ndevices); NULL for the host (0). */
static inline weft_device_t *weft_comm__device(const weft_comm_t *c, int index)
{
    return index > 0 && index <= c->cfg.ndevices ? c->cfg.devices[index] : NULL;
}

/* Whether d may leave or land in device memory here: not when it has a
 * stage function on this rank (weft_data_set_stage). Its device copies are
 * in a layout only those functions know, and the peer's copies may be in
 * another, so such a data travels in its host layout, through host copies
 * on both ends (the pull home and the receiver's stage-in call them). Each
 * end asks its own handle; the activation says where the bytes are. */
static inline int weft_comm__device_direct(const weft_data_t *d)
{
    return !d->stage_in && !d->stage_out;
}

/* ---- comm.c: MPI requests, device events, allocations -------------------- */

/* Posts a send or a receive and records cb(c, a, b) for its completion.
 * Tile-transfer posts count as the fault site comm_post. On failure (no
 * room to track it, an injected fault, an MPI error) nothing is posted and
 * an error status returns; the caller ends the transfer. */
int weft_comm__isend(weft_comm_t *c, const void *buf, int count, MPI_Datatype type, int dest,
                     int tag, weft_comm_cb_fn cb, void *a, void *b);
int weft_comm__irecv(weft_comm_t *c, void *buf, int count, MPI_Datatype type, int src, int tag,
                     weft_comm_cb_fn cb, void *a, void *b);
/* A control message the peer waits for (bytes of buf, to dest; what names
 * it in the lines): when its post fails (a warning), it is owed and posted
 * again each turn whose time has come, the delays doubling from 100 us to
 * 100 ms, until it goes (a warning counts the tries) or 10 s have passed:
 * then the peer cannot be told it, and would wait for ever, so the run
 * ends (MPI_Abort) after an error line. cb runs once it went. An error
 * status only without memory to keep it owed. Before, a second failed
 * post left the peer waiting for ever. */
int weft_comm__isend_ctrl_owed(weft_comm_t *c, const void *buf, int bytes, int dest,
                               const char *what, weft_comm_cb_fn cb, void *a, void *b);
/* Posts the owed control messages whose time has come, in order per
 * peer; 1 when one went. */
int weft_comm__owed_progress(weft_comm_t *c);
/* Whether a control message is owed to dest (weft_comm__isend then queues
 * a control message behind it), and the queueing: tried is how many posts
 * failed already (0: not tried, posted at its turn). */
int weft_comm__owed_to(const weft_comm_t *c, int dest);
int weft_comm__owe(weft_comm_t *c, const void *buf, int bytes, int dest, const char *what,
                   weft_comm_req_cb_t on, int tried);
/* comm.c's MPI post of a send, for owed.c: level as its lines' level. */
int weft_comm__post_send(weft_comm_t *c, const void *buf, int count, MPI_Datatype type, int dest,
                         int tag, weft_comm_req_cb_t cb, int level);
/* The control-plane receive, not a fault site. */
int weft_comm__irecv_ctrl(weft_comm_t *c, void *buf, int count, weft_comm_cb_fn cb, void *a);
/* Zeroed host memory for the engine (fault site comm_alloc); NULL: none. */
void *weft_comm__alloc(weft_comm_t *c, size_t bytes);
/* The same for memory whose caller does without it (`instead` says how):
 * an injected failure is a warning, since the run goes on unharmed. */
void *weft_comm__alloc_spare(weft_comm_t *c, size_t bytes, const char *instead);
/* Cancels the receives posted for x (cb argument a == x): they complete,
 * cancelled, on the next turns. */
void weft_comm__cancel_recvs(weft_comm_t *c, const void *x);
/* Polls ev of dev on the engine's turns and calls fn(c, a, b) once the
 * work before it is over; a failure is stored in *status first. */
int weft_comm__wait_device(weft_comm_t *c, weft_device_t *dev, weft_event_t ev, weft_comm_cb_fn fn,
                           void *a, void *b, int *status);

/* ---- table.c: the rendezvous table ----------------------------------------- */

/* Takes out the entry of (kind, peer, key, v); NULL when there is none. */
weft_comm_pending_t *weft_comm__table_take(weft_comm_t *c, int kind, int peer, uint64_t key,
                                           uint32_t v);
/* Enters p (the caller's storage) under its key. */
void weft_comm__table_put(weft_comm_t *c, weft_comm_pending_t *p, int kind, int peer, uint64_t key,
                          uint32_t v);
/* Removes p itself (a transfer that ends before its message came). */
void weft_comm__table_remove(weft_comm_t *c, weft_comm_pending_t *p);
void weft_comm__table_clear(weft_comm_t *c);
/* 1 when an entry waits for a message from its peer (all kinds but an
 * activation waiting for its local RECV task, which a submission brings). */
int weft_comm__expects_peer(const weft_comm_t *c);
void weft_comm__table_dump(weft_comm_t *c, int level);
/* Receiver: x enters (1) or leaves (0) the table as a fetch in progress,
 * so that an ABORT from its sender finds it. */
void weft_comm__fetch_listed(weft_comm_t *c, weft_comm_xfer_t *x, int listed);

/* ---- protocol.c: control messages and the two halves of a rendezvous -------- */

int weft_comm__ctrl_start(weft_comm_t *c);
/* Posts again the control receives whose post failed (engine turns). */
void weft_comm__ctrl_repost(weft_comm_t *c);
void weft_comm__ctrl_stop(weft_comm_t *c);
/* A request callback that frees a (a message buffer once sent). */
void weft_comm__free_msg(weft_comm_t *c, void *a, void *b);
/* Sends m (allocated; freed once sent, or on failure) to dest. */
int weft_comm__send_ctrl(weft_comm_t *c, weft_comm_msg_t *m, int dest);
/* Bytes of m on the wire: the header, and an eager activation's payload. */
size_t weft_comm__msg_bytes(const weft_comm_msg_t *m);
/* Tells peer that this rank gave up its end of transport `mode`'s link with
 * it (LINK_DOWN). */
void weft_comm__send_link_down(weft_comm_t *c, int peer, int mode, int my_sends);
/* Sends t's notice buffer (type, failed, tag filled from the arguments) to
 * the peer of t's action and calls cb(c, a, b) once it left, or at once
 * when it could not be posted (logged: the peer is not told). */
void weft_comm__send_notice(weft_comm_t *c, weft_task_t *t, int type, int failed, int tag,
                            weft_comm_cb_fn cb, void *a, void *b);
void weft_comm__handle_task(weft_comm_t *c, weft_task_t *t);
/* Retries the receives that had to wait (over max_requests, memory busy),
 * one try each; 1 when one started. */
int weft_comm__start_throttled(weft_comm_t *c);
/* The end of a SEND or RECV task, status its outcome. */
void weft_comm__task_done(weft_comm_t *c, weft_task_t *t, int status);
int weft_comm__xfer_take_tags(weft_comm_t *c, weft_comm_xfer_t *x, int n);
/* A nap of `wall` ns ran out at `now`; the rank's threads ran `ran` ns of
 * CPU meanwhile, and a host body ended in it or not: sets n->next_ns. */
void weft_comm__nap_ran_out(weft_comm_naps_t *n, int64_t now, int64_t wall, int64_t ran,
                            int body_ended);
/* Both halves of a rendezvous are here (in->task, in->act): the receive
 * starts. 1: put off (in on the throttled list); else in is freed, now or
 * once its bytes landed, or kept by the arrival it waits on. */
int weft_comm__start_recv(weft_comm_t *c, weft_comm_pending_t *in);

/* ---- arrival.c: a version brought here along several paths ------------------ */

enum { WEFT_ARRIVAL_LAND, WEFT_ARRIVAL_SKIP, WEFT_ARRIVAL_PARKED };
/* What the receive in does: land the bytes, skip them (its version
 * landed), or wait for another member's landing (parked: in is kept). */
int weft_comm__arrival_admit(weft_comm_t *c, weft_comm_pending_t *in);
/* Whether another member of t's arrival landed the version. */
int weft_comm__arrival_landed(const weft_task_t *t);
/* t's arrival (NULL: none) and whether t is the member landing it. */
weft_comm_arrival_t *weft_comm__arrival_of(const weft_task_t *t, int *lander);
/* A member of a ended with status (after its task's end): the lander's
 * end lets the parked members go on. */
void weft_comm__arrival_ended(weft_comm_t *c, weft_comm_arrival_t *a, int lander, int status);

/* ---- send.c: the sending half ------------------------------------------------ */

/* A released SEND: finds its copy (polling a pull to host memory, or
 * deferred while the host copy is busy) and announces the tile. */
void weft_comm__handle_send(weft_comm_t *c, weft_task_t *t);
/* Tries the deferred sends again, one try each; 1 when one went on. */
int weft_comm__start_deferred(weft_comm_t *c);
/* A callback that ends task a with status (intptr_t)b. */
void weft_comm__task_ends(weft_comm_t *c, void *a, void *b);

/* ---- xfer.c: the life of a transfer, whatever moves its bytes --------------- */

/* Receiver: the GET naming the transport and the tags the bytes come
 * with; from then on the sender sends. A failure fails x. */
void weft_comm__xfer_send_get(weft_comm_t *c, weft_comm_xfer_t *x, int mode, int tag,
                              int chunk_cols);
/* A device copy the engine enqueues itself (an ipc pull, a staged chunk,
 * an eager landing on a device): `cols` columns of d's rows (src on
 * device src_dev of rank src_rank, -1 for this rank), through the
 * fault site device_copy as the device path's copies are, so that tests
 * reach the engine's failure paths too. An injected failure is logged at
 * `level`: a warning where the caller stages the tile instead; an error
 * goes into the cause of x's task, so that the failure line of every rank
 * says why the transfer failed. */
int weft_comm__device_copy(weft_comm_t *c, int level, weft_device_t *by, int stream,
                           weft_region_t dst, int dst_dev, weft_region_t src, int src_dev,
                           int src_rank, weft_comm_xfer_t *x, int cols)
    __attribute__((warn_unused_result));
/* Copies the eager payload of activation in (contiguous) into x->copy:
 * WEFT_SUCCESS or an error when done here (host memory, or a failed
 * enqueue; the caller frees in); WEFT_AGAIN when the copy goes to a device
 * and is polled: x then ends by itself once it landed, and in is freed. */
int weft_comm__xfer_land_eager(weft_comm_t *c, weft_comm_xfer_t *x, weft_comm_pending_t *in);
/* Both ends: one part of x is over (a chunk, an event, a notice): the
 * last one finishes x. */
void weft_comm__xfer_part_done(weft_comm_t *c, weft_comm_xfer_t *x);
/* weft_comm__xfer_part_done as a completion callback (a: the transfer),
 * for a part that needs nothing more at its end. */
void weft_comm__part_over(weft_comm_t *c, void *a, void *b);
/* The columns a message of a tile of `cols` columns carries: step, or
 * more when the MPI's tags are fewer (its tag_ub may be as low as 32767)
 * than the tile's messages: a tag a message, weft_comm__tags_most at most
 * (tags.h). The staged transport's chunks and the mpi transport's pieces
 * alike. */
int weft_comm__cols_within_tags(const weft_comm_t *c, int cols, int step);
/* A failure after x started: x->status set, the peer told (ABORT from the
 * sender, CANCEL from the receiver, whose own posted receives are
 * cancelled), x ends once its posted parts are over. */
void weft_comm__xfer_fail(weft_comm_t *c, weft_comm_xfer_t *x, int status, const char *what);
/* Both ends: the transfer of x is over (status in x->status). */
void weft_comm__xfer_recv_finished(weft_comm_t *c, weft_comm_xfer_t *x);
void weft_comm__xfer_send_finished(weft_comm_t *c, weft_comm_xfer_t *x);
/* n columns of a copy with leading dimension ld, as one MPI datatype. */
int weft_comm__cols_type(const weft_data_t *d, int64_t ld, int n, MPI_Datatype *out);
/* WEFT_SUCCESS when a column of d fits an MPI count of bytes, else logged
 * and WEFT_ERR_UNSUPPORTED. */
int weft_comm__col_fits(const weft_data_t *d);

/* Columns a piece of d when the mpi transport moves it: at most
 * comm_mpi_piece bytes (at least a column), each piece its own message on
 * its own tag. MPI counts are int, and Open MPI 4.1's shared-memory path
 * cut a message of 2 GiB or more to 32 bits and crashed: a strided type did
 * not help, the bytes are what count. The same on both ends: from the
 * tile's shape and a parameter equal on every rank. */
int weft_comm__piece_cols(const weft_comm_t *c, const weft_data_t *d);
/* Columns first..first+n-1 of x's copy by one MPI operation on tag (recv:
 * a receive, else a send) with a datatype of its own, freed when it
 * completes; counted in x->left and ended by weft_comm__xfer_part_done. */
int weft_comm__post_cols(weft_comm_t *c, weft_comm_xfer_t *x, int first, int n, int recv, int tag);

static inline char *weft_comm__col_ptr(const weft_data_t *d, void *base, int64_t ld, int j)
{
    return (char *)base + (size_t)j * (size_t)ld * d->elem;
}

#endif
