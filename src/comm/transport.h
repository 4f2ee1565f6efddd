/* The transport interface: how a tile's bytes move between two ranks once
 * the activation and the receiver's copy are there. One const table of
 * operations per transport (transport_mpi.c, transport_ipc.c,
 * transport_staged.c, transport_nccl.c), registered in one list (transport.c), whose order
 * is the order of preference of comm_transport=auto. State lives in
 * weft_comm_transport_t beside the table, statistics in the engine's
 * counters. An operation a transport lacks points to a function returning
 * WEFT_ERR_UNSUPPORTED (weft_comm__tp_*_unsupported), never NULL.
 *
 * Every operation runs on the engine thread. How to add a transport:
 * docs/ARCHITECTURE.md, "Adding a transport". */
#ifndef WEFT_COMM_TRANSPORT_H
#define WEFT_COMM_TRANSPORT_H

#include "comm/comm.h"

struct weft_comm_msg;
struct weft_comm_xfer;

typedef struct weft_comm_transport_ops {
    const char *name;    /* in traces and messages */
    weft_transport_t id; /* comm_transport's value, a GET's mode, the counter index */
    /* At engine start, on every rank alike: makes the transport's state
     * (*state, NULL when it keeps none). A failure fails weft_init. */
    int (*open)(weft_comm_t *c, void **state);
    /* At engine end, every transfer over: frees what open, connect and
     * the transfers left (mappings, buffers kept for reuse). */
    void (*close)(weft_comm_t *c, void *state);
    /* Collective, on the application's thread, once every rank opened its
     * engine (weft_comm_connect): the set-up that needs the peers (nccl:
     * its communicators). Every rank calls it for every transport; no
     * transfer runs yet. A failure is this rank's status. */
    int (*connect)(weft_comm_t *c, void *state);
    /* Each turn of the engine: completes what the transport waits for by
     * itself (nccl: its streams' events, its communicators' errors);
     * returns how many parts it finished. */
    int (*progress)(weft_comm_t *c, void *state);
    /* Sender: adds to activation m what this transport needs to know about
     * the source copy cp (ipc: the zone's handle and the offset). A field
     * left zero means the receiver will not pick this transport. */
    int (*describe)(weft_comm_t *c, void *state, const weft_data_copy_t *cp,
                    struct weft_comm_msg *m);
    /* Receiver: 1 if it can move activation m into a copy on local device
     * `target` (0 = host), else 0. */
    int (*reaches)(weft_comm_t *c, void *state, const struct weft_comm_msg *m, int target);
    /* Receiver: starts moving the bytes of activation m into x->copy.
     * WEFT_SUCCESS: x is in the transport's hands. Each part it posts (a
     * receive, a device event, a notice) is counted in x->left and ends
     * with weft_comm__xfer_part_done; every allocation and post is checked,
     * and a failure goes through weft_comm__xfer_fail, which tells the
     * peer (CANCEL before the GET left) and still returns WEFT_SUCCESS.
     * Negative: nothing posted, nobody told; the engine hands x to the
     * transport of last resort. */
    int (*recv_start)(weft_comm_t *c, void *state, struct weft_comm_xfer *x,
                      const struct weft_comm_msg *m);
    /* Sender: answers GET `get` (tags, chunking) for the copy in x, with
     * the same rules as recv_start (weft_comm__xfer_fail sends ABORT); a
     * negative status fails x. */
    int (*send_start)(weft_comm_t *c, void *state, struct weft_comm_xfer *x,
                      const struct weft_comm_msg *get);
    /* Either side, x over: gives back what x held of the transport's state
     * (staged: its bounce buffer). */
    void (*release)(weft_comm_t *c, void *state, struct weft_comm_xfer *x);
    /* Either side: `peer` gave up its end of this transport's link with
     * this rank (LINK_DOWN; their_sends: the link carried peer's sends),
     * so what this end has queued on it will never complete: it is given
     * up too, its transfers failed. Transports without links ignore it. */
    void (*peer_down)(weft_comm_t *c, void *state, int peer, int their_sends);
} weft_comm_transport_ops_t;

/* A registered transport of one engine: its operations and its state. */
typedef struct weft_comm_transport {
    const weft_comm_transport_ops_t *ops; /* NULL: not in this build */
    void *state;
} weft_comm_transport_t;

extern const weft_comm_transport_ops_t weft_comm__mpi_ops;
extern const weft_comm_transport_ops_t weft_comm__ipc_ops;
extern const weft_comm_transport_ops_t weft_comm__staged_ops;
extern const weft_comm_transport_ops_t weft_comm__nccl_ops;

/* For operations a transport does not have, and the state it does not
 * keep. */
int weft_comm__tp_open_stateless(weft_comm_t *c, void **state);
void weft_comm__tp_close_stateless(weft_comm_t *c, void *state);
int weft_comm__tp_connect_nothing(weft_comm_t *c, void *state);
int weft_comm__tp_progress_nothing(weft_comm_t *c, void *state);
int weft_comm__tp_describe_unsupported(weft_comm_t *c, void *state, const weft_data_copy_t *cp,
                                       struct weft_comm_msg *m);
int weft_comm__tp_send_unsupported(weft_comm_t *c, void *state, struct weft_comm_xfer *x,
                                   const struct weft_comm_msg *get);
void weft_comm__tp_release_nothing(weft_comm_t *c, void *state, struct weft_comm_xfer *x);
void weft_comm__tp_peer_down_nothing(weft_comm_t *c, void *state, int peer, int their_sends);

/* Opens every registered transport (engine start); on failure those
 * opened are closed again. */
int weft_comm__transports_open(weft_comm_t *c) __attribute__((warn_unused_result));
void weft_comm__transports_close(weft_comm_t *c);
/* weft_comm_connect's work: every registered transport's connect. */
int weft_comm__transports_connect(weft_comm_t *c) __attribute__((warn_unused_result));
/* An engine turn's poll of every transport; how many parts finished. */
int weft_comm__transports_progress(weft_comm_t *c);
/* The transport a receiver picks for rendezvous activation m landing in
 * a copy on local device `target` (0 = host): the one comm_transport asks
 * for if it reaches, else the first of the list that does. */
int weft_comm__transport_choose(weft_comm_t *c, const struct weft_comm_msg *m, int target);
/* Fills the location fields of an activation for the sender's copy. */
void weft_comm__transport_describe(weft_comm_t *c, const weft_data_copy_t *cp,
                                   struct weft_comm_msg *m);
/* Receiver: starts the transfer of m into x->copy by x->mode. */
void weft_comm__transport_recv_start(weft_comm_t *c, struct weft_comm_xfer *x,
                                     const struct weft_comm_msg *m);
/* Sender: answers a GET for the copy in x by the transport it names. */
void weft_comm__transport_send_start(weft_comm_t *c, struct weft_comm_xfer *x,
                                     const struct weft_comm_msg *get);
/* x is over: its transport takes back what x held. */
void weft_comm__transport_release(weft_comm_t *c, struct weft_comm_xfer *x);
/* Transport `id`'s peer_down; WEFT_ERR_UNSUPPORTED when this engine has
 * no such transport. */
int weft_comm__transport_peer_down(weft_comm_t *c, int id, int peer, int their_sends);
/* "host" for WEFT_TRANSPORT_AUTO (host to host), else the transport's name. */
const char *weft_comm__transport_name(const weft_comm_t *c, int id);

#endif
