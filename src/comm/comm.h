/* The comm engine: one thread per process drives MPI; workers never call
 * MPI. Network sends and receives are tasks of kind SEND/RECV that the
 * dependency machinery releases like any other; once released they are
 * handed here, and the engine completes them when their bytes have moved.
 *
 * Protocol (see docs/ARCHITECTURE.md): the producer's rank sends an
 * activation (key, version, shape); tiles up to comm_eager_limit ride
 * inside it. For larger tiles the consumer allocates the destination, posts
 * the receive and sends a GET naming a tag; the producer then sends the
 * bytes with that tag. */
#ifndef WEFT_COMM_COMM_H
#define WEFT_COMM_COMM_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>

#include "device/device.h"
#include "sched/task.h"

typedef struct weft_comm weft_comm_t;

/* Completes a SEND/RECV task once its transfer is over (engine thread). */
typedef void (*weft_comm_done_fn)(void *arg, weft_task_t *t, int status);

/* Transports for tiles in device memory (comm/transport.h,
 * docs/ARCHITECTURE.md "Communication"). */
typedef enum weft_transport {
    WEFT_TRANSPORT_AUTO = 0,
    WEFT_TRANSPORT_MPI = 1,    /* device pointers handed to MPI */
    WEFT_TRANSPORT_IPC = 2,    /* receiver maps the sender's zone and pulls */
    WEFT_TRANSPORT_STAGED = 3, /* pinned host bounce buffers, in chunks */
    WEFT_TRANSPORT_NCCL = 4,   /* ncclSend/ncclRecv between CUDA devices of two ranks */
    WEFT_TRANSPORT_COUNT = 5
} weft_transport_t;

/* Copies for the engine, made by the layer above (it owns eviction). Both
 * return a copy with one reader taken for the engine; WEFT_AGAIN means
 * "memory is busy now, ask again later": the engine serves every transfer
 * of its rank, so these never wait. Engine thread. */
typedef int (*weft_comm_copy_fn)(void *arg, weft_data_t *d, int device, weft_data_copy_t **out);

/* A copy of a tile's newest version to host memory that the layer above
 * enqueued for a send (weft_comm_pull_fn): the engine polls ev on dev and
 * then ends it (weft_comm_pull_end_fn). src and version are the layer
 * above's. */
typedef struct weft_comm_pull {
    weft_device_t *dev;
    weft_event_t ev;
    weft_data_copy_t *src;
    uint32_t version;
} weft_comm_pull_t;
/* Begins bringing d's newest version to host: WEFT_SUCCESS with *out set
 * (a reader taken) when it is there already, or with *out NULL and p
 * filled when a copy was enqueued; WEFT_AGAIN when the host copy is busy
 * (ask again later); an error otherwise. Never waits. Engine thread. */
typedef int (*weft_comm_pull_fn)(void *arg, weft_data_t *d, weft_comm_pull_t *p,
                                 weft_data_copy_t **out);
/* Ends p once its event is over (status: its error, if any): on success
 * *out is the host copy with a reader taken. Returns status. */
typedef int (*weft_comm_pull_end_fn)(void *arg, weft_data_t *d, weft_comm_pull_t *p, int status,
                                     weft_data_copy_t **out);

typedef struct weft_comm_config {
    MPI_Comm comm;      /* weft's own communicator */
    const int *node_of; /* node id of every rank (its lowest rank, or the rank itself under
                           comm_node_split=rank), found by the caller */
    size_t eager_limit;
    int max_requests; /* data transfers in flight at most */
    /* The engine's core is shared with workers (no core of its own): while
     * *busy (tasks running) is non-zero, an idle engine waits nap_ns
     * between turns, woken at once by a submission, instead of yielding
     * the core until the scheduler's next tick. 0 or busy NULL: yield.
     * On a rank without devices, while its threads have their cores to
     * themselves, each nap that ran out doubles the next, up to nap_max_ns
     * (<= nap_ns: never longer); one where they ran less than 90% of it
     * returns to nap_ns, and naps stay there for a second when they did
     * so over 50 ms of naps in which *ended (host bodies finished) did not
     * move (other processes took the cores; naps.c). */
    const atomic_long *busy, *ended;
    long nap_ns, nap_max_ns;
    int64_t give_up_ns; /* an owed control message is tried this long (owed.c) */
    weft_comm_done_fn done;
    void *done_arg;
    /* Device memory: devices[1..ndevices] of this rank. */
    int ndevices;
    weft_device_t **devices;
    int gpu_aware_send, gpu_aware_recv;  /* 0/1, decided by the caller */
    weft_transport_t transport;          /* AUTO: chosen per transfer */
    int mpi_device_ok;                   /* MPI can read device memory */
    size_t staged_chunk;                 /* bytes a staged chunk carries */
    size_t mpi_piece; /* bytes one MPI operation of the mpi transport moves at most (0: 1 GiB) */
    weft_comm_copy_fn recv_copy;         /* a copy to receive into on a device (0 = host) */
    weft_comm_pull_fn host_pull;         /* the newest version brought to host, */
    weft_comm_pull_end_fn host_pull_end; /* asynchronously */
    /* A pull of RECV task t into device copy c was enqueued (ipc): its
     * consumers may be queued behind it (NULL: not done). */
    void (*landing)(void *arg, struct weft_task *t, weft_data_copy_t *c);
    void *copy_arg;
    struct weft_trace *trace; /* NULL: no trace */
    int trace_track;
    struct weft_fault *fault; /* fault_inject rules (util/fault.h), NULL: none */
} weft_comm_config_t;

/* What a SEND or RECV task carries (t->action). */
typedef struct weft_comm_action {
    int peer;           /* destination of a SEND, source of a RECV */
    uint32_t version;   /* the tile version that moves */
    int device;         /* RECV: device of the consumer (0 = host) */
    int discard;        /* RECV: the version is here already (a graph's version made here
                           and passed back): the rendezvous is met, no byte moves, the
                           data is not touched */
    struct weft_comm_arrival *arrival; /* RECV: the others of its version, or NULL */
    void *xfer;         /* the engine's transfer of the tile (weft_comm_xfer_t) */
} weft_comm_action_t;

/* The RECVs of one version that a graph brings to this rank along several
 * paths (its writer and a forwarder on other ranks: ptg/ptgxfer.c). Each
 * reader waits for the RECV of the path it names; the first of them to
 * start lands the bytes, the others wait for that landing, then meet
 * their senders without bytes (counted as skipped); one whose landing
 * failed leaves the landing to the next. comm/arrival.c. */
typedef struct weft_comm_arrival weft_comm_arrival_t;
/* act (a RECV's, not released yet) joins the arrival of `other`'s, made
 * when other has none. WEFT_ERR_NOMEM when it could not be made. */
int weft_comm_arrival_join(weft_comm_action_t *act, weft_comm_action_t *other);
/* For a RECV dropped without reaching the engine (a graph refused). */
void weft_comm_arrival_leave(weft_comm_action_t *act);

/* A zeroed action with room for the engine's state of its transfer, so
 * that the engine needs no allocation to track it, to end it or to tell
 * the peer it failed. Freed with free(). NULL when out of memory. */
weft_comm_action_t *weft_comm_action_new(void);

typedef struct weft_comm_counters {
    int64_t activations_sent, eager_sent, gets_sent;
    int64_t bytes_sent, bytes_received;
    int64_t rejected; /* activations refused: shape does not match */
    int64_t naps;     /* idle turns waited out while a task ran on the engine's core */
    /* Transfers whose copy was busy (a write-back landing, a task writing
     * it): tried again on later turns instead of waited for. */
    int64_t recv_retries, send_retries;
    int64_t send_pulls; /* sends whose tile came to host by a copy the engine polled */
    int64_t skipped;    /* activations met by a discard RECV: no bytes (comm_action) */
    int64_t tag_waits;  /* receives put off until older transfers gave back their tags */
    /* Where the bytes left from and arrived into, and by which transport. */
    int64_t bytes_sent_from_device, bytes_received_into_device;
    int64_t bytes_staged; /* bytes that went through a host bounce buffer */
    int64_t bytes_by_transport[WEFT_TRANSPORT_COUNT]; /* by weft_transport_t (AUTO: host to host,
                                                         eager included) */
} weft_comm_counters_t;

int weft_comm_create(const weft_comm_config_t *cfg, weft_comm_t **out)
    __attribute__((warn_unused_result));
/* Collective, every rank once after all created their engine (and agreed
 * on it): the transports that need their peers to set up (nccl: its
 * communicators) do it here. A failure here is this rank's; the caller
 * agrees on it with the others. */
int weft_comm_connect(weft_comm_t *c) __attribute__((warn_unused_result));
/* Stops the thread; every rank must have finished its transfers. */
void weft_comm_destroy(weft_comm_t *c);
/* Hands a released SEND/RECV task to the engine (any thread). A SEND with
 * t->cancelled set sends no bytes: its activation tells the receiver that
 * the version was not produced, and the RECV there ends cancelled. */
void weft_comm_submit(weft_comm_t *c, weft_task_t *t);
void weft_comm_counters(weft_comm_t *c, weft_comm_counters_t *out);
/* Whether a SEND of d from this rank may take the rendezvous, ending only
 * once its RECV started (send.c's rule, before the copy it reads is
 * known): d is past comm_eager_limit, or may be sent from a device copy
 * (the activation carries only tiles in host memory). */
int weft_comm_send_may_wait(const weft_comm_t *c, const weft_data_t *d);
/* Asks the engine to log what it waits for (the stall watchdog), at log
 * level `level`. */
void weft_comm_dump(weft_comm_t *c, int level);

#endif
